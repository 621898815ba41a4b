"""Any SPARQL 1.1 server in place of the embedded store: a real Fuseki (Maven Central) and a real
Oxigraph server (PyPI) on loopback answer the competency questions as the embedded store does, and
``/sparql``, the Linked Data routes and ``argweb rdf load`` keep their rules over them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from neo4j import Driver
from typer.testing import CliRunner

from api.app import create_app
from api.cli.main import app as cli_app
from api.services.query import run_sparql
from api.settings import Settings
from bench.sparql_servers import SparqlServer, fuseki, oxigraph_server
from graphstore.export import GraphReader
from ontology.competency import CompetencyQuestion, load_questions, normalise
from ontology.errors import QueryLimitError
from ontology.rdf import RdfMapper, write_export
from ontology.sparql import SparqlStore, solutions_from_json
from ontology.sparql_remote import RemoteStore, health
from tests.rdf_support import ingest_samples

QUESTIONS = load_questions()
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
HEAVY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"


@dataclass(frozen=True)
class Sample:
    """The sample graph's N-Triples export and the embedded store holding it."""

    export: Path
    embedded: SparqlStore


@pytest.fixture(scope="module")
def sample(driver: Driver, tmp_path_factory: pytest.TempPathFactory) -> Sample:
    ingest_samples(driver)
    export = tmp_path_factory.mktemp("remote") / "sample.nt"
    reader = GraphReader(driver, page_size=500)
    write_export(export, reader.nodes(), reader.relationships(), fmt="nt", mapper=RdfMapper())
    embedded = SparqlStore()
    embedded.add_file(export)
    return Sample(export, embedded)


def cli(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli_app, args, env=env, catch_exceptions=False)
    return result.exit_code, " ".join(result.output.split())


def remote_env(store: RemoteStore, data_dir: Path) -> dict[str, str]:
    return {
        "ARGWEB_DATA_DIR": str(data_dir),
        "ARGWEB_SPARQL_ENDPOINT": store.query_url,
        "ARGWEB_SPARQL_STORE_ENDPOINT": store.store_url or "",
        "COLUMNS": "2000",
    }


def count(store: RemoteStore) -> int:
    _, rows = solutions_from_json(run_sparql(store, COUNT, fmt="json", timeout=60).collect(1 << 20))
    return int(rows[0]["n"])


@pytest.fixture(scope="module", params=["fuseki", "oxigraph-server"])
def server(
    request: pytest.FixtureRequest, sample: Sample, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SparqlServer]:
    work = tmp_path_factory.mktemp(request.param)
    start = fuseki if request.param == "fuseki" else oxigraph_server
    with start(work, query_timeout=20.0) as running:
        # The export goes in the way a deployment loads it: argweb rdf load, to the Graph Store endpoint.
        code, out = cli(["rdf", "load", str(sample.export)], remote_env(running.store, work / "data"))
        assert code == 0, out
        assert f"{len(sample.embedded):,} triples loaded" in out
        yield running


@pytest.mark.parametrize("q", QUESTIONS, ids=[q.name for q in QUESTIONS])
def test_competency_questions_give_the_embedded_answers(
    q: CompetencyQuestion, server: SparqlServer, sample: Sample
) -> None:
    columns, expected = sample.embedded.select(q.sparql)
    body = run_sparql(server.store, q.sparql, fmt="json", timeout=60).collect(64 << 20)
    names, rows = solutions_from_json(body)
    assert names == columns
    assert normalise(rows, columns) == normalise(expected, columns)


def test_the_api_keeps_its_rules_over_the_server(server: SparqlServer, sample: Sample, tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        sparql_endpoint=server.store.query_url,
        sparql_store_endpoint=server.store.store_url,
        sparql_timeout=120.0,  # generous: a loaded machine is slow, and the time limit has its own check below
    )
    with TestClient(create_app(settings)) as client:
        got = client.get("/sparql", params={"query": COUNT}, headers={"accept": "text/csv"})
        assert got.status_code == 200 and got.headers["content-type"].startswith("text/csv")
        assert got.text.split()[-1] == str(len(sample.embedded))
        # The argweb prefixes are declared for the server, as the embedded store predeclares them.
        ask = client.post(
            "/sparql",
            content="ASK { ?x a aw:Attack }",
            headers={"content-type": "application/sparql-query", "accept": "application/sparql-results+json"},
        )
        assert ask.status_code == 200 and ask.json()["boolean"] is True
        refused = client.post("/sparql", data={"update": "DROP ALL"})
        assert refused.status_code == 403
        assert client.get("/sparql", params={"query": "DELETE WHERE { ?s ?p ?o }"}).status_code == 403
        service = "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"
        assert client.get("/sparql", params={"query": service}).status_code == 403
        invalid = client.get("/sparql", params={"query": "SELECT ?x WHERE { ?x"})
        assert invalid.status_code == 400 and "invalid SPARQL" in invalid.json()["detail"]
        # Linked Data: a resource of the export dereferences from the server, in each RDF syntax.
        node = client.get("/sparql", params={"query": "SELECT ?p WHERE { ?p a aw:Proposition } LIMIT 1"})
        iri = node.json()["results"]["bindings"][0]["p"]["value"]
        path = "/data/" + iri.rsplit("/data/", 1)[1]
        for media in ("text/turtle", "application/n-triples", "application/ld+json"):
            described = client.get(path, headers={"accept": media})
            assert described.status_code == 200, (media, described.text[:300])
            assert described.headers["content-type"].startswith(media) and described.content.strip()
        assert client.get("/data/no-such-node", headers={"accept": "text/turtle"}).status_code == 404
    # The time limit is argweb's deadline on the whole exchange, whatever the server does.
    with TestClient(create_app(settings.with_overrides(sparql_timeout=2.0))) as client:
        slow = client.get("/sparql", params={"query": HEAVY})
    assert slow.status_code == 400 and "time limit (2 s)" in slow.json()["detail"]
    with pytest.raises(QueryLimitError, match="time limit"):
        run_sparql(server.store, HEAVY, fmt="json", timeout=1.0).collect(1 << 20)


def test_a_bad_file_leaves_the_server_as_it_was(server: SparqlServer, sample: Sample, tmp_path: Path) -> None:
    env = remote_env(server.store, tmp_path / "data")
    before = count(server.store)
    broken = tmp_path / "broken.nt"
    broken.write_text('<urn:a> <urn:b> "ok" .\n<urn:a> <urn:b> "unterminated .\n', encoding="utf-8")
    code, out = cli(["rdf", "load", str(broken)], env)
    assert code == 2 and "broken.nt" in out and "store left unchanged" in out
    quads = tmp_path / "graphs.nq"
    quads.write_text('<urn:a> <urn:b> "c" <urn:g> .\n', encoding="utf-8")
    code, out = cli(["rdf", "load", str(quads)], env)
    assert code == 2 and "default graph" in out
    assert count(server.store) == before
    # --append adds to what is there; the sample export put back leaves the store as the tests found it.
    extra = tmp_path / "extra.nt"
    extra.write_text("<urn:argweb-test> <urn:p> <urn:o> .\n", encoding="utf-8")
    assert cli(["rdf", "load", "--append", str(extra)], env)[0] == 0
    assert count(server.store) == before + 1
    assert cli(["rdf", "load", str(sample.export)], env)[0] == 0
    assert count(server.store) == before
    answer = cli(["sparql", "--format", "csv", COUNT], env)
    assert answer[0] == 0 and answer[1].split()[-1] == str(before), answer


def test_a_server_that_is_away_is_a_503(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, sparql_endpoint="http://127.0.0.1:9/query")
    with TestClient(create_app(settings)) as client:
        away = client.get("/sparql", params={"query": COUNT})
    assert away.status_code == 503 and "does not answer" in json.loads(away.text)["detail"]
    assert health(RemoteStore("http://127.0.0.1:9/query")).startswith("unavailable: the SPARQL server")


def test_health_asks_the_server(server: SparqlServer) -> None:
    assert health(server.store) == "ok"
