"""``argweb runs list|delete``: prediction runs (aliases ``predictions runs``, ``delete predictions --model NAME``)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from api.cli_common import console, group, settings
from api.services import predictions
from api.services.graph import Graph

# ``argweb delete predictions --model NAME``: the word that stands for a corpus id there.
PREDICTIONS = "predictions"


def register(app: typer.Typer) -> None:
    """Add the ``predictions`` group (``runs``) to the ``argweb`` app."""
    sub = group(app, PREDICTIONS, "Prediction runs: model output written beside the gold annotations.")
    sub.command("runs")(list_runs)


def list_runs(
    model: Annotated[str | None, typer.Option(help="Only runs of this model.")] = None,
    version: Annotated[str | None, typer.Option(help="Only runs of this model version.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the stored prediction runs with their model, version, task, status and relation counts."""
    with Graph(settings()) as graph:
        stored = predictions.runs(graph, model, version)
    if as_json:
        rows = [
            {**r.run.model_dump(), "status": r.status, "relations": r.relations, "counts": r.counts} for r in stored
        ]
        typer.echo(json.dumps(rows, indent=2, sort_keys=True))
        return
    table = Table(title="prediction runs")
    for col in ("run id", "model", "version", "task", "created", "status", "relations"):
        table.add_column(col, justify="right" if col == "relations" else "left")
    for r in stored:
        table.add_row(
            r.run.run_id, r.run.model, r.run.model_version, r.run.task, r.run.created_at, r.status, str(r.relations)
        )
    console.print(table)


def delete_runs(
    model: Annotated[str, typer.Option(help="The model whose predicted relations and runs go.")],
    version: Annotated[str | None, typer.Option(help="Only this model version.")] = None,
    run: Annotated[str | None, typer.Option(help="Only this prediction run (its id).")] = None,
) -> None:
    """Remove a model's predicted relations and prediction runs; gold relations are never touched."""
    delete_predictions(model, version, run)


def delete_predictions(model: str, version: str | None, run: str | None = None) -> None:
    """Delete a model's predictions (``argweb runs delete``, and ``argweb delete predictions``)."""
    with Graph(settings()) as graph:
        n = predictions.delete_predictions(graph, model, version, run)
    what = f"{model} {version}" if version else model
    typer.echo(f"deleted {n} predicted relations of {what}" + (f" (run {run})" if run else ""))
