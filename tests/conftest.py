"""Test session: one real embedded Neo4j on a free port with a temporary data directory.

If the server cannot start, every test that needs it errors (no skipping).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import Driver

from graphstore.loaders.registry import SAMPLES
from graphstore.runtime import EmbeddedNeo4j, connect, free_port
from graphstore.store import GraphStore

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
__all__ = ["DATA", "PASSWORD", "ROOT", "SAMPLES", "shared_corpora"]
PASSWORD = "argweb-test-password"


def shared_corpora() -> Path | None:
    """``../shared/corpora`` (or ``$ARGWEB_CORPORA``) when present."""
    env = os.environ.get("ARGWEB_CORPORA")
    for candidate in ([Path(env)] if env else []) + [ROOT.parent / "shared" / "corpora"]:
        if candidate.is_dir():
            return candidate
    return None


@pytest.fixture(scope="session")
def neo4j_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedNeo4j]:
    server = EmbeddedNeo4j(tmp_path_factory.mktemp("neo4j"), password=PASSWORD, port=free_port(), heap="1g")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def driver(neo4j_server: EmbeddedNeo4j) -> Iterator[Driver]:
    info = neo4j_server.info()
    assert info is not None
    drv = connect(info.uri, "neo4j", PASSWORD)
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
