"""``argweb train|evaluate|predict components``: Sci-Arg argument component tagging."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from api.cli.options import (
    CvProfile,
    CvSeed,
    EncoderDir,
    Folds,
    JsonFlag,
    ModelDir,
    Profile,
    Seed,
    TrainedModelDir,
    print_cv,
    show,
)
from api.cli_common import REPORTER, console, group, settings
from api.services import components as service
from api.services.reporting import stages
from ontology.errors import ApiError


def register(app: typer.Typer) -> None:
    """Add the component tagger commands to the ``argweb`` app."""
    group(app, "train", "Train a model.").command("components")(train_components)
    group(app, "evaluate", "Score models or predictions against gold data.").command("components")(evaluate_components)
    group(app, "predict", "Predict with a trained model.").command("components")(predict_components)


SciargData = Annotated[
    Path | None, typer.Option("--data", help="Sci-Arg brat directory (default <corpora>/sciarg/compiled_corpus).")
]


def _corpus(data: Path | None) -> Path:
    from api.services.corpora import corpora_root

    return data or corpora_root(settings()) / service.SCIARG_DIR


def train_components(
    data: SciargData = None,
    out: TrainedModelDir = None,
    profile: Profile = "full",
    seed: Seed = 13,
    encoder: EncoderDir = None,
) -> None:
    """Train the BiLSTM-CRF component tagger on A01-A20 (epoch chosen on A21-A24), score A25-A32 with BAM."""
    cfg = settings()
    corpus = _corpus(data)
    target = out or cfg.models_dir / "components"
    with stages(REPORTER) as progress:
        card = service.train(
            corpus,
            target,
            profile=profile,
            seed=seed,
            progress=progress,
            cache_dir=cfg.embeddings_dir / "sciarg-tokens",
            encoder_dir=encoder,
        )
    held = card.metrics.get("heldout_bam_nearest_claim_linker")
    figures = f"; held-out S {held['S']:.3f} B {held['B']:.3f} C {held['C']:.3f}" if held else ""
    console.print(
        f"component tagger -> {target} in {card.training_seconds}s (best epoch {card.metrics['best_epoch']}){figures}"
    )


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
        f"{summary['papers']} paper(s): {summary['components']} components, {summary['relations']} relations "
        f"-> {summary['out']}"
    )


def evaluate_components(
    cv: Folds = None,
    data: SciargData = None,
    profile: CvProfile = "full",
    seed: CvSeed = 13,
    as_json: JsonFlag = False,
) -> None:
    """Cross-validate the component tagger recipe (--cv K): folds by paper over A01-A32, the epoch
    chosen inside the training folds, BAM C, S and B of each held-out fold.

    A tagger's predicted papers are scored with `model evaluate bam`.
    """
    if cv is None:
        raise ApiError(
            "evaluate components cross-validates the recipe: give --cv K (to score predicted papers, use "
            "`argweb model evaluate bam`)"
        )
    from api.services import crossval

    result = crossval.components(settings(), data, cv, profile=profile, seed=seed, reporter=REPORTER)
    show(result, as_json, lambda r: print_cv(f"Sci-Arg components, {r['papers']} papers, {r['profile']} profile", r))
