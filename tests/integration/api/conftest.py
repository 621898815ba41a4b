"""Fixtures of the API tests: the shipped samples in the session's Neo4j, their RDF export in an
Oxigraph store, the app in-process and served on a loopback port."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from neo4j import Driver

from api.app import create_app
from api.settings import Settings
from graphstore.cypher import JOURNAL_KEYS
from graphstore.predictions import PredictionStore
from graphstore.runtime import EmbeddedNeo4j
from ontology.labels import RelationLabel
from ontology.records import PredictedRelation, PredictionRun
from tests.conftest import SAMPLES, export_to_oxigraph, load_samples, serve_app, served_settings

API_KEY = "test-api-key-0123456789"
LOADED = ("molweni", "qt30", "m-arg", "sciarg", "contextdep")


@dataclass(frozen=True)
class ApiGraph:
    """The loaded graph and the settings of an app serving it."""

    settings: Settings
    driver: Driver
    predicted: str


def graph_counts(driver: Driver) -> tuple[int, int, tuple[str, ...], tuple[str, ...]]:
    """Nodes, relationships, labels and property keys: what a write would change."""
    records, _, _ = driver.execute_query(
        "MATCH (n) WITH count(n) AS nodes "
        "OPTIONAL MATCH ()-[r]->() WITH nodes, count(r) AS rels "
        "CALL db.labels() YIELD label WITH nodes, rels, collect(label) AS labels "
        "CALL db.propertyKeys() YIELD propertyKey "
        "RETURN nodes, rels, labels, collect(propertyKey) AS keys"
    )
    r = records[0]
    # A re-ingest keeps what it rewrites in journal nodes and removes them when it commits; Neo4j
    # keeps a property key's name once it was used, so the journal's keys outlive its nodes.
    keys = tuple(sorted(k for k in r["keys"] if k not in JOURNAL_KEYS))
    return r["nodes"], r["rels"], tuple(sorted(r["labels"])), keys


def add_prediction(driver: Driver) -> str:
    """One predicted Support between two propositions of qt30:nodeset21318, written through the
    prediction write path; returns the id of the predicted relation node."""
    records, _, _ = driver.execute_query(
        "MATCH (p:Proposition)-[:PART_OF]->(:Discourse {id: 'qt30:nodeset21318'}) RETURN p.id AS id ORDER BY id LIMIT 2"
    )
    source, target = (r["id"] for r in records)
    run = PredictionRun(run_id="run-api-test", model="test-relations", model_version="0.1", task="relations")
    PredictionStore(driver).write(
        run, [PredictedRelation(source=source, target=target, label=RelationLabel("support"), score=0.87)]
    )
    found, _, _ = driver.execute_query("MATCH (r:Relation {run_id: 'run-api-test'}) RETURN r.id AS id")
    return str(found[0]["id"])


@pytest.fixture(scope="package")
def api_graph(neo4j_server: EmbeddedNeo4j, driver: Driver, tmp_path_factory: pytest.TempPathFactory) -> ApiGraph:
    load_samples(driver, LOADED)
    predicted = add_prediction(driver)
    tmp = tmp_path_factory.mktemp("api")
    export_to_oxigraph(driver, tmp)
    settings = served_settings(
        neo4j_server,
        tmp,
        API_KEY,
        cypher_timeout=15.0,
        cypher_row_limit=1000,
        sparql_timeout=10.0,
        sparql_memory_mb=2048,
        request_size_limit=2 * 1024 * 1024,
        cors_origins=["http://example.org"],
    )
    return ApiGraph(settings, driver, predicted)


@pytest.fixture(scope="package")
def client(api_graph: ApiGraph) -> Iterator[TestClient]:
    with TestClient(create_app(api_graph.settings)) as c:
        yield c


@pytest.fixture(scope="package")
def live_url(api_graph: ApiGraph) -> Iterator[str]:
    """The app served by uvicorn on a loopback port, in a thread of the test process."""
    with serve_app(create_app(api_graph.settings)) as url:
        host, _, port = url.removeprefix("http://").partition(":")
        with socket.create_connection((host, int(port)), timeout=5):
            pass
        yield url


def samples() -> Path:
    """The shipped sample corpora."""
    return SAMPLES
