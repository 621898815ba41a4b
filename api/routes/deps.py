"""Request-scoped dependencies: settings, driver, services and the API-key check."""

from __future__ import annotations

import hmac

from fastapi import Request
from neo4j import Driver

from api.services.browse import BrowseService
from api.services.graph import Graph
from api.settings import Settings
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


def browse(request: Request) -> BrowseService:
    """A browse service over the app's driver."""
    cfg = settings(request)
    return BrowseService(driver(request), cfg.neo4j_database, cfg.cypher_timeout)


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
