"""``argweb train|evaluate paraphrase`` and ``argweb predict contextdep``: ContextDeP highlighting."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from api.cli.options import (
    CvProfile,
    CvSeed,
    Folds,
    JsonFlag,
    ModelDir,
    WriteFlag,
    print_cv,
    print_labels,
    show,
    train_command,
)
from api.cli_common import REPORTER, console, group, settings
from api.services import paraphrase as service
from api.services.graph import Graph
from api.services.reporting import stages
from ontology.errors import ApiError


def register(app: typer.Typer) -> None:
    """Add the paraphrase commands to the ``argweb`` app."""
    data_help = "*_TOKEN-annotations.tsv files (train files train; dev files tune + held out)."
    group(app, "train", "Train a model.").command("paraphrase")(train_command(train_paraphrase, data_help))
    group(app, "evaluate", "Score models or predictions against gold data.").command("paraphrase")(evaluate_paraphrase)
    predict = group(app, "predict", "Predict with a trained model.")
    predict.command("contextdep")(predict_contextdep)
    predict.command("paraphrase")(predict_paraphrase)


def _pairs_cache() -> Path:
    return settings().embeddings_dir / "contextdep-pairs"


def print_metrics(result: dict[str, Any], title: str) -> None:
    """Classification and highlight figures as a table."""
    table = Table(title=title)
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key in ("pairs", "positives", "precision", "recall", "f1", "floor_f1", "accuracy", "jaccard_guest",
                "jaccard_host", "jaccard_guest_pairs", "jaccard_host_pairs"):  # fmt: skip
        value = result[key]
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    Console().print(table)
    print_labels(result.get("labels") or {}, "predicted against gold pairs")


def train_paraphrase(data: list[Path] | None, out: Path | None, profile: str, seed: int, encoder: Path | None) -> None:
    """Train the ContextDeP highlighter (MiniLM pair encoding + token head) and write its model card.

    Profiles: quick and full keep the encoder frozen (a PCA + MLP head; full is the shipped
    model). --encoder reads the pairs with another local encoder.
    Default data: the train and dev token files of <corpora>/contextdep. Dev pairs are split by
    interview into a tuning half and a held-out half; the card reports both.
    """
    cfg = settings()
    paths = data or service.default_data(cfg.corpora or Path("../shared/corpora"))
    target = out or cfg.models_dir / "paraphrase"
    with stages(REPORTER) as progress:
        card = service.train(
            paths, target, profile, seed, _pairs_cache(), encoder_dir=encoder, progress=progress, log=REPORTER.log
        )
    held = card.metrics.get("heldout", {})
    console.print(
        f"paraphrase model -> {target} in {card.training_seconds}s; best epoch {card.metrics['best_epoch']}; "
        f"held-out F1 {held.get('f1', float('nan')):.3f}, Jaccard guest {held.get('jaccard_guest', float('nan')):.3f} "
        f"/ host {held.get('jaccard_host', float('nan')):.3f}"
    )


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
) -> None:
    """F1/P/R against the majority vote and highlight Jaccard (guest/host) against most annotators' tokens,
    with the predicted against gold pairs per label (paraphrase / not_paraphrase).

    With --cv K no model is read: the pairs of the files (default: the train and dev files, what
    the shipped model trains on) are cut into K folds by interview, and K models are trained, each
    choosing its epoch and decision offset inside its training folds.
    """
    if cv is not None:
        from api.services import crossval

        result = crossval.paraphrase(settings(), data, cv, profile=profile, seed=seed, reporter=REPORTER)
        title = f"ContextDeP highlighting, {result['pairs']} pairs in {result['interviews']} interviews"
        show(result, as_json, lambda r: print_cv(title, r))
        return
    if not data or len(data) != 1:
        raise ApiError("evaluate paraphrase scores one file: give --data FILE once (or --cv K)")
    result = service.evaluate(model, data[0], cache_dir=_pairs_cache())
    show(result, as_json, lambda r: print_metrics(r, f"paraphrase highlighting on {data[0].name}"))


def predict_contextdep(
    source: Annotated[Path, typer.Option("--in", help="A *_TOKEN-annotations.tsv file.")],
    target: Annotated[Path, typer.Option("--out", help="Output TSV: QID, paraphrase, score, guest_probs, host_probs.")],
    model: ModelDir = None,
) -> None:
    """Write one row per pair: the 0/1 decision, its score and a probability per guest and host token."""
    summary = service.predict_file(source, target, model, cache_dir=_pairs_cache())
    console.print(
        f"{summary['pairs']} pairs, {summary['paraphrases']} predicted paraphrases -> {summary['out']} "
        f"({summary['seconds']}s)"
    )


def predict_paraphrase(
    corpus: Annotated[
        str, typer.Option("--corpus", help="Corpus of (guest, host) dialogues in the graph.")
    ] = "contextdep",
    model: ModelDir = None,
    write: WriteFlag = False,
) -> None:
    """Predict paraphrases between the guest and host turn of every dialogue; --write adds rephrase edges.

    Predicted edges carry origin predicted, the model, its version, the score and the run id; gold
    relations are untouched.
    """
    with Graph(settings()) as graph:
        summary = service.predict_graph(graph, corpus, model, write=write, cache_dir=_pairs_cache())
    action = f"wrote {summary['written']} (run {summary.get('run_id')})" if write else "dry run, nothing written"
    console.print(f"{corpus}: {summary['pairs']} pairs, {summary['paraphrases']} predicted paraphrases; {action}")
