"""``argweb evaluate paraphrase``, ``argweb predict paraphrase`` and ``argweb predict contextdep``: ContextDeP
highlighting (``model train paraphrase`` is the task contract's, :mod:`api.cli.tasks`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from api.cli.options import (
    CvEncoder,
    CvProfile,
    CvSeed,
    Folds,
    JsonFlag,
    ModelDir,
    PairsIn,
    PairsOut,
    Presentation,
    WriteFlag,
    print_cv,
    print_labels,
    show,
    show_predictions,
)
from api.cli_common import REPORTER, console, group, settings
from api.services import paraphrase as service
from api.services import tasks
from api.services.graph import Graph
from api.services.predictions import predict_scope
from gnn.paraphrase import TASK_NAME
from ontology.errors import ApiError

PARAPHRASE = Presentation(
    train_help="""Train the ContextDeP highlighter (MiniLM pair encoding + token head) and write its model card.

    Profiles: quick and full keep the encoder frozen (a PCA + MLP head; full is the shipped
    model), score each pair with a small pair model and call it a paraphrase only where that call was
    right at least two times in three out of fold inside the training pairs ("not sure" otherwise);
    strongest is full without the pair model, two-way is full with the 0.5 rule.
    --encoder reads the pairs with another local encoder.
    Default data: the token files of <corpora>/contextdep. Pairs of train files train; dev pairs
    are split by interview into a tuning half and a held-out half; the card reports both.
    """,
    evaluate_help="Score a paraphrase model on one token file (--data), or cross-validate its recipe (--cv K).",
    data_help="*_TOKEN-annotations.tsv files (train files train; dev files tune + held out).",
    cv_title=lambda items, groups: f"ContextDeP highlighting, {items} pairs in {groups} interviews",
)
"""How ``model train paraphrase`` describes itself (:data:`api.cli.tasks.PRESENTATIONS`)."""


def register(app: typer.Typer) -> None:
    """Add the paraphrase commands to the ``argweb`` app (after :mod:`api.cli.tasks`: they keep their flags)."""
    group(app, "evaluate", "Score models or predictions against gold data.").command("paraphrase")(evaluate_paraphrase)
    predict = group(app, "predict", "Predict with a trained model.")
    predict.command("contextdep")(predict_contextdep)
    predict.command("paraphrase")(predict_paraphrase)


def print_metrics(result: dict[str, Any], title: str) -> None:
    """Classification and highlight figures as a table."""
    table = Table(title=title)
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key in ("pairs", "positives", "precision", "recall", "f1", "floor_f1", "not_sure", "not_sure_share",
                "accuracy", "jaccard_guest", "jaccard_host", "jaccard_guest_pairs", "jaccard_host_pairs"):  # fmt: skip
        value = result[key]
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    Console().print(table)
    print_labels(result.get("labels") or {}, "predicted against gold pairs")


def evaluate_paraphrase(
    data: Annotated[
        list[Path] | None,
        typer.Option("--data", help="A *_TOKEN-annotations.tsv file with votes and highlights (repeatable with --cv)."),
    ] = None,
    model: ModelDir = None,
    as_json: JsonFlag = False,
    cv: Folds = None,
    profile: CvProfile = "full",
    seed: CvSeed = 13,
    encoder: CvEncoder = None,
) -> None:
    """F1/P/R against the majority vote and highlight Jaccard (guest/host) against most annotators' tokens,
    with the predicted against gold pairs per label (paraphrase / not_paraphrase).

    With --cv K no model is read: the pairs of the files (default: the token files of
    <corpora>/contextdep, what the shipped model trains on) are cut into K folds by interview, and K
    models are trained, each choosing its epoch and decision offset inside its training folds.
    """
    cfg = settings()
    if cv is not None:
        report = tasks.cross_validate(
            cfg, TASK_NAME, data, cv, profile=profile, seed=seed, encoder_dir=encoder, reporter=REPORTER
        )
        title = f"ContextDeP highlighting, {report.items} pairs in {report.groups} interviews"
        show(report.document(), as_json, lambda r: print_cv(title, r))
        return
    if not data or len(data) != 1:
        raise ApiError("evaluate paraphrase scores one file: give --data FILE once (or --cv K)")
    scored = tasks.evaluate(cfg, TASK_NAME, model, data, reporter=REPORTER)
    where = tasks.load(cfg, TASK_NAME, model).path
    result = {"model": str(where), "data": str(data[0])} | dict(scored.details["metrics"])
    result["labels"] = scored.document()["labels"]
    show(result, as_json, lambda r: print_metrics(r, f"paraphrase highlighting on {data[0].name}"))


def predict_contextdep(
    source: Annotated[Path, typer.Option("--in", help="A *_TOKEN-annotations.tsv file.")],
    target: Annotated[Path, typer.Option("--out", help="Output TSV: QID, paraphrase, score, guest_probs, host_probs.")],
    model: ModelDir = None,
) -> None:
    """Write one row per pair: the 0/1 decision (0 for a pair the model is not sure of), its score and a
    probability per guest and host token."""
    done = service.predict_file(settings(), source, target, model)
    console.print(
        f"{done.pairs} pairs, {done.paraphrases} called paraphrases, {done.not_sure} not sure (written as 0) "
        f"-> {done.target} ({done.seconds}s)"
    )


def answer_pairs(source: Path, out: Path | None, model: Path | None, as_json: bool) -> None:
    """The three-way answer to each text pair of ``source`` (as ``predict TASK --in`` of every task, with
    the threshold), printed or written to ``out`` as JSON lines."""
    from gnn.task import get_task

    found = tasks.predict(settings(), TASK_NAME, get_task(TASK_NAME).read_inputs(source), model)
    show_predictions("paraphrase answers", found, out, as_json)


def predict_paraphrase(
    corpus: Annotated[
        str, typer.Option("--corpus", help="Corpus of (guest, host) dialogues in the graph.")
    ] = "contextdep",
    model: ModelDir = None,
    write: WriteFlag = False,
    source: PairsIn = None,
    out: PairsOut = None,
    as_json: JsonFlag = False,
) -> None:
    """Predict paraphrases between the guest and host turn of every dialogue; --write adds rephrase edges
    for the pairs the model calls paraphrases (none for a pair it is not sure of).

    Predicted edges carry origin predicted, the model, its version, the score and the run id; gold
    relations are untouched. With --in FILE the (guest, host) text pairs of the file are answered
    instead: paraphrase, not_paraphrase or not_sure, with the score and the model's threshold.
    """
    if source is not None:
        if write:
            raise typer.BadParameter("--in asks about text pairs: not with --write")
        answer_pairs(source, out, model, as_json)
        return
    with Graph(settings()) as graph:
        done = predict_scope(graph, TASK_NAME, corpus=corpus, model=model, write=write, reporter=REPORTER)
    if not write:
        action = "dry run, nothing written"
    elif done.already_present:
        action = f"run {done.run_id} is in the graph already, nothing written"
    else:
        action = f"wrote {done.written} (run {done.run_id})"
    console.print(f"{corpus}: {done.dialogues} pairs, {done.predicted} called paraphrases; {action}")
