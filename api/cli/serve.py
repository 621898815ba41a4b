"""``argweb serve`` (the HTTP API and graph page) and ``argweb report`` (corpus dashboard plots)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from api.cli_common import console, settings
from api.services.query import sparql_store


def register(app: typer.Typer) -> None:
    """Add the serve and report commands to the ``argweb`` app."""
    app.command("serve")(serve)
    app.command("report")(report)


def serve(
    host: Annotated[
        str | None, typer.Option(help="Interface to listen on (0.0.0.0 for every interface; default 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="TCP port (default: settings, 8000).")] = None,
    workers: Annotated[int, typer.Option(help="Worker processes.")] = 1,
    background: Annotated[
        bool, typer.Option("--background", help="Run detached (pid file in the data directory); no-op if running.")
    ] = False,
    stop: Annotated[bool, typer.Option("--stop", help="Stop the background API.")] = False,
) -> None:
    """Serve the HTTP API, the SPARQL endpoint and the graph page (Neo4j must be running).

    Configuration comes from the ARGWEB_ settings (Neo4j, SPARQL store, API key, CORS, limits).
    """
    cfg = settings()
    if stop or background:
        from api.services.apiserver import api_server

        server = api_server(cfg, host, port)
        if stop:
            typer.echo("API stopped" if server.stop() else "API was not running")
            return
        info = server.start()
        console.print(f"argweb API running: {info.url} (pid {info.pid}, log {server.log_file})")
        return
    import uvicorn

    host = host or cfg.api_host
    port = port or cfg.api_port
    console.print(f"argweb API on http://{host}:{port}/ (docs: /docs, SPARQL: /sparql, data: {sparql_store(cfg)})")
    from api import server as uvicorn_setup

    if workers > 1:
        # Each worker reads the settings (the header-read timeout too) from the environment.
        uvicorn.run("api.app:app", host=host, port=port, workers=workers, log_level="info", http=uvicorn_setup.PROTOCOL)
    else:
        from api.app import create_app

        running = uvicorn.Server(uvicorn_setup.config(create_app(cfg), cfg, host, port))
        running.run()
        if not running.started:  # the port was taken, say (uvicorn logged why): as uvicorn.run does
            raise typer.Exit(1)


def report(
    corpus: Annotated[str, typer.Argument(help="Corpus id (e.g. m-arg, molweni).")],
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("report"),
) -> None:
    """Write the corpus dashboard plots (relation types, speakers, topics, agreement, gold vs
    predicted, each prediction run against gold) that apply to the corpus as PNG and SVG."""
    from api import dashboard
    from api.services import report as report_service
    from api.services.graph import Graph
    from graphstore.browsing import BrowseService

    cfg = settings()
    with Graph(cfg) as graph:
        service = BrowseService(graph.driver(), cfg.neo4j_database, cfg.cypher_timeout)
        data = report_service.corpus_data(service, corpus)
    written = dashboard.write_report(data, out)
    plots = dashboard.applicable(data)
    console.print(f"{out}: {len(written)} files, PNG and SVG of {', '.join(plots) or 'nothing (no data)'}")
