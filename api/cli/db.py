"""``argweb db start|stop|status``: the embedded Neo4j."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from api.cli_common import group, settings
from api.services.graph import embedded_server


def register(app: typer.Typer) -> None:
    """Add the ``db`` commands to the ``argweb`` app."""
    db_app = group(app, "db", "Run the embedded Neo4j.")
    db_app.command("start")(db_start)
    db_app.command("stop")(db_stop)
    db_app.command("status")(db_status)


DataDirOption = Annotated[Path | None, typer.Option(help="Data directory (default .argweb).")]


def db_start(
    port: Annotated[int | None, typer.Option(help="Bolt port (default: settings, 7687).")] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Start the embedded Neo4j in the background (no-op when it already runs)."""
    info = embedded_server(settings(neo4j_port=port, data_dir=data_dir)).start()
    typer.echo(f"neo4j running: {info.uri} (pid {info.pid}, data {info.data_dir})")


def db_stop(data_dir: DataDirOption = None) -> None:
    """Stop the embedded Neo4j."""
    stopped = embedded_server(settings(data_dir=data_dir)).stop()
    typer.echo("neo4j stopped" if stopped else "neo4j was not running")


def db_status(data_dir: DataDirOption = None) -> None:
    """Say whether the embedded Neo4j runs (exit code 1 when not)."""
    cfg = settings(data_dir=data_dir)
    if cfg.neo4j_uri:
        typer.echo(f"external neo4j configured: {cfg.neo4j_uri}")
        return
    info = embedded_server(cfg).info()
    if info is None:
        typer.echo("neo4j not running")
        raise typer.Exit(code=1)
    typer.echo(f"neo4j running: {info.uri} (pid {info.pid}, data {info.data_dir})")
