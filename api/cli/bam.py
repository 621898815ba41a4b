"""``argweb evaluate bam``: BAM's four measures (S, B, C, R) of brat predictions against gold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from api.cli_common import group
from gnn.bam import evaluate_dirs


def register(app: typer.Typer) -> None:
    """Add ``evaluate bam`` to the ``argweb`` app."""
    group(app, "evaluate", "Score models or predictions against gold data.").command("bam")(evaluate_bam)


def print_bam(result: dict[str, Any]) -> None:
    """One row per system with S, B, C, R, then per-label C and R."""
    out = Console()
    table = Table(title=f"BAM on {result['documents']} document(s) of {result['gold']}")
    for col in ("system", "S", "B", "C", "R"):
        table.add_column(col, justify="right" if col != "system" else "left")
    for name in ("system", "baseline"):
        row = result[name]
        label = "predictions" if name == "system" else "most-frequent label"
        table.add_row(label, *(f"{row[k]:.3f}" for k in ("S", "B", "C", "R")))
    out.print(table)
    detail = Table(title="predictions per label (P / R / F1)")
    for col in ("measure", "label", "P", "R", "F1", "gold"):
        detail.add_column(col)
    for measure, key in (("C", "components_by_label"), ("R", "relations_by_label")):
        for label, prf in result["system"][key].items():
            detail.add_row(
                measure, label, f"{prf['precision']:.3f}", f"{prf['recall']:.3f}", f"{prf['f1']:.3f}", str(prf["gold"])
            )
    out.print(detail)
    if result["missing_predictions"]:
        out.print(f"no prediction for {len(result['missing_predictions'])} gold document(s): scored as empty")


def evaluate_bam(
    pred: Annotated[Path, typer.Option("--pred", help="Directory of predicted brat .ann files (.txt optional).")],
    gold: Annotated[Path, typer.Option("--gold", help="Directory of gold brat .ann + .txt files.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Argumentative sentences (S), boundary similarity (B), components (C) and relations (R), BAM style.

    S: micro-F1 of argumentative/none per gold sentence; B: boundary similarity (Fournier 2013,
    n_t = 2) of the token segmentations, mean over documents; C: exact-span component F1;
    R: (source span, type, target span) micro-F1, symmetric types unordered. The most-frequent-
    label baseline is scored on the same documents.
    """
    result = evaluate_dirs(pred, gold).as_dict()
    if as_json:
        typer.echo(json.dumps(result, indent=2, sort_keys=True))
    else:
        print_bam(result)
