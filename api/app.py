"""The argweb HTTP API (FastAPI).

The graph is reached through :class:`api.services.graph.Graph` with the same resolution as the
CLI (``ARGWEB_NEO4J_URI``, else the embedded server of the data directory), except that the API
never starts the embedded server: it connects on the first request that needs the graph and
answers 503 while the database is away. Errors are mapped to responses by :func:`api.errors.outcome`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse

from api.errors import outcome
from api.services import corpora
from api.services.graph import Graph
from api.settings import Settings, get_settings
from ontology.errors import ArgwebError


def graph(request: Request) -> Graph:
    """The app's graph access (FastAPI dependency)."""
    return request.app.state.graph


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; nothing connects to Neo4j at import or build time."""
    cfg = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.graph = Graph(cfg, start=False)
        try:
            yield
        finally:
            app.state.graph.close()

    app = FastAPI(title="argweb", version="0.1.0", lifespan=lifespan)

    @app.exception_handler(ArgwebError)
    async def argweb_error(request: Request, exc: ArgwebError) -> JSONResponse:
        result = outcome(exc)
        return JSONResponse(status_code=result.http_status, content={"detail": result.message})

    @app.get("/health")
    def health(g: Graph = Depends(graph)) -> dict[str, str]:  # noqa: B008
        g.store().read("RETURN 1 AS ok")
        return {"status": "ok"}

    @app.get("/stats")
    def stats(g: Graph = Depends(graph)) -> dict[str, Any]:  # noqa: B008
        return corpora.stats(g)

    return app


def __getattr__(name: str) -> Any:
    # `uvicorn api.app:app` asks for `app`; building it lazily keeps imports free of I/O.
    if name == "app":
        return create_app()
    raise AttributeError(name)
