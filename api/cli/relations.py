"""``argweb train|evaluate relations`` and ``argweb predict aif|sciarg``: the argument relation models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from api.cli.options import (
    CorpusOpt,
    CvEncoder,
    DialogueOpt,
    JsonFlag,
    PairsIn,
    PairsOut,
    WriteFlag,
    print_cv,
    show,
    train_command,
)
from api.cli_common import REPORTER, console, group, settings
from gnn.relations.task import FORMAT_OBJECTIVE, GRAPH_OBJECTIVE
from ontology.progress import stages

# Unlike the other models, a relations model trained into the cache wins over the shipped one.
RelationsModelDir = Annotated[
    Path | None,
    typer.Option(
        "--model", help="Model directory (default: the one trained into <cache>/models, else the shipped one)."
    ),
]


def register(app: typer.Typer) -> None:
    """Add the relation commands to the ``train``, ``evaluate`` and ``predict`` groups."""
    data_help = "AIF maps, Sci-Arg .ann or M-Arg .csv files/folders (repeatable)."
    group(app, "train", "Train the models.").command("relations")(train_command(train_relations, data_help, "quick", 0))
    group(app, "evaluate", "Evaluate trained models.").command("relations")(evaluate_relations)
    predict = group(app, "predict", "Predict relations and write them in the corpus' own format.")
    predict.command("aif")(predict_aif)
    predict.command("sciarg")(predict_sciarg)
    predict.command("relations")(predict_relations)


def train_relations(data: list[Path] | None, out: Path | None, profile: str, seed: int, encoder: Path | None) -> None:
    """Train the relation classifier (a sub-model per corpus family found in --data) and write its model card.

    The quick profile reads the texts as LSA vectors, the full one through the MiniLM encoder (or
    the one --encoder names).
    """
    from api.services.corpora import corpora_root
    from api.services.relations import train

    s = settings()
    root = corpora_root(s)
    paths = data or [root / "dialam-2024" / "my_train", root / "sciarg", root / "m-arg"]
    found = [p for p in paths if p.exists()] or paths
    with stages(REPORTER) as progress:
        card = train(
            s, found, out, profile=profile, seed=seed, encoder_dir=encoder, reporter=REPORTER, progress=progress
        )
    console.print(f"relations model written: {out or s.models_dir / 'relations'} ({card.training_seconds} s)")
    typer.echo(json.dumps(card.metrics, indent=2, sort_keys=True))


def _print_eval(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"relations model {result['model']} (v{result['version']})")
    for col in ("corpus", "model", "measure", "F1", "P", "R"):
        table.add_column(col)
    if "qt30" in result:
        q = result["qt30"]
        for name in _tuned(q):
            for kind in ("general", "focused"):
                v = q[name]["official_style"][kind]
                table.add_row("QT30", f"GNN ({name})", kind, f"{v['f1']:.4f}", f"{v['p']:.4f}", f"{v['r']:.4f}")
            table.add_row(
                "QT30", f"GNN ({name})", "macro-F1 RA/CA/MA", f"{q[name]['relations']['macro_f1']:.4f}", "", ""
            )
        base = q["baseline_tfidf_lr"]
        if isinstance(base, dict):
            for name in _tuned(base):
                for kind in ("general", "focused"):
                    v = base[name]["official_style"][kind]
                    table.add_row(
                        "QT30", f"TF-IDF+LR ({name})", kind, f"{v['f1']:.4f}", f"{v['p']:.4f}", f"{v['r']:.4f}"
                    )
                table.add_row(
                    "QT30",
                    f"TF-IDF+LR ({name})",
                    "macro-F1 RA/CA/MA",
                    f"{base[name]['relations']['macro_f1']:.4f}",
                    "",
                    "",
                )
    if "sciarg" in result:
        r = result["sciarg"]["R"]["micro"]
        table.add_row("Sci-Arg", "GNN", "R (micro)", f"{r['f1']:.4f}", f"{r['p']:.4f}", f"{r['r']:.4f}")
        base = result["sciarg"]["baseline_tfidf_lr"]
        if isinstance(base, dict):
            b = base["R"]["micro"]
            table.add_row("Sci-Arg", "TF-IDF+LR", "R (micro)", f"{b['f1']:.4f}", f"{b['p']:.4f}", f"{b['r']:.4f}")
            table.add_row("Sci-Arg", "TF-IDF+LR", "macro-F1", f"{base['relations']['macro_f1']:.4f}", "", "")
    if "marg" in result:
        for obj, t in result["marg"].get("qt30_transfer", {}).items():
            model = f"QT30 GNN, no M-Arg training ({obj})"
            table.add_row("M-Arg", model, "macro-F1 (gold pairs)", f"{t['macro_f1']:.4f}", "", "")
            table.add_row("M-Arg", model, "macro-F1 support/attack", f"{t['support_attack_f1']:.4f}", "", "")
    Console().print(table)
    if "qt30" in result:
        _print_qt30_checks(result["qt30"])


def _tuned(section: dict[str, Any]) -> list[str]:
    """The ``tuned_<objective>`` keys of a QT30 section, in the order of the objectives."""
    from gnn.relations.qt30_task import OBJECTIVES

    return [f"tuned_{obj}" for obj in OBJECTIVES if f"tuned_{obj}" in section]


def _print_qt30_checks(q: dict[str, Any]) -> None:
    """Predicted against gold per relation type, and the scores on the maps written other ways."""
    from rich.console import Console
    from rich.table import Table

    tuned = _tuned(q)
    counts = Table(title=f"QT30: predicted against gold on the {q['maps']} evaluated maps")
    counts.add_column("type")
    counts.add_column("gold")
    for name in tuned:
        objective = name.removeprefix("tuned_")
        counts.add_column(f"predicted ({objective})")
        counts.add_column(f"recall ({objective})")
    per_label = [q[name]["relations"]["per_label"] for name in tuned]
    for label, g in per_label[0].items():
        row = [c for rows in per_label for c in (str(rows[label]["predicted"]), f"{rows[label]['r']:.3f}")]
        counts.add_row(label, str(g["gold"]), *row)
    Console().print(counts)
    if "variants" not in q:
        return
    table = Table(
        title=f"QT30: the same maps written other valid ways (largest change {q['variants']['max_change']:.4f})"
    )
    table.add_column("written")
    for name in tuned:
        for kind in ("general", "focused"):
            table.add_column(f"{kind} F1 ({name.removeprefix('tuned_')})")

    def cells(row: dict[str, Any]) -> list[str]:
        return [f"{row[name][kind]:.4f}" for name in tuned for kind in ("general", "focused")]

    plain = {name: {k: q[name]["official_style"][k]["f1"] for k in ("general", "focused")} for name in tuned}
    table.add_row("as given", *cells(plain))
    for name, row in q["variants"]["maps"].items():
        table.add_row(name, *cells(row))
    Console().print(table)


def evaluate_relations(
    data: Annotated[list[Path], typer.Option("--data", help="Gold data files/folders (repeatable).")],
    model: Annotated[Path | None, typer.Option("--model", help="Model directory (not with --cv).")] = None,
    as_json: JsonFlag = False,
    variants: Annotated[
        bool, typer.Option("--variants/--no-variants", help="Also score the QT30 maps written other valid ways.")
    ] = True,
    cv: Annotated[
        int | None,
        typer.Option(
            "--cv",
            min=2,
            help="Train and score K fold models: QT30 maps grouped by episode, Sci-Arg papers by paper.",
        ),
    ] = None,
    profile: Annotated[str, typer.Option("--profile", help="Profile of the fold models (with --cv).")] = "full",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the folds and the fold models (with --cv).")] = 0,
    end_to_end: Annotated[
        bool,
        typer.Option(
            "--end-to-end",
            help="With --cv on Sci-Arg: each fold also trains the component tagger and scores the whole pipeline.",
        ),
    ] = False,
    encoder: CvEncoder = None,
) -> None:
    """Score a relations model (with a TF-IDF + LR baseline trained in the same run), or cross-validate one.

    With --cv K no model is read: K models are trained, each scored on the fold of episodes it
    never saw, and the out-of-fold means and standard deviations are printed with their time.
    """
    from api.services.relations import cross_validate, evaluate
    from ontology.errors import ApiError

    if cv is not None:
        found = cross_validate(
            settings(),
            data,
            cv,
            profile=profile,
            seed=seed,
            end_to_end=end_to_end,
            encoder_dir=encoder,
            reporter=REPORTER,
        )
        show(found.document(), as_json, _print_cv)
        return
    if end_to_end:
        raise ApiError("--end-to-end goes with --cv K (one model end to end: argweb predict sciarg --components)")
    if model is None:
        raise ApiError("evaluate relations needs --model DIR (or --cv K to cross-validate)")
    result = evaluate(settings(), model, data, variants=variants, reporter=REPORTER)
    show(result, as_json, _print_eval)


def _print_cv(result: dict[str, Any]) -> None:
    if "qt30" in result:
        q = result["qt30"]
        print_cv(f"QT30, {q['items']} gold relations in {q['groups']} episodes, {q['profile']} profile", q)
    if "sciarg" in result:
        s = result["sciarg"]
        print_cv(f"Sci-Arg relations, {s['papers']} papers, {s['profile']} profile", s)


Objective = Annotated[
    str,
    typer.Option(
        "--objective",
        help="Decision biases tuned for the 'general' or the 'focused' score, or 'shares' (each relation type's "
        "predicted count near its gold count).",
    ),
]


def predict_aif(
    in_dir: Annotated[Path, typer.Option("--in", help="Folder of AIF maps (any YA/RA/CA/MA are dropped first).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Output folder (same file names).")],
    model: RelationsModelDir = None,
    objective: Objective = FORMAT_OBJECTIVE,
) -> None:
    """Predict RA/CA/MA relations between the I-nodes of every map (DialAM-2024 task A)."""
    from api.services.relations import predict_aif as run

    result = run(settings(), in_dir, out_dir, model, objective=objective, reporter=REPORTER)
    console.print(f"{result.maps} map(s) written to {result.out}: {result.relations}")


def predict_sciarg(
    in_dir: Annotated[Path, typer.Option("--in", help="Folder of brat .ann + .txt papers.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Output folder.")],
    model: RelationsModelDir = None,
    components: Annotated[
        bool,
        typer.Option(
            "--components", help="Tag the components of each .txt first (any .ann is ignored): the full pipeline."
        ),
    ] = False,
    components_model: Annotated[
        Path | None, typer.Option("--components-model", help="Component tagger directory (default: the shipped one).")
    ] = None,
) -> None:
    """Predict Sci-Arg relations between the gold components of every paper (or, with --components, predicted ones)."""
    from api.services.relations import predict_sciarg as run

    result = run(
        settings(), in_dir, out_dir, model, components=components, components_model=components_model, reporter=REPORTER
    )
    tagged = f"{result.components} component(s), " if components else ""
    console.print(f"{result.papers} paper(s) written to {result.out}: {tagged}{result.relations} relation(s)")


def predict_relations(
    corpus: CorpusOpt = None,
    dialogue: DialogueOpt = None,
    write: WriteFlag = False,
    model: RelationsModelDir = None,
    objective: Objective = GRAPH_OBJECTIVE,
    as_json: JsonFlag = False,
    source: PairsIn = None,
    out: PairsOut = None,
) -> None:
    """Predict argument relations of graph dialogues/documents (QT30 maps, Sci-Arg papers, M-Arg debates).

    --write stores them. The maps and papers are read from the graph in the form `predict aif` /
    `predict sciarg` read from files, so they get the same predictions with the same --objective
    (here the graph's, shares, by default; `predict aif` defaults to general); M-Arg debates go to
    the QT30 network in windows. Written relations carry origin predicted, model,
    version, score and run id; gold relations are untouched, and writing the same run again writes nothing.
    With --in FILE the pairs of the file are asked instead, each as a two-proposition map (nothing is stored).
    """
    from api.services.graph import Graph
    from api.services.predictions import predict_scope

    if source is not None:
        # Text pairs, not graph units: the task's out-of-context prediction, as `predict TASK --in` of every task.
        from api.cli.tasks import predict_file

        if corpus is not None or dialogue is not None or write:
            raise typer.BadParameter("--in asks about text pairs: not with --corpus, --dialogue or --write")
        predict_file("relations", source, out, model, as_json)
        return
    if (corpus is None) == (dialogue is None):
        raise typer.BadParameter("give exactly one of --corpus and --dialogue")
    with Graph(settings()) as graph:
        outcome = predict_scope(
            graph,
            "relations",
            corpus=corpus,
            dialogue=dialogue,
            model=model,
            options={"objective": objective},
            write=write,
            reporter=REPORTER,
        )
    result: dict[str, Any] = {
        "run_id": outcome.run_id,
        "model": outcome.model,
        "model_version": outcome.model_version,
        "model_dir": outcome.model_dir,
        "family": outcome.parameters["family"],
        "objective": outcome.parameters["objective"],
        "corpus": outcome.corpus,
        "dialogues": outcome.dialogues,
        "predicted": outcome.predicted,
        "by_label": dict(outcome.by_label),
        "gold": outcome.gold,
        "scores_against_gold": outcome.scores_against_gold,
        "written": outcome.report is not None,
        "already_present": outcome.already_present,
    }
    if outcome.report is not None:
        report = outcome.report
        result["report"] = {"written": report.written, "counts": report.counts, "seconds": round(report.seconds, 2)}
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    if result["written"]:
        state = "written"
    elif result["already_present"]:
        state = "already in the graph, nothing written"
    else:
        state = "dry run, nothing written"
    labels = ", ".join(f"{n} {k}" for k, n in result["by_label"].items())
    typer.echo(
        f"{result['predicted']} predicted / {result['gold'] or 'no'} gold argument relations in {result['dialogues']} "
        f"{_UNITS[result['family']]} of {result['corpus']}"
        f"{f' ({labels})' if labels else ''}; run {result['run_id']} of {result['model']} "
        f"{result['model_version']}, {state}"
    )
    scores = result["scores_against_gold"]
    if scores:
        typer.echo(f"against gold: {_against_gold(result['family'], scores)}")


_UNITS = {"aif": "maps", "sciarg": "papers", "marg": "debates"}


def _against_gold(family: str, scores: dict[str, Any]) -> str:
    if family == "marg":
        return (
            f"{scores['pairs']} annotated pairs: macro-F1 {scores['macro_f1']:.4f}, "
            f"support/attack macro-F1 {scores['support_attack_f1']:.4f}"
        )
    if family == "aif":
        official = scores["official_style"]
        return (
            f"DialAM-style general F1 {official['general']['f1']:.4f}, focused F1 {official['focused']['f1']:.4f}, "
            f"macro-F1 RA/CA/MA {scores['relations']['macro_f1']:.4f}"
        )
    r = scores["R"]["micro"]
    return f"BAM R (micro) F1 {r['f1']:.4f}, P {r['p']:.4f}, R {r['r']:.4f}"
