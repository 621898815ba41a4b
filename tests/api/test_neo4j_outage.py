"""A Neo4j that does not answer: the driver gives up after the configured timeout, the API answers 503.

No Neo4j is needed: a loopback socket that accepts connections and never speaks Bolt stands for a
hung server (the worst case: a refused connection fails at once anyway).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.problems import PROBLEM
from api.settings import Settings
from graphstore.runtime import connect
from ontology.errors import DatabaseUnavailableError


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port whose listener never answers the Bolt handshake."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield listener.getsockname()[1]


def test_connect_gives_up_after_its_timeout(silent_port: int) -> None:
    started = time.perf_counter()
    with pytest.raises(DatabaseUnavailableError, match="cannot connect to Neo4j"):
        connect(f"bolt://127.0.0.1:{silent_port}", "neo4j", "secret", timeout=1.0)
    assert time.perf_counter() - started < 4.0  # the driver's own default would wait 30 s


def test_the_api_answers_503_problem_json_within_the_connect_timeout(silent_port: int, tmp_path: Path) -> None:
    settings = Settings(neo4j_uri=f"bolt://127.0.0.1:{silent_port}", neo4j_connect_timeout=1.0, data_dir=tmp_path)
    with TestClient(create_app(settings)) as client:
        for path in ("/corpora", "/relations", "/nodes/molweni:x/neighbors", "/health"):
            started = time.perf_counter()
            response = client.get(path)
            took = time.perf_counter() - started
            assert response.status_code == 503, (path, response.text)
            assert response.headers["content-type"] == PROBLEM
            assert response.json()["type"].endswith("/unavailable")
            assert took < 4.0, f"{path} took {took:.1f}s"


def test_the_connect_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Settings(neo4j_connect_timeout=0)
