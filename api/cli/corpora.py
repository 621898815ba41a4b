"""``argweb stats|delete|run``: the corpora in the graph as a whole."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from api.cli.predictions import PREDICTIONS, delete_predictions
from api.cli_common import REPORTER, console, settings
from api.services import corpora
from api.services.graph import Graph
from ontology.errors import ApiError


def register(app: typer.Typer) -> None:
    """Add ``stats``, ``delete`` and ``run`` to the ``argweb`` app."""
    app.command("stats")(stats)
    app.command("delete")(delete)
    app.command("run")(run)


def print_stats(result: dict[str, Any]) -> None:
    """The per-corpus summary and the relations-by-type tables."""
    table = Table(title="argweb graph")
    for col in ("corpus", "status", "dialogues", "documents", "locutions", "propositions", "relations"):
        table.add_column(col, justify="right" if col not in ("corpus", "status") else "left")
    for name, entry in result["corpora"].items():
        s = entry["summary"]
        table.add_row(
            name,
            str(entry.get("status")),
            *(str(s[key]) for key in ("dialogues", "documents", "locutions", "propositions", "relations")),
        )
    Console().print(table)
    rel = Table(title="relations by type")
    rel.add_column("corpus")
    rel.add_column("type")
    rel.add_column("n", justify="right")
    for name, entry in result["corpora"].items():
        for key, n in entry["relations"].items():
            rel.add_row(name, key, str(n))
    Console().print(rel)


def stats(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Counts per label, relationship type and corpus."""
    with Graph(settings()) as graph:
        result = corpora.stats(graph)
    if as_json:
        typer.echo(json.dumps(result, indent=2, sort_keys=True))
    else:
        print_stats(result)


def delete(
    corpus: Annotated[
        str, typer.Argument(help="Corpus id (e.g. molweni, qt30, m-arg), or 'predictions' with --model.")
    ],
    model: Annotated[str | None, typer.Option(help="With 'predictions': the model whose predictions go.")] = None,
    version: Annotated[str | None, typer.Option(help="With 'predictions': only this model version.")] = None,
) -> None:
    """Remove a corpus and everything in it (ingest merges, so use this before loading a smaller set).

    ``argweb delete predictions --model NAME [--version V]`` removes a model's predicted relations
    and prediction runs instead; gold relations are never touched.
    """
    if corpus == PREDICTIONS:
        if model is None:
            raise ApiError("argweb delete predictions needs --model NAME (and optionally --version V)")
        delete_predictions(model, version)
        return
    if model is not None or version is not None:
        raise ApiError(f"--model and --version go with 'argweb delete {PREDICTIONS}', not with a corpus")
    with Graph(settings()) as graph:
        corpora.delete_corpus(graph, corpus)
    typer.echo(f"deleted corpus {corpus}")


def run() -> None:
    """Main job: start Neo4j, load every corpus found, print stats."""
    cfg = settings()
    root = corpora.corpora_root(cfg)
    console.print(f"corpora: {root}")
    with Graph(cfg) as graph:
        report = corpora.run_all(graph, root, REPORTER)
    print_stats(report.stats)
    console.print(f"done in {report.seconds:.1f}s")
