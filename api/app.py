"""The argweb HTTP API (FastAPI): REST graph endpoints, Cypher, SPARQL, AIF, Linked Data, pages.

The graph is reached through :class:`api.services.graph.Graph` with the same resolution as the
CLI (``ARGWEB_NEO4J_URI``, else the embedded server of the data directory), except that the API
never starts the embedded server: it connects on the first request that needs the graph, answers
503 while the database is away and recovers by itself when it is back. Errors are mapped to
``application/problem+json`` responses by :func:`api.errors.outcome` (see :mod:`api.problems`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api import problems
from api.services.graph import Graph
from api.settings import Settings, get_settings

DESCRIPTION = """
Read the Argument Web graph of argweb: corpora, dialogues and documents, nodes and their
neighbourhoods, gold and predicted relations, full-text search and annotator agreement; run
read-only Cypher and SPARQL 1.1 queries; export and import AIF maps (also as xAIF and OVA3); run
argweb's models as oAMF modules on xAIF; dereference the IRIs of the RDF export. Writes need the
`X-API-Key` header. Errors are `application/problem+json`.
"""


class BodyLimit:
    """ASGI middleware refusing request bodies over ``limit`` bytes with 413 problem+json.

    A declared ``Content-Length`` is checked up front; a chunked body is counted as it arrives.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        detail = f"request body larger than {self.limit} bytes"
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await problems.problem(413, detail, "too-large", scope.get("path"))(scope, receive, send)
            return
        seen = 0
        started = False

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited, tracked)
        except _TooLarge:
            if not started:
                await problems.problem(413, detail, "too-large", scope.get("path"))(scope, receive, send)


class _TooLarge(Exception):
    pass


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; nothing connects to Neo4j at import or build time."""
    from api.routes import aif, amf, graph, linked, pages, predict, query
    from api.services import predictors

    cfg = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # A short connect/retry limit: with Neo4j away every graph route answers 503 at once.
        app.state.graph = Graph(cfg, start=False, timeout=cfg.neo4j_connect_timeout)
        try:
            yield
        finally:
            app.state.graph.close()

    # /docs is served by api.routes.pages from the API's own static files (no CDN); no ReDoc.
    app = FastAPI(
        title="argweb", version="0.1.0", description=DESCRIPTION, lifespan=lifespan, docs_url=None, redoc_url=None
    )
    app.state.settings = cfg
    predictors.install()
    problems.install(app)
    if cfg.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=cfg.cors_origins,
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=["Accept", "Content-Type", "X-API-Key"],
        )
    app.add_middleware(BodyLimit, limit=cfg.request_size_limit)

    @app.get("/stats", tags=["service"])
    def stats(request: Request) -> dict[str, Any]:
        """Counts per label, relationship type and corpus (as ``argweb stats --json``)."""
        from api.services import corpora

        return corpora.stats(request.app.state.graph)

    for module in (graph, query, aif, linked, predict, amf, pages):
        app.include_router(module.router)
    _document_problems(app)
    return app


def _document_problems(app: FastAPI) -> None:
    """Build the OpenAPI document once, with error bodies typed as they are served (problem+json)."""
    from fastapi.openapi.utils import get_openapi

    from api.routes.schemas import truthful_openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            built = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            app.openapi_schema = truthful_openapi(built)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def __getattr__(name: str) -> Any:
    # `uvicorn api.app:app` asks for `app`; building it lazily keeps imports free of I/O.
    if name == "app":
        return create_app()
    raise AttributeError(name)
