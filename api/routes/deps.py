"""Request-scoped dependencies: settings, driver, services and the API-key check."""

from __future__ import annotations

import functools
import hmac
from collections.abc import Callable

from fastapi import Request
from fastapi.concurrency import run_in_threadpool
from neo4j import Driver

from api.services.corpora import undo_soon
from api.services.graph import Graph
from api.settings import Settings
from graphstore.browsing import BrowseService
from ontology.errors import UnauthorizedError


def settings(request: Request) -> Settings:
    """The app's settings."""
    return request.app.state.settings


def driver(request: Request) -> Driver:
    """The app's Neo4j driver (connected on the first request that needs it).

    Raises:
        DatabaseUnavailableError: Neo4j cannot be reached.
    """
    graph: Graph = request.app.state.graph
    return graph.driver()


def undo(request: Request) -> Callable[[list[str]], list[str]]:
    """What a read calls with the corpora it met half-loaded by an interrupted ingest: their undo, in
    the background (:func:`api.services.corpora.undo_soon`)."""
    return functools.partial(undo_soon, request.app.state.graph)


def _browse(request: Request, drv: Driver) -> BrowseService:
    cfg = settings(request)
    return BrowseService(drv, cfg.neo4j_database, cfg.cypher_timeout, undo=undo(request))


def browse(request: Request) -> BrowseService:
    """A browse service over the app's driver (for code already running in a worker thread)."""
    return _browse(request, driver(request))


async def browse_service(request: Request) -> BrowseService:
    """:func:`browse` as a route dependency, resolved on the event loop.

    FastAPI runs a sync dependency in the thread pool: a second thread hand-off per request on
    top of the route's own, which costs more than the whole dependency on a busy machine. Only
    connecting (the first request, or while Neo4j is away) goes to a worker thread here.

    Raises:
        DatabaseUnavailableError: Neo4j cannot be reached.
    """
    graph: Graph = request.app.state.graph
    drv = graph.connected()
    if drv is None:
        drv = await run_in_threadpool(graph.driver)
    return _browse(request, drv)


def require_key(request: Request) -> None:
    """Let a write through only with the configured API key in ``X-API-Key``.

    Raises:
        UnauthorizedError: No key configured (writes disabled), or a missing or wrong key.
    """
    expected = settings(request).api_key
    if expected is None or not expected.get_secret_value():
        raise UnauthorizedError("writes are disabled: no API key is configured on the server (ARGWEB_API_KEY)")
    given = request.headers.get("x-api-key", "")
    if not hmac.compare_digest(given.encode(), expected.get_secret_value().encode()):
        raise UnauthorizedError("this write needs a valid API key in the X-API-Key header")
