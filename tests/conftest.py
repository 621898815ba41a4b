"""Test session: one real embedded Neo4j on a free port with a temporary data directory.

The server is found and started through :mod:`api.services.graph`, the same resolution the CLI
and the API use. If it cannot start, every test that needs it errors (no skipping). Tests under
``tests/integration/`` are marked ``integration`` here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import Driver

from api.services.graph import embedded_server, open_driver, private_settings
from api.settings import Settings
from graphstore.runtime import EmbeddedNeo4j
from graphstore.store import GraphStore

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
SAMPLES = DATA / "corpora"
PASSWORD = "argweb-test-password"
INTEGRATION = Path(__file__).resolve().parent / "integration"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under ``tests/integration/`` as ``integration``."""
    for item in items:
        if INTEGRATION in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.integration)


def shared_corpora() -> Path | None:
    """``../shared/corpora`` (or ``$ARGWEB_CORPORA``) when present."""
    env = os.environ.get("ARGWEB_CORPORA")
    for candidate in ([Path(env)] if env else []) + [ROOT.parent / "shared" / "corpora"]:
        if candidate.is_dir():
            return candidate
    return None


def embedded_settings(data_dir: Path, port: int | None = None, password: str = PASSWORD) -> Settings:
    """Settings of an embedded server in ``data_dir`` (on a free port unless given) with a test password."""
    return private_settings(data_dir, password, port=port, heap="1g")


@pytest.fixture(scope="session")
def neo4j_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings naming the session's embedded server."""
    return embedded_settings(tmp_path_factory.mktemp("argweb"))


@pytest.fixture(scope="session")
def neo4j_server(neo4j_settings: Settings) -> Iterator[EmbeddedNeo4j]:
    server = embedded_server(neo4j_settings)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def driver(neo4j_server: EmbeddedNeo4j, neo4j_settings: Settings) -> Iterator[Driver]:
    drv = open_driver(neo4j_settings, start=False)
    try:
        yield drv
    finally:
        drv.close()


@pytest.fixture
def store(driver: Driver) -> GraphStore:
    """A store over an empty graph."""
    gs = GraphStore(driver, batch_size=500)
    gs.clear()
    return gs
