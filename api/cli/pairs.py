"""How ``model train pairs``, ``model evaluate pairs`` and ``predict pairs`` present the out-of-context
pair model of ``POST /predict`` (the commands themselves are those of every task, :mod:`api.cli.tasks`)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from api.cli.options import Presentation
from gnn.task import EvalReport


def print_details(report: EvalReport) -> None:
    """The challenge set per label and the M-Arg figures of a pair model's evaluation."""
    table = Table(title=f"pair model {report.model}")
    for col in ("set", "measure", "value"):
        table.add_column(col)
    ch = report.details.get("challenge")
    if ch:
        table.add_row("challenge", "right", f"{ch['right']} of {ch['pairs']}")
        for label, row in sorted(ch["per_label"].items()):
            table.add_row("challenge", label, f"{row['right']} of {row['pairs']}")
    marg = report.details.get("marg")
    if marg:
        table.add_row("M-Arg", "support/attack macro-F1", f"{marg['support_attack_f1']:.4f}")
        table.add_row("M-Arg", "macro-F1 (3 classes)", f"{marg['macro_f1']:.4f}")
        table.add_row("M-Arg", "predicted", str(marg["predicted"]))
    Console().print(table)


PAIRS = Presentation(
    train_help="""Train the out-of-context pair model (support / attack / rephrase / none between two texts).

    An MLP over the frozen encoder's vectors of the two texts and cue-word flags, trained on every
    gold RA / CA / MA of the QT30 maps and sampled unrelated pairs of the same maps; about a tenth
    of the episodes choose the epoch and the decision biases. Profiles: full (the shipped model, a
    few minutes on the CPU with cached vectors), quick (a small head, three epochs) and cross (a
    cross-encoder fine-tuned from the encoder given with --encoder; a GPU is advised). The card
    records the challenge-set and M-Arg figures.
    """,
    evaluate_help="""Score a pair model on the challenge set and M-Arg's gold pairs, or cross-validate the recipe.

    With --data the model is scored on the QT30 pairs there instead. With --cv K no model is read:
    the QT30 pairs are cut into K folds by episode; each fold model chooses its epoch and biases
    inside its training folds and is scored on the fold it never saw.
    """,
    data_help="QT30 / DialAM-2024 AIF maps or directories (default: <corpora>/dialam-2024/my_train).",
    print_details=print_details,
    cv_title=lambda items, groups: f"QT30 pairs out of context, {items} pairs in {groups} episodes",
)
