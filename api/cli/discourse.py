"""``argweb train|evaluate|parse|predict discourse``: the discourse parser on Molweni/STAC files and graph dialogues.

The discourse task is on the contract (:mod:`gnn.discourse.task`); its commands keep the flags and
tables they always had (``--scheme``, ``--members``, the graph form of ``predict``), so they are
registered here instead of by :mod:`api.cli.tasks`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from api.cli.options import (
    CorpusOpt,
    CvProfile,
    CvSeed,
    DialogueOpt,
    Folds,
    JsonFlag,
    ModelDir,
    WriteFlag,
    print_cv,
    print_labels,
    show,
    train_command,
)
from api.cli_common import REPORTER, group, settings
from api.services import discourse
from api.services.graph import Graph
from api.services.predictions import predict_scope

SchemeOpt = Annotated[
    str | None,
    typer.Option("--scheme", help="Label spelling of the file: molweni or stac (default: detected from its labels)."),
]


def register(app: typer.Typer) -> None:
    """Add the ``discourse`` commands to the ``train``, ``evaluate`` and ``parse`` groups."""
    data_help = "Molweni/STAC JSON file (repeatable; default: Molweni dev + STAC train)."
    group(app, "train", "Train a model and write a model directory with its card.").command("discourse")(
        train_command(train, data_help)
    )
    group(app, "evaluate", "Score a model on a corpus file.").command("discourse")(evaluate)
    group(app, "parse", "Predict relations of a corpus file, written in its own format.").command("discourse")(parse)
    group(app, "predict", "Predict relations of graph dialogues and write them as predicted edges.").command(
        "discourse"
    )(predict)


def _scores_table(title: str, rows: dict[str, dict[str, Any]]) -> None:
    table = Table(title=title)
    for col in ("split", "dialogues", "link F1", "link&rel F1", "EDUs/s"):
        table.add_column(col, justify="left" if col == "split" else "right")
    for name, m in rows.items():
        table.add_row(
            name,
            str(m["dialogues"]),
            f"{m['link_f1']:.2f}",
            f"{m['link_rel_f1']:.2f}",
            str(m.get("edus_per_second", "-")),
        )
    Console().print(table)


def train(data: list[Path] | None, out: Path | None, profile: str, seed: int, encoder: Path | None) -> None:
    """Train the discourse parser; held-out scores per file go into the model card.

    The quick profile trains in a few minutes; the shipped model was trained with the full one.
    """
    report = discourse.train(settings(), data, out, profile=profile, seed=seed, encoder_dir=encoder, reporter=REPORTER)
    metrics = report.card.metrics
    held_out = {k: v for k, v in metrics.items() if isinstance(v, dict) and "link_f1" in v}
    _scores_table(f"held-out scores ({report.card.training_seconds:.0f} s of training)", held_out)
    typer.echo(str(report.model_dir))


def evaluate(
    data: Annotated[
        list[Path] | None,
        typer.Option("--data", help="Molweni/STAC JSON file with gold relations (repeatable with --cv)."),
    ] = None,
    model: ModelDir = None,
    scheme: SchemeOpt = None,
    as_json: JsonFlag = False,
    cv: Folds = None,
    profile: CvProfile = "full",
    seed: CvSeed = 13,
    members: Annotated[
        int | None, typer.Option("--members", min=1, help="Networks per fold model instead of the profile's (--cv).")
    ] = None,
) -> None:
    """Micro link F1 and link & relation F1 of a model on every dialogue of a file, or cross-validate the recipe.

    Beside the scores: the same file written other valid ways, and predicted against gold relations
    per sense with each sense's recall.

    With --cv K no model is read: the files (default: Molweni dev + STAC train, what the shipped
    model trains on) are cut into K folds by chat session (Molweni) / game (STAC), and K models are
    trained, each choosing its epochs and thresholds inside its training folds.
    """
    from ontology.errors import ApiError

    if cv is not None:
        report = discourse.cross_validate(
            settings(), data, cv, profile=profile, seed=seed, members=members, reporter=REPORTER
        )
        title = f"discourse: {report.items} EDUs in {report.groups} session/game groups, {report.profile} profile"
        show(report.document(), as_json, lambda r: print_cv(title, r), sort_keys=False)
        return
    if not data or len(data) != 1:
        raise ApiError("evaluate discourse scores one file: give --data FILE once (or --cv K)")
    result = discourse.evaluate(settings(), data[0], model, scheme, reporter=REPORTER).document()
    title = f"{result['file']} ({result['scheme']})"

    def tables(r: dict[str, Any]) -> None:
        _scores_table(title, {Path(r["file"]).name: r})
        rows = {name: {**v, "dialogues": r["dialogues"]} for name, v in r["variants"].items()}
        _scores_table(f"the same file written other valid ways (largest change {r['variants_max_change']:.4f})", rows)
        print_labels(r["labels"], "predicted against gold relations per sense")

    show(result, as_json, tables, sort_keys=False)


def parse(
    source: Annotated[Path, typer.Option("--in", help="Molweni/STAC JSON file of dialogues.")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the predictions (same format).")],
    model: ModelDir = None,
    scheme: SchemeOpt = None,
) -> None:
    """Write the dialogues of a file again with their relations predicted (labels as the file spells them)."""
    result = discourse.parse(settings(), source, out, model, scheme, reporter=REPORTER)
    REPORTER.log(f"{result.relations} relations predicted for {result.dialogues} dialogues ({result.scheme})")
    typer.echo(result.file)


def predict(
    corpus: CorpusOpt = None,
    dialogue: DialogueOpt = None,
    write: WriteFlag = False,
    model: ModelDir = None,
    scheme: SchemeOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Parse dialogues of the graph; with --write, store the links as predicted relations (gold untouched)."""
    if corpus is None and dialogue is None:
        raise typer.BadParameter("give --corpus or --dialogue")
    options = {"scheme": scheme} if scheme else {}
    with Graph(settings()) as graph:
        outcome = predict_scope(
            graph,
            "discourse",
            corpus=corpus,
            dialogue=dialogue,
            model=model,
            options=options,
            write=write,
            reporter=REPORTER,
        )
    if as_json:
        typer.echo(json.dumps(outcome.document(), indent=2))
        return
    scores = outcome.scores_against_gold
    against = f"; against gold: link F1 {scores['link_f1']}, link&rel F1 {scores['link_rel_f1']}" if scores else ""
    if outcome.already_present and write:
        state = "in the graph already, nothing written"
    else:
        state = "written" if write else "dry run, nothing written"
    typer.echo(
        f"{outcome.predicted} predicted / {outcome.gold} gold relations in {outcome.dialogues} dialogues "
        f"(run {outcome.run_id}, {state}){against}"
    )
