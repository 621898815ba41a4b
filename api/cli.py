"""The ``argweb`` command line."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from neo4j import Driver
from rich.console import Console
from rich.table import Table

from api.cli_common import console, progress_bar
from api.settings import Settings
from graphstore.loaders.registry import CORPORA, SAMPLES, files_for
from graphstore.runtime import EmbeddedNeo4j, connect
from graphstore.store import GraphStore, IngestReport
from ontology.errors import ArgwebError
from ontology.records import CorpusBundle

app = typer.Typer(help="argweb: the Argument Web knowledge backend.", no_args_is_help=True)
db_app = typer.Typer(help="Run the embedded Neo4j.", no_args_is_help=True)
ingest_app = typer.Typer(help="Load a corpus into the graph.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(ingest_app, name="ingest")


def _settings(port: int | None = None, data_dir: Path | None = None) -> Settings:
    updates: dict[str, object] = {}
    if port is not None:
        updates["neo4j_port"] = port
    if data_dir is not None:
        updates["data_dir"] = data_dir
    return Settings().model_copy(update=updates)


def _embedded(settings: Settings) -> EmbeddedNeo4j:
    return EmbeddedNeo4j(
        settings.neo4j_dir,
        password=settings.neo4j_password.get_secret_value(),
        port=settings.neo4j_port,
        heap=settings.neo4j_heap,
    )


@contextmanager
def open_driver(settings: Settings) -> Iterator[Driver]:
    """A driver for the configured Neo4j; starts the embedded one when no URI is configured."""
    if settings.neo4j_uri:
        driver = connect(settings.neo4j_uri, settings.neo4j_user, settings.neo4j_password.get_secret_value())
    else:
        info = _embedded(settings).start()
        driver = connect(info.uri, "neo4j", settings.neo4j_password.get_secret_value())
    try:
        yield driver
    finally:
        driver.close()


def _fail(e: ArgwebError) -> None:
    console.print(f"[bold red]error:[/] {e}")
    raise typer.Exit(code=1)


def ingest_bundle(store: GraphStore, bundle: CorpusBundle) -> IngestReport:
    """Write a bundle with a progress bar."""
    total = len(bundle.nodes) + len(bundle.edges)
    with progress_bar(f"{bundle.corpus.id}") as bar:
        task = bar.add_task("ingest", total=total)
        report = store.ingest(bundle, progress=lambda n: bar.advance(task, n))
    console.print(
        f"{report.corpus}: {report.nodes} nodes + {report.edges} relationships in {report.seconds:.1f}s "
        f"({report.items / max(report.seconds, 1e-9):,.0f} items/s)"
    )
    return report


# -- db -------------------------------------------------------------------------------------------


@db_app.command("start")
def db_start(
    port: Annotated[int | None, typer.Option(help="Bolt port (default: settings, 7687).")] = None,
    data_dir: Annotated[Path | None, typer.Option(help="Data directory (default .argweb).")] = None,
) -> None:
    """Start the embedded Neo4j in the background (no-op when it already runs)."""
    settings = _settings(port, data_dir)
    try:
        info = _embedded(settings).start()
    except ArgwebError as e:
        _fail(e)
    typer.echo(f"neo4j running: {info.uri} (pid {info.pid}, data {info.data_dir})")


@db_app.command("stop")
def db_stop(data_dir: Annotated[Path | None, typer.Option(help="Data directory.")] = None) -> None:
    """Stop the embedded Neo4j."""
    stopped = _embedded(_settings(data_dir=data_dir)).stop()
    typer.echo("neo4j stopped" if stopped else "neo4j was not running")


@db_app.command("status")
def db_status(data_dir: Annotated[Path | None, typer.Option(help="Data directory.")] = None) -> None:
    """Say whether the embedded Neo4j runs (exit code 1 when not)."""
    settings = _settings(data_dir=data_dir)
    if settings.neo4j_uri:
        typer.echo(f"external neo4j configured: {settings.neo4j_uri}")
        return
    info = _embedded(settings).info()
    if info is None:
        typer.echo("neo4j not running")
        raise typer.Exit(code=1)
    typer.echo(f"neo4j running: {info.uri} (pid {info.pid}, data {info.data_dir})")


# -- ingest ---------------------------------------------------------------------------------------


def _ingest(name: str, paths: list[Path]) -> None:
    settings = Settings()
    try:
        bundle = CORPORA[name].load(files_for(name, paths))
        with open_driver(settings) as driver:
            ingest_bundle(GraphStore(driver, settings.neo4j_database, settings.batch_size), bundle)
    except ArgwebError as e:
        _fail(e)


PathsArg = Annotated[list[Path], typer.Argument(help="Files or directories.")]


@ingest_app.command("molweni")
def ingest_molweni(paths: PathsArg) -> None:
    """Molweni discourse-parsing JSON (e.g. DP/dev.json)."""
    _ingest("molweni", paths)


@ingest_app.command("stac")
def ingest_stac(paths: PathsArg) -> None:
    """STAC discourse JSON (Molweni format)."""
    _ingest("stac", paths)


@ingest_app.command("aif")
def ingest_aif(paths: PathsArg) -> None:
    """AIF JSON argument maps (QT30 / DialAM-2024), files or directories."""
    _ingest("qt30", paths)


# -- stats / run ----------------------------------------------------------------------------------


def _print_stats(stats: dict[str, object]) -> None:
    corpora = stats["corpora"]
    assert isinstance(corpora, dict)
    table = Table(title="argweb graph")
    for col in ("corpus", "status", "dialogues", "documents", "locutions", "propositions", "relations"):
        table.add_column(col, justify="right" if col not in ("corpus", "status") else "left")
    for name, entry in corpora.items():
        s = entry["summary"]
        table.add_row(
            name,
            str(entry.get("status")),
            str(s["dialogues"]),
            str(s["documents"]),
            str(s["locutions"]),
            str(s["propositions"]),
            str(s["relations"]),
        )
    Console().print(table)
    rel = Table(title="relations by type")
    rel.add_column("corpus")
    rel.add_column("type")
    rel.add_column("n", justify="right")
    for name, entry in corpora.items():
        for key, n in entry["relations"].items():
            rel.add_row(name, key, str(n))
    Console().print(rel)


@app.command()
def stats(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Counts per label, relationship type and corpus."""
    settings = Settings()
    try:
        with open_driver(settings) as driver:
            result = GraphStore(driver, settings.neo4j_database).stats()
    except ArgwebError as e:
        _fail(e)
    if as_json:
        typer.echo(json.dumps(result, indent=2, sort_keys=True))
    else:
        _print_stats(result)


@app.command()
def delete(corpus: Annotated[str, typer.Argument(help="Corpus id (e.g. molweni, qt30, m-arg).")]) -> None:
    """Remove a corpus and everything in it (ingest merges, so use this before loading a smaller set)."""
    settings = Settings()
    try:
        with open_driver(settings) as driver:
            GraphStore(driver, settings.neo4j_database).delete_corpus(corpus)
    except ArgwebError as e:
        _fail(e)
    typer.echo(f"deleted corpus {corpus}")


def corpora_root(settings: Settings) -> Path:
    """The corpora directory: ``ARGWEB_CORPORA``, else ``../shared/corpora``, else the samples."""
    for candidate in (settings.corpora, Path("../shared/corpora")):
        if candidate is not None and candidate.is_dir() and any(spec.find(candidate) for spec in CORPORA.values()):
            return candidate
    return SAMPLES


@app.command()
def run() -> None:
    """Main job: start Neo4j, load every corpus found, print stats."""
    settings = Settings()
    root = corpora_root(settings)
    console.print(f"corpora: {root}")
    started = time.perf_counter()
    try:
        with open_driver(settings) as driver:
            store = GraphStore(driver, settings.neo4j_database, settings.batch_size)
            for spec in CORPORA.values():
                files = spec.find(root)
                if not files:
                    console.print(f"{spec.name}: no files under {root / spec.folder}, skipped")
                    continue
                ingest_bundle(store, spec.load(files))
            result = store.stats()
    except ArgwebError as e:
        _fail(e)
    _print_stats(result)
    console.print(f"done in {time.perf_counter() - started:.1f}s")


def _register_modules() -> None:
    # Each topic keeps its commands in its own module; they plug into the same app.
    from api import cli_corpora, cli_extra, cli_rdf

    for module in (cli_rdf, cli_corpora, cli_extra):
        module.register(app)


_register_modules()


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
