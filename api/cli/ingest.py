"""``argweb ingest CORPUS PATH...``: one command per corpus of the loader registry."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from api.cli_common import REPORTER, group, settings
from api.services.graph import Graph
from api.services.ingest import ingest_files
from graphstore.loaders.registry import CORPORA, CorpusSpec

PathsArg = Annotated[list[Path], typer.Argument(help="Files or directories.")]


def _command(spec: CorpusSpec) -> Callable[[list[Path]], None]:
    def ingest(paths: PathsArg) -> None:
        with Graph(settings()) as graph:
            ingest_files(graph, spec.name, paths, REPORTER)

    ingest.__doc__ = spec.summary or f"{spec.name} files."
    return ingest


def register(app: typer.Typer) -> None:
    """Add ``ingest <corpus>`` for every corpus the registry knows."""
    ingest_app = group(app, "ingest", "Load a corpus into the graph.")
    for spec in CORPORA.values():
        ingest_app.command(spec.command_name)(_command(spec))
