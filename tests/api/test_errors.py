"""One mapping from error class to outcome, as the CLI and the HTTP API apply it."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.app import create_app
from api.errors import outcome
from api.settings import get_settings
from graphstore.runtime import free_port
from ontology.errors import (
    ApiError,
    ArgwebError,
    DatabaseUnavailableError,
    GraphStoreError,
    InvalidQueryError,
    LoaderError,
    ModelError,
    NotFoundError,
    OntologyError,
)
from ontology.sparql import SparqlStore


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (ApiError("bad option"), 400, 2),
        (InvalidQueryError("syntax"), 400, 2),
        (NotFoundError("no such corpus"), 404, 2),
        (LoaderError("file.json: record 3: bad"), 422, 2),
        (DatabaseUnavailableError("cannot connect"), 503, 1),
        (GraphStoreError("write failed"), 500, 1),
        (OntologyError("undeclared term"), 500, 1),
        (ModelError("diverged"), 500, 1),
        (ArgwebError("anything else"), 500, 1),
        (RuntimeError("bug"), 500, 1),
    ],
)
def test_outcome_per_error_class(error: BaseException, status: int, code: int) -> None:
    got = outcome(error)
    assert (got.http_status, got.exit_code) == (status, code)
    assert str(error) in got.message


def test_cli_exit_codes_tell_client_mistakes_from_an_absent_database(tmp_path: Path) -> None:
    from api.cli.main import app

    with SparqlStore(tmp_path / "store"):
        pass  # an empty store to query

    runner = CliRunner()
    away = {"ARGWEB_NEO4J_URI": f"bolt://127.0.0.1:{free_port()}"}
    result = runner.invoke(app, ["stats"], env=away)
    assert result.exit_code == 1 and "cannot connect to Neo4j" in " ".join(result.output.split())
    result = runner.invoke(app, ["export", "aif", "out.json"], env=away)  # neither --dialogue nor --corpus
    assert result.exit_code == 2 and "give exactly one of --dialogue ID or --corpus NAME" in result.output
    result = runner.invoke(app, ["sparql", "SELECT * WHERE {", "--store", str(tmp_path / "store")], env=away)
    assert result.exit_code == 2 and "invalid SPARQL query" in result.output


def test_app_answers_503_while_the_database_is_away() -> None:
    settings = get_settings().with_overrides(neo4j_uri=f"bolt://127.0.0.1:{free_port()}")
    with TestClient(create_app(settings)) as client:
        health = client.get("/health")
        stats = client.get("/stats")
    assert health.status_code == stats.status_code == 503
    assert "cannot connect to Neo4j" in health.json()["detail"]
