"""The smallest FastAPI app that serves ``/nodes/{id}/neighbors``: the framework's floor for that route.

``bench/api.py`` starts it beside the real API (``uvicorn bench.api_floor:app``, same settings,
same Cypher builder, same :class:`~graphstore.readonly.ReadRunner`, JSON by the standard library)
and times it in the same alternation. It has no middleware, no service layer and no response
model, so the gap between it and the direct driver call is what uvicorn, FastAPI's routing and
parameter validation, the worker-thread hand-off and loopback HTTP cost by themselves; the gap
between it and the real API is what argweb adds on top.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Annotated

from fastapi import FastAPI, Query
from starlette.responses import Response

from api.services.graph import open_driver
from api.settings import get_settings
from graphstore import browse
from graphstore.readonly import ReadRunner

app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
_QUERY = browse.neighbors([], "both", 1)


@cache
def _runner() -> ReadRunner:
    # Connected on the first request: nothing heavy at import time.
    settings = get_settings()
    return ReadRunner(open_driver(settings, start=False), settings.neo4j_database, settings.cypher_timeout)


@app.get("/ready")
def ready() -> Response:
    """Answer once the driver is connected (what the benchmark polls before it times anything)."""
    _runner()
    return Response(b"{}", media_type="application/json")


@app.get("/nodes/{node_id:path}/neighbors")
def neighbors(
    node_id: str,
    direction: Annotated[str, Query(pattern="^(out|in|both)$")] = "both",
    depth: Annotated[int, Query(ge=1, le=3)] = 1,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> Response:
    """The depth-1 neighbourhood rows of a node, as JSON (``direction`` and ``depth`` are parsed only)."""
    rows = _runner().rows(_QUERY, id=node_id, limit=limit)
    return Response(json.dumps(rows), media_type="application/json")
