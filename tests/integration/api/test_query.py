"""/cypher and /sparql: read-only, limited in time and rows, streamed; writes refused with the graph unchanged."""

from __future__ import annotations

import json
import socket
import threading
import time
from urllib.error import HTTPError
from urllib.parse import quote

import pytest
import rdflib
import requests
from fastapi.testclient import TestClient
from SPARQLWrapper import CSV, JSON, N3, TSV, TURTLE, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import EndPointInternalError, QueryBadFormed, SPARQLWrapperException

from tests.integration.api.conftest import ApiGraph, graph_counts

# Every way of writing through /cypher that the database or the planner check must stop.
HOSTILE_CYPHER = [
    "CREATE (n:Hack {id: 'x'}) RETURN n",
    "MERGE (n:Node {id: 'hack'}) RETURN n",
    "MATCH (n) DETACH DELETE n",
    "MATCH (n:Locution) SET n.text = 'hacked' RETURN count(n)",
    "MATCH (n:Locution) REMOVE n.text RETURN count(n)",
    "MATCH (n:Locution) SET n:Hacked RETURN count(n)",
    "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
    "LOAD CSV FROM 'http://127.0.0.1:9/x.csv' AS row CREATE (:Hack {row: row})",
    "CALL db.createLabel('Hacked')",
    "CALL db.createProperty('hacked')",
    "CALL dbms.listConfig() YIELD name RETURN name",
    "CALL { CREATE (x:Hack) } IN TRANSACTIONS RETURN 1",
    "MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10 ROWS",
    "MATCH (n) RETURN n LIMIT 1; CREATE (m:Hack)",
    "MATCH (n) RETURN n LIMIT 1 /* ; */ ; CREATE (m:Hack)",
    "MATCH (n) // harmless\nSET n.hacked = true RETURN count(n)",
    "/* read only */ CREATE (n:Hack)",
    "CREATE INDEX hack FOR (n:Hack) ON (n.x)",
    "CREATE CONSTRAINT hack FOR (n:Hack) REQUIRE n.x IS UNIQUE",
    "DROP INDEX node_text",
    "SHOW USERS",
    "SHOW TRANSACTIONS",
    "TERMINATE TRANSACTIONS 'neo4j-transaction-1'",
    "CREATE USER hacker SET PASSWORD 'hacker-password'",
    "CREATE DATABASE hack",
    "USE system SHOW DATABASES",
    "ＣＲＥＡＴＥ (n:Hack)",
    "CRE\u200bATE (n:Hack)",
    "FOREACH (x IN [1] | CREATE (:Hack))",
    "UNWIND [1] AS x CALL apoc.create.node(['Hack'], {}) YIELD node RETURN node",
    "MATCH (n) WITH n LIMIT 1 CALL (n) { SET n.hacked = 1 } RETURN 1",
    "",
    "x" * 200_000,
]


@pytest.mark.parametrize("query", HOSTILE_CYPHER, ids=range(len(HOSTILE_CYPHER)))
def test_cypher_writes_are_refused_and_change_nothing(client: TestClient, api_graph: ApiGraph, query: str) -> None:
    before = graph_counts(api_graph.driver)
    response = client.post("/cypher", json={"query": query})
    assert 400 <= response.status_code < 500, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert "Traceback" not in response.text
    assert graph_counts(api_graph.driver) == before


def test_cypher_reads_stream_with_columns_and_row_limit(client: TestClient, api_graph: ApiGraph) -> None:
    body = client.post(
        "/cypher",
        json={"query": "MATCH (n:Locution {corpus: $c}) RETURN n.id AS id, n", "parameters": {"c": "molweni"}},
    ).json()
    assert body["columns"] == ["id", "n"] and not body["truncated"]
    assert body["row_count"] == len(body["rows"]) > 0
    assert body["rows"][0][1]["labels"] == ["Locution", "Node"]
    limit = api_graph.settings.cypher_row_limit
    many = client.post("/cypher", json={"query": f"UNWIND range(1, {limit * 3}) AS x RETURN x"}).json()
    assert many["truncated"] and many["row_count"] == limit == len(many["rows"])
    labels = client.post("/cypher", json={"query": "CALL db.labels() YIELD label RETURN label"}).json()
    assert ["Locution"] in labels["rows"]


def test_cypher_that_would_run_for_hours_is_stopped_and_others_are_served(client: TestClient) -> None:
    answers: list[int] = []

    def other_reader() -> None:
        time.sleep(0.5)
        answers.append(client.get("/corpora").status_code)

    thread = threading.Thread(target=other_reader)
    thread.start()
    started = time.monotonic()
    response = client.post(
        "/cypher", json={"query": "UNWIND range(1, 10000000000) AS x WITH x WHERE x = -1 RETURN count(*)"}
    )
    elapsed = time.monotonic() - started
    thread.join()
    assert response.status_code == 400
    assert response.json()["type"].endswith("query-limit")
    assert elapsed < 30
    assert answers == [200]


def test_rest_parameters_are_data_not_code(client: TestClient, api_graph: ApiGraph) -> None:
    before = graph_counts(api_graph.driver)
    for value in ["x' OR 1=1 //", "') DETACH DELETE n //", "}) MATCH (n) DETACH DELETE n //", "`Node`", "\u0000"]:
        for path, params in [
            ("/dialogues", {"corpus": value, "speaker": value, "q": value}),
            ("/relations", {"corpus": value, "model": value}),
            ("/search", {"q": value}),
            (f"/nodes/{quote(value, safe='')}", {}),
            (f"/agreement/{quote(value, safe='')}", {}),
        ]:
            assert client.get(path, params=params).status_code < 500
    deep = client.get("/search", params={"q": "the", "cursor": "MTAwMDAwMDA"})  # offset 10,000,000
    assert deep.status_code == 400
    assert graph_counts(api_graph.driver) == before


# -- SPARQL through a real client -----------------------------------------------------------------

SELECT = "SELECT ?l ?text WHERE { ?l a aw:Locution ; aw:text ?text } ORDER BY ?l LIMIT 5"


def _wrapper(live_url: str, query: str, fmt: str, method: str = "GET") -> SPARQLWrapper:
    sparql = SPARQLWrapper(f"{live_url}/sparql")
    sparql.setQuery("PREFIX aw: <https://w3id.org/argweb/ontology#>\n" + query)
    sparql.setReturnFormat(fmt)
    sparql.setMethod(method)
    sparql.setTimeout(60)
    return sparql


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_sparqlwrapper_select_in_json_csv_tsv(live_url: str, method: str) -> None:
    rows = _wrapper(live_url, SELECT, JSON, method).queryAndConvert()["results"]["bindings"]
    assert len(rows) == 5 and all(r["l"]["value"].startswith("https://w3id.org/argweb/data/") for r in rows)
    csv_text = _wrapper(live_url, SELECT, CSV, method).queryAndConvert().decode()
    assert csv_text.splitlines()[0].strip() == "l,text" and len(csv_text.strip().splitlines()) == 6
    tsv_text = _wrapper(live_url, SELECT, TSV, method).queryAndConvert().decode()
    assert tsv_text.splitlines()[0].strip() == "?l\t?text"


def test_sparqlwrapper_ask_construct_describe(live_url: str) -> None:
    assert _wrapper(live_url, "ASK { ?s a aw:Support }", JSON).queryAndConvert()["boolean"] is True
    graph = _wrapper(live_url, "CONSTRUCT { ?s a aw:Support } WHERE { ?s a aw:Support } LIMIT 3", TURTLE)
    assert len(rdflib.Graph().parse(data=graph.queryAndConvert(), format="turtle")) == 3
    describe = _wrapper(live_url, "DESCRIBE <https://w3id.org/argweb/data/qt30:nodeset21318:707848>", N3)
    assert len(rdflib.Graph().parse(data=describe.queryAndConvert(), format="n3")) > 3
    for accept, parse in (("application/n-triples", "nt"), ("application/ld+json", "json-ld")):
        r = requests.get(
            f"{live_url}/sparql",
            params={"query": "CONSTRUCT WHERE { ?s a aw:Attack } LIMIT 2"},
            headers={"Accept": accept},
            timeout=60,
        )
        assert r.status_code == 200 and r.headers["content-type"].startswith(accept)
        if parse == "json-ld":
            assert len(json.loads(r.text)) == 2
        else:
            assert len(r.text.strip().splitlines()) == 2


UPDATES = [
    "INSERT DATA { <urn:a> <urn:b> <urn:c> }",
    "DELETE WHERE { ?s ?p ?o }",
    "CLEAR ALL",
    "DROP GRAPH <urn:g>",
    "LOAD <http://127.0.0.1:9/x.ttl>",
    "# comment\nPREFIX x: <urn:x>\nDELETE DATA { <urn:a> <urn:b> <urn:c> }",
    "WITH <urn:g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
]


@pytest.mark.parametrize("update", UPDATES, ids=range(len(UPDATES)))
def test_sparql_updates_are_refused_and_store_unchanged(live_url: str, update: str) -> None:
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    before = _wrapper(live_url, count, JSON).queryAndConvert()["results"]["bindings"][0]["n"]["value"]
    for kwargs in (
        {"data": {"update": update}},
        {"data": update.encode(), "headers": {"Content-Type": "application/sparql-update"}},
        {"data": update.encode(), "headers": {"Content-Type": "application/sparql-query"}},
        {"data": {"query": update}},
    ):
        r = requests.post(f"{live_url}/sparql", timeout=60, **kwargs)  # type: ignore[arg-type]
        assert r.status_code in (400, 403), r.text
        assert r.headers["content-type"] == "application/problem+json"
    wrapped = _wrapper(live_url, update, JSON, "POST")
    with pytest.raises((SPARQLWrapperException, HTTPError)):
        wrapped.query()
    after = _wrapper(live_url, count, JSON).queryAndConvert()["results"]["bindings"][0]["n"]["value"]
    assert after == before


def test_sparql_service_makes_no_outbound_request(live_url: str) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(3)
    port = listener.getsockname()[1]
    query = f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{port}/sparql> {{ ?s ?p ?o }} }}"
    with pytest.raises((SPARQLWrapperException, HTTPError)):
        _wrapper(live_url, query, JSON).query()
    r = requests.get(f"{live_url}/sparql", params={"query": query.replace("SERVICE", "service")}, timeout=60)
    assert r.status_code == 403 and "SERVICE" in r.json()["detail"]
    with pytest.raises(TimeoutError):
        listener.accept()
    listener.close()


def test_sparql_that_would_run_for_hours_is_stopped(live_url: str) -> None:
    started = time.monotonic()
    query = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
    with pytest.raises((QueryBadFormed, EndPointInternalError, SPARQLWrapperException)):
        _wrapper(live_url, query, JSON).query()
    assert time.monotonic() - started < 30
    r = requests.get(f"{live_url}/sparql", params={"query": query}, timeout=60)
    assert r.status_code == 400 and r.json()["type"].endswith("query-limit")
    assert requests.get(f"{live_url}/corpora", timeout=30).status_code == 200


def test_competency_questions_are_served_and_run(client: TestClient) -> None:
    from ontology.competency import load_questions

    served = client.get("/competency-questions").json()
    assert [q["name"] for q in served] == [q.name for q in load_questions()]
    question = next(q for q in served if q["name"].startswith("03-"))
    assert question["title"] and "MATCH" in question["cypher"] and "SELECT" in question["sparql"]
    rows = client.post("/cypher", json={"query": question["cypher"]}).json()
    assert rows["row_count"] > 0


def test_the_workbench_page_is_served(client: TestClient) -> None:
    page = client.get("/workbench")
    assert page.status_code == 200 and "/static/workbench.js" in page.text
    assert "http://" not in page.text and "https://" not in page.text
    assert client.get("/static/workbench.js").status_code == 200
