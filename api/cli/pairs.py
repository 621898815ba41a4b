"""``argweb train pairs`` and ``argweb evaluate pairs``: the out-of-context pair model of ``POST /predict``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from api.cli.options import CvEncoder, CvProfile, CvSeed, Folds, JsonFlag, ModelDir, print_cv, show, train_command
from api.cli_common import REPORTER, console, group, settings
from api.services import pairs as service


def register(app: typer.Typer) -> None:
    """Add the pair model commands to the ``argweb`` app."""
    data_help = "QT30 / DialAM-2024 AIF maps or directories (default: <corpora>/dialam-2024/my_train)."
    group(app, "train", "Train a model.").command("pairs")(train_command(train_pairs, data_help))
    group(app, "evaluate", "Score models or predictions against gold data.").command("pairs")(evaluate_pairs)


def train_pairs(data: list[Path] | None, out: Path | None, profile: str, seed: int, encoder: Path | None) -> None:
    """Train the out-of-context pair model (support / attack / rephrase / none between two texts).

    An MLP over the frozen encoder's vectors of the two texts and cue-word flags, trained on every
    gold RA / CA / MA of the QT30 maps and sampled unrelated pairs of the same maps; about a tenth
    of the episodes choose the epoch and the decision biases. Profiles: full (the shipped model, a
    few minutes on the CPU with cached vectors) and quick (a small head, three epochs). The card
    records the challenge-set and M-Arg figures.
    """
    cfg = settings()
    target = out or cfg.models_dir / service.TASK
    card = service.train(cfg, data, target, profile=profile, seed=seed, encoder_dir=encoder, reporter=REPORTER)
    ch = card.metrics.get("challenge")
    marg = card.metrics.get("marg")
    extra = f"; challenge set {ch['right']} of {ch['pairs']} right" if ch else ""
    extra += f"; M-Arg support/attack macro-F1 {marg['support_attack_f1']:.3f}" if marg else ""
    console.print(
        f"pair model -> {target} in {card.training_seconds}s; epoch {card.metrics['best_epoch']}, "
        f"tune macro-F1 {card.metrics['tune_macro_f1']:.3f}{extra}"
    )


def _print_scores(result: dict[str, Any]) -> None:
    table = Table(title=f"pair model {result['model']}")
    for col in ("set", "measure", "value"):
        table.add_column(col)
    ch = result["challenge"]
    table.add_row("challenge", "right", f"{ch['right']} of {ch['pairs']}")
    for label, row in sorted(ch["per_label"].items()):
        table.add_row("challenge", label, f"{row['right']} of {row['pairs']}")
    marg = result.get("marg")
    if marg:
        table.add_row("M-Arg", "support/attack macro-F1", f"{marg['support_attack_f1']:.4f}")
        table.add_row("M-Arg", "macro-F1 (3 classes)", f"{marg['macro_f1']:.4f}")
        table.add_row("M-Arg", "predicted", str(marg["predicted"]))
    Console().print(table)


def evaluate_pairs(
    data: Annotated[
        list[Path] | None, typer.Option("--data", help="QT30 / DialAM-2024 maps for --cv (default: my_train).")
    ] = None,
    model: ModelDir = None,
    as_json: JsonFlag = False,
    cv: Folds = None,
    profile: CvProfile = "full",
    seed: CvSeed = 13,
    encoder: CvEncoder = None,
) -> None:
    """Score a pair model on the challenge set and M-Arg's gold pairs, or cross-validate the recipe.

    With --cv K no model is read: the QT30 pairs are cut into K folds by episode; each fold model
    chooses its epoch and biases inside its training folds and is scored on the fold it never saw.
    """
    cfg = settings()
    if cv is not None:
        result = service.cross_validate(
            cfg, data, cv, profile=profile, seed=seed, encoder_dir=encoder, reporter=REPORTER
        )
        title = f"QT30 pairs out of context, {result['items']} pairs in {result['groups']} episodes"
        show(result, as_json, lambda r: print_cv(title, r))
        return
    card, loaded = service.load(cfg, model)
    out: dict[str, Any] = {"model": f"{card.model} {card.version}", "challenge": service.challenge(loaded)}
    marg = service.marg_pairs(cfg)
    if marg:
        out["marg"] = service.score_marg(loaded, marg)
    show(out, as_json, _print_scores)
