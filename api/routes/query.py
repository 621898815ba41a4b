"""Query endpoints: read-only Cypher and the SPARQL 1.1 Protocol."""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Annotated, Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import iterate_in_threadpool, run_in_threadpool
from fastapi.responses import Response, StreamingResponse
from starlette.background import BackgroundTask

from api.routes import deps
from api.routes.schemas import CypherRequest, CypherResult, GraphSchemaModel, Problem, Question
from api.services import query as svc
from api.services.query import sparql_store
from graphstore.readonly import CypherStream
from graphstore.vocabulary import graph_schema
from ontology.client_query import MAX_QUERY_CHARS
from ontology.errors import ApiError, DatabaseUnavailableError, QueryRefusedError
from ontology.sparql_protocol import media_type
from ontology.sparql_run import SparqlRun

router = APIRouter(tags=["query"])
# Seconds between two looks at whether a SPARQL client is still connected.
WATCH_INTERVAL = 0.2
# Bytes of Cypher rows gathered into one write of the streamed answer.
CHUNK = 64 * 1024

_QUERY_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": Problem, "description": "Invalid query, or stopped by the time limit"},
    403: {"model": Problem, "description": "Refused: the query would write or call out"},
    413: {"model": Problem, "description": "Body over the size limits (bytes, items, string length, nesting)"},
    503: {"model": Problem, "description": "Backend unreachable, or as many queries running as allowed"},
}
_SPARQL_RESULTS = {
    media: {"schema": {"type": "string"}}
    for media in (
        "application/sparql-results+json",
        "text/csv",
        "text/tab-separated-values",
        "application/sparql-results+xml",
        "text/turtle",
        "application/n-triples",
        "application/ld+json",
    )
}


@router.get("/competency-questions", response_model=list[Question], responses={404: {"model": Problem}})
def competency_questions() -> list[Question]:
    """The competency questions, each in Cypher (for ``/cypher``) and SPARQL (for ``/sparql``)."""
    return [
        Question(name=q.name, title=q.title, requires=list(q.requires), cypher=q.cypher, sparql=q.sparql)
        for q in svc.competency_questions()
    ]


@router.get("/schema", response_model=GraphSchemaModel, responses={503: {"model": Problem}})
def schema(request: Request) -> GraphSchemaModel:
    """The graph's labels, relationship types and property keys, and the ontology's SPARQL prefixes,
    classes and properties: what the workbench completes."""
    cfg = deps.settings(request)
    found = graph_schema(deps.driver(request), cfg.neo4j_database, cfg.cypher_timeout)
    return GraphSchemaModel(
        labels=list(found.labels),
        relationship_types=list(found.relationship_types),
        property_keys=list(found.property_keys),
        prefixes=found.prefixes,
        classes=list(found.classes),
        properties=list(found.properties),
    )


@router.post("/cypher", response_model=CypherResult, responses=_QUERY_ERRORS)
def cypher(body: CypherRequest, request: Request) -> StreamingResponse:
    """Run a read-only Cypher query (READ transaction, time limit, row limit); rows are streamed.

    Writes, schema commands, LOAD CSV, administration commands and procedures outside a
    read-only allow-list are refused (403) by a planner check and, failing that, by the database;
    so are loops inside one expression that the time limit could not stop (``reduce``, nested
    comprehensions, ``range`` outside ``UNWIND``). A parameter the driver cannot send (a lone
    surrogate, an integer beyond 64 bits, nesting deeper than 32) is a 400 naming it. A body over
    the size limits (items, string length, nesting) is a 413; with ``cypher_max_running`` queries
    running, one more is a 503 with ``Retry-After``. NaN and infinite numbers are answered as the
    strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``.
    """
    cfg = deps.settings(request)
    stream = svc.cypher_stream(
        deps.driver(request),
        cfg.neo4j_database,
        body.query,
        body.parameters,
        cfg.cypher_timeout,
        cfg.cypher_row_limit,
        cfg.cypher_max_running,
    )
    # The session is released however the response ends: at the end of the rows, when the client
    # goes away mid-stream (the body's finally) or before it started (the background task).
    return StreamingResponse(
        _released(stream), media_type="application/json", background=BackgroundTask(_close, stream)
    )


def cypher_json(items: Iterable[tuple[str, Any]]) -> Iterator[bytes]:
    """Serialise :func:`api.services.query.cypher_stream` items as one JSON document, written as rows arrive.

    ``{"columns": [...], "rows": [[...], ...], "truncated": bool, "row_count": n}``; when the query
    fails after the first row was sent, the document ends with an ``"error"`` member instead.
    """
    first = True
    buffer: list[bytes] = []
    size = 0
    try:
        for kind, value in items:
            if kind == "columns":
                buffer.append(b'{"columns":' + json.dumps(value).encode() + b',"rows":[')
            elif kind == "row":
                piece = (b"" if first else b",") + json.dumps(value, default=str).encode()
                buffer.append(piece)
                size += len(piece)
                first = False
                if size >= CHUNK:
                    # Rows go out in chunks: one write per row would cost a thread hop each.
                    yield b"".join(buffer)
                    buffer, size = [], 0
            else:
                buffer.append(b'],"truncated":' + json.dumps(value["truncated"]).encode())
                buffer.append(b',"row_count":' + str(value["rows"]).encode() + b"}")
    except (ApiError, DatabaseUnavailableError) as e:
        buffer.append(b'],"truncated":true,"error":' + json.dumps(str(e)).encode() + b"}")
    yield b"".join(buffer)


async def _released(stream: CypherStream) -> AsyncIterator[bytes]:
    try:
        async for chunk in iterate_in_threadpool(cypher_json(stream)):
            yield chunk
    finally:
        if not stream.closed:
            # Not awaited: a cancelled response must not wait, and closing may wait on the server.
            asyncio.get_running_loop().run_in_executor(None, stream.close)


async def _close(stream: CypherStream) -> None:
    if not stream.closed:
        await run_in_threadpool(stream.close)


def _sparql_run(request: Request, query: str, fmt: str | None, cancel: threading.Event) -> SparqlRun:
    cfg = deps.settings(request)
    return svc.run_sparql(
        sparql_store(cfg),
        query,
        fmt=fmt,
        accept=request.headers.get("accept"),
        timeout=cfg.sparql_timeout,
        memory_mb=cfg.sparql_memory_mb,
        allow_service=cfg.allow_sparql_service,
        strict_format=False,
        max_workers=cfg.sparql_max_workers,
        cancel=cancel,
    )


async def sparql_answer(
    request: Request, start: Callable[[threading.Event], SparqlRun], limit: int
) -> tuple[SparqlRun, bytes]:
    """Start a SPARQL evaluation and read its whole result, watching the client all along.

    ``start`` (which takes a place in the worker pool: :func:`api.services.query.run_sparql` with
    the settings' cap) runs in a thread and is given an event that is set when the client goes
    away; so is the read of the result. The client is watched from before the worker starts: an
    aggregate or an ASK sends nothing until it is done, and its worker must end with its client
    all the same. The worker is killed and its place given back on every path.

    Raises:
        ApiError: The client went away (nobody reads the answer), or from ``start``.
        QueryLimitError, DatabaseUnavailableError: From ``start`` and :meth:`SparqlRun.collect`.
    """
    cancel = threading.Event()
    started: list[SparqlRun] = []

    def begin() -> SparqlRun:
        run = start(cancel)
        started.append(run)
        if cancel.is_set():
            # The route gave up while this thread was starting the worker: nobody else will close it.
            run.close()
        return run

    async def watch() -> None:
        while not cancel.is_set():
            if await request.is_disconnected():
                cancel.set()
                return
            await asyncio.sleep(WATCH_INTERVAL)

    watcher = asyncio.create_task(watch())
    try:
        run = await run_in_threadpool(begin)
        body = await run_in_threadpool(run.collect, limit, cancel)
    finally:
        # Set before the runs are closed, so that a start finishing now closes its own (see begin).
        cancel.set()
        watcher.cancel()
        for run in started:
            run.close()
    return run, body


async def _sparql_response(request: Request, query: str, fmt: str | None) -> Response:
    """Evaluate in a worker and answer the whole result, or a problem.

    The result is read completely (up to ``sparql_result_limit`` bytes) before the answer starts:
    a result cut at the time limit is a 400, never a 200 with a truncated body. From the start of
    the evaluation the client's connection is watched (:func:`sparql_answer`): a client that goes
    away has its worker killed at once, whatever the query form.
    """
    cfg = deps.settings(request)
    run, body = await sparql_answer(
        request, functools.partial(_sparql_run, request, query, fmt), cfg.sparql_result_limit
    )
    return Response(body, media_type=media_type(run.form, run.fmt), headers={"Vary": "Accept"})


_FORMAT = Annotated[
    str | None,
    Query(
        max_length=100,
        description="json, csv, tsv, xml (SELECT/ASK); ttl, nt, jsonld (CONSTRUCT/DESCRIBE); "
        "a name that does not fit the query is ignored and Accept decides",
    ),
]


@router.get(
    "/sparql",
    response_class=Response,
    responses={200: {"content": _SPARQL_RESULTS, "description": "Query results"}, **_QUERY_ERRORS},
)
async def sparql_get(
    request: Request,
    query: Annotated[str, Query(min_length=1, max_length=MAX_QUERY_CHARS)],
    format: _FORMAT = None,
) -> Response:
    """SPARQL 1.1 Protocol query via GET; the result format follows ``Accept`` (or ``format``)."""
    return await _sparql_response(request, query, format)


@router.post(
    "/sparql",
    response_class=Response,
    responses={200: {"content": _SPARQL_RESULTS, "description": "Query results"}, **_QUERY_ERRORS},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/x-www-form-urlencoded": {
                    "schema": {
                        "type": "object",
                        "properties": {"query": {"type": "string"}, "update": {"type": "string"}},
                    }
                },
                "application/sparql-query": {"schema": {"type": "string"}},
            },
        }
    },
)
async def sparql_post(request: Request, format: _FORMAT = None) -> Response:
    """SPARQL 1.1 Protocol query via POST (form-encoded ``query=`` or an ``application/sparql-query``
    body). Updates (``update=`` or ``application/sparql-update``) are refused with 403."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ApiError("the request body is not UTF-8") from e
    if ctype == "application/sparql-query":
        query = text
    elif ctype == "application/x-www-form-urlencoded":
        form = parse_qs(text, keep_blank_values=True)
        if "update" in form:
            raise QueryRefusedError("SPARQL update refused: the endpoint is read-only")
        values = form.get("query", [])
        if len(values) != 1:
            raise ApiError("give exactly one query= parameter")
        query = values[0]
    elif ctype == "application/sparql-update":
        raise QueryRefusedError("SPARQL update refused: the endpoint is read-only")
    else:
        from starlette.exceptions import HTTPException

        raise HTTPException(415, "send application/sparql-query or a form with query=")
    return await _sparql_response(request, query, format)
