"""``argweb ingest CORPUS PATH...``: one command per corpus of the loader registry."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from api.cli_common import REPORTER, group, settings
from api.services.corpora import bulk_ingest_files, ingest_files, ingest_format
from api.services.graph import Graph
from ontology.formats.registry import CORPORA, FORMATS, CorpusSpec, FormatSpec

PathsArg = Annotated[list[Path], typer.Argument(help="Files or directories.")]
BulkOpt = Annotated[
    bool,
    typer.Option(
        "--bulk",
        help="First load of an empty embedded database through Neo4j's offline importer "
        "(same graph, much faster); refused on a non-empty or external database.",
    ),
]


def _command(spec: CorpusSpec) -> Callable[[list[Path]], None]:
    def ingest(paths: PathsArg, bulk: BulkOpt = False) -> None:
        with Graph(settings()) as graph:
            if bulk:
                bulk_ingest_files(graph, spec.name, paths, REPORTER)
            else:
                ingest_files(graph, spec.name, paths, REPORTER)

    ingest.__doc__ = spec.summary or f"{spec.name} files."
    return ingest


CorpusNameOpt = Annotated[
    str | None, typer.Option("--corpus", help="Corpus to load the maps into (default: the format's name).")
]

VariantOpt = Annotated[
    str | None,
    typer.Option("--format", help="The format of every file (default: told per file by its extension and keys)."),
]


def _format_command(spec: FormatSpec) -> Callable[..., None]:
    if spec.variants:

        def ingest_variants(paths: PathsArg, corpus: CorpusNameOpt = None, variant: VariantOpt = None) -> None:
            with Graph(settings()) as graph:
                ingest_format(graph, spec.name, paths, corpus, variant, REPORTER)

        command: Callable[..., None] = ingest_variants
    else:

        def ingest_maps(paths: PathsArg, corpus: CorpusNameOpt = None) -> None:
            with Graph(settings()) as graph:
                ingest_format(graph, spec.name, paths, corpus, reporter=REPORTER)

        command = ingest_maps
    command.__doc__ = spec.summary + (f" --format: {', '.join(spec.variants)}." if spec.variants else "")
    return command


def register(app: typer.Typer) -> None:
    """Add ``ingest <corpus>`` for every corpus the registry knows, and ``ingest <format>`` for every map format."""
    ingest_app = group(app, "ingest", "Load a corpus into the graph.")
    for spec in CORPORA.values():
        ingest_app.command(spec.command_name)(_command(spec))
    for fmt in FORMATS.values():
        ingest_app.command(fmt.name)(_format_command(fmt))
