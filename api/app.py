"""The argweb HTTP API (FastAPI).

The driver is opened once per process from :class:`~api.settings.Settings` (an external Neo4j via
``ARGWEB_NEO4J_URI`` in production); the embedded server is never started from here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request

from api.settings import Settings
from graphstore.runtime import connect
from graphstore.store import GraphStore
from ontology.errors import ArgwebError


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; the Neo4j connection is opened at start-up, not at import."""
    cfg = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        uri = cfg.neo4j_uri or f"bolt://127.0.0.1:{cfg.neo4j_port}"
        app.state.driver = connect(uri, cfg.neo4j_user, cfg.neo4j_password.get_secret_value())
        try:
            yield
        finally:
            app.state.driver.close()

    app = FastAPI(title="argweb", version="0.1.0", lifespan=lifespan)

    def store(request: Request) -> GraphStore:
        return GraphStore(request.app.state.driver, cfg.neo4j_database)

    @app.get("/health")
    def health(gs: GraphStore = Depends(store)) -> dict[str, str]:  # noqa: B008
        try:
            gs.run("RETURN 1 AS ok")
        except ArgwebError as e:
            raise HTTPException(status_code=503, detail=str(e)) from e
        return {"status": "ok"}

    @app.get("/stats")
    def stats(gs: GraphStore = Depends(store)) -> dict[str, Any]:  # noqa: B008
        try:
            return gs.stats()
        except ArgwebError as e:
            raise HTTPException(status_code=503, detail=str(e)) from e

    return app


def __getattr__(name: str) -> Any:
    # `uvicorn api.app:app` asks for `app`; building it lazily keeps imports free of I/O.
    if name == "app":
        return create_app()
    raise AttributeError(name)
