"""The argweb HTTP API (FastAPI): REST graph endpoints, Cypher, SPARQL, AIF, Linked Data, pages.

The graph is reached through :class:`api.services.graph.Graph` with the same resolution as the
CLI (``ARGWEB_NEO4J_URI``, else the embedded server of the data directory), except that the API
never starts the embedded server: it connects on the first request that needs the graph, answers
503 while the database is away and recovers by itself when it is back. Errors are mapped to
``application/problem+json`` responses by :func:`api.errors.outcome` (see :mod:`api.problems`).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from api import problems
from api.body_guard import JsonBodyGuard, body_limits, replaying
from api.json_response import FiniteJSONResponse
from api.services.graph import Graph
from api.settings import Settings, get_settings

DESCRIPTION = """
Read the Argument Web graph of argweb: corpora, dialogues and documents, nodes and their
neighbourhoods, gold and predicted relations, full-text search and annotator agreement; run
read-only Cypher and SPARQL 1.1 queries; export and import AIF maps (also as xAIF and OVA3); run
argweb's models as oAMF modules on xAIF; dereference the IRIs of the RDF export. Writes need the
`X-API-Key` header. Errors are `application/problem+json`.
"""


# How much of a body over the limit is read (and dropped) before the 413 is sent, in limits.
DRAIN_FACTOR = 3


class BodyLimit:
    """ASGI middleware refusing request bodies over ``limit`` bytes with 413 problem+json.

    A declared ``Content-Length`` is checked up front. A body without one (chunked) is read here,
    up to ``limit`` bytes, before the app sees any of it, and handed on whole: a body found too
    large while a route reads it could only be reported by that route, which FastAPI turns into a
    400 ("error parsing the body").
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        detail = f"request body larger than {self.limit} bytes"
        too_large = problems.problem(413, detail, "too-large", scope.get("path"))
        if declared is not None:
            if declared.isdigit() and int(declared) > self.limit:
                await too_large(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                # The client went away before its body was complete: nothing to answer.
                return
            body = message.get("body", b"")
            size += len(body)
            if size > self.limit:
                # Read on (up to three times the limit, kept nowhere) so that a client still sending
                # gets the answer rather than a connection reset.
                while message.get("more_body", False) and size <= DRAIN_FACTOR * self.limit:
                    message = await receive()
                    if message["type"] != "http.request":
                        return
                    size += len(message.get("body", b""))
                await too_large(scope, receive, send)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        await self.app(scope, replaying(b"".join(chunks), receive), send)


# Query parameters that would carry a secret in the address. Addresses end up in access logs,
# browser histories and proxies: such a request is refused, and the value is blanked out of the
# request (so the access log line of the refusal does not hold it either).
SECRET_PARAMETERS = frozenset(
    {"api_key", "apikey", "api-key", "x-api-key", "x_api_key", "key", "token", "access_token"}
)


class NoSecretsInAddress:
    """ASGI middleware refusing (400) a request whose query string names an API key or token."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = scope.get("query_string") or b""
        if scope["type"] == "http" and query:
            pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
            named = sorted({name for name, _ in pairs if name.lower() in SECRET_PARAMETERS})
            if named:
                # The scope is the server's own: its access log line then shows the blanked value.
                scope["query_string"] = urlencode(
                    [(n, "REDACTED" if n.lower() in SECRET_PARAMETERS else v) for n, v in pairs]
                ).encode("latin-1")
                detail = (
                    f"query parameter {', '.join(named)}: an API key is sent in the X-API-Key header, never in the "
                    "address (addresses are written to logs); the request was refused, the key was not logged"
                )
                await problems.problem(400, detail, "secret-in-address", scope.get("path"))(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; nothing connects to Neo4j at import or build time."""
    from api.routes import aif, amf, graph, linked, pages, predict, query
    from api.services import corpora, mine, predictors

    cfg = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # A short connect/retry limit: with Neo4j away every graph route answers 503 at once.
        app.state.graph = Graph(cfg, start=False, timeout=cfg.neo4j_connect_timeout)
        # Leftovers of writes killed mid-way (an API killed during POST /aif) are undone in the
        # background: the API answers meanwhile, and reads refuse a corpus still marked loading.
        threading.Thread(
            target=corpora.recover_leftovers, args=(app.state.graph,), name="argweb-recover", daemon=True
        ).start()
        try:
            yield
        finally:
            app.state.graph.close()

    # /docs is served by api.routes.pages from the API's own static files (no CDN); no ReDoc.
    # Every JSON answer is strict JSON: a NaN or infinite number is written as a string (docs/api.md).
    app = FastAPI(
        title="argweb",
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        default_response_class=FiniteJSONResponse,
    )
    app.state.settings = cfg
    predictors.install()
    mine.install()
    problems.install(app)
    if cfg.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=cfg.cors_origins,
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=["Accept", "Content-Type", "X-API-Key"],
        )
    # Added before BodyLimit, so it runs inside it: the bytes are bounded first, then what they hold.
    app.add_middleware(JsonBodyGuard, limits=body_limits(cfg), paths=("/cypher", "/amf/"))
    app.add_middleware(BodyLimit, limit=cfg.request_size_limit)
    # Added last, so it runs first: a key in the address is blanked before anything else sees it.
    app.add_middleware(NoSecretsInAddress)

    @app.get("/stats", tags=["service"])
    def stats(request: Request) -> dict[str, Any]:
        """Counts per label, relationship type and corpus (as ``argweb stats --json``)."""
        from api.services import corpora

        return corpora.stats(request.app.state.graph).as_dict()

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
