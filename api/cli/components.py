"""``argweb predict components``: Sci-Arg argument component tagging of text files (``model train
components`` and ``model evaluate components`` are the task contract's, :mod:`api.cli.tasks`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from api.cli.options import ModelDir, Presentation
from api.cli_common import console, group
from api.services import components as service
from ontology.errors import ApiError

COMPONENTS = Presentation(
    train_help="Train the BiLSTM-CRF component tagger on A01-A20 (epoch chosen on A21-A24), score A25-A32 with BAM.",
    evaluate_help="""Score a component tagger on the whole papers of --data with BAM (C, S, B), or cross-validate
    its recipe (--cv K): folds by paper over A01-A32, the epoch chosen inside the training folds, BAM C, S
    and B of each held-out fold.

    Predicted papers written as brat files are scored with `model evaluate bam`.
    """,
    data_help="Sci-Arg brat directory (default <corpora>/sciarg/compiled_corpus).",
    cv_title=lambda items, groups: f"Sci-Arg components, {items} components in {groups} papers",
)
"""How ``model train|evaluate components`` describe themselves (:data:`api.cli.tasks.PRESENTATIONS`)."""


def register(app: typer.Typer) -> None:
    """Add ``predict components`` to the ``argweb`` app (after :mod:`api.cli.tasks`: it keeps its flags)."""
    group(app, "predict", "Predict with a trained model.").command("components")(predict_components)


def predict_components(
    source: Annotated[Path, typer.Option("--in", help="Directory of Sci-Arg .txt files (any .ann there is ignored).")],
    target: Annotated[Path, typer.Option("--out", help="Output directory: predicted .ann plus the copied .txt.")],
    model: ModelDir = None,
    link: Annotated[
        bool, typer.Option("--link/--no-link", help="Add R lines from the nearest-claim linker (data -> claim).")
    ] = True,
) -> None:
    """Predict argument components (T lines) for every paper; feed the output to ``predict sciarg`` for relations."""
    if source.resolve() == target.resolve():
        raise ApiError("--out must differ from --in (the input papers are kept)")
    summary = service.predict_dir(source, target, model, link=link)
    console.print(
        f"{summary.papers} paper(s): {summary.components} components, {summary.relations} relations -> {summary.out}"
    )
