"""Guard drills (issue 47, items 3, 4, 5, 8 and the header-read timeout of 12).

What an anonymous client can make the API spend: a Cypher cost guard read past with backquotes,
bodies cheap in bytes and dear to parse, slow queries that starve ``/health``, numbers JSON cannot
write, connections that never finish their headers. The API is served exactly as ``argweb serve``
serves it (:func:`api.server.config`: uvicorn with the header-read timeout) on a loopback port in
this process, over the session's Neo4j with a sample corpus and its RDF export. Figures go to
``.argweb/drill-figures.json`` (docs/drills.md).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from neo4j import Driver

from api import server as uvicorn_setup
from api.app import create_app
from api.problems import PROBLEM
from api.services.graph import Graph
from api.settings import Settings
from graphstore.readonly import tagged_transactions
from graphstore.runtime import EmbeddedNeo4j
from tests.conftest import export_to_oxigraph, load_samples, serve_app, served_settings
from tests.integration.drill_support import connections_in_use, record, wait_for

pytestmark = pytest.mark.drill

API_KEY = "guard-drill-key-0123456789"
CYPHER_TIMEOUT = 3.0
MAX_RUNNING = 4
HEADER_TIMEOUT = 1.5
# The issue asks for /health within 1 s; the bound leaves room for a CI machine shared with other
# jobs (the measured seconds go to the figures file).
HEALTH_BOUND_S = 2.5


@dataclass
class Guarded:
    """The served API and what the drills inspect."""

    url: str
    app: FastAPI
    settings: Settings
    driver: Driver  # the test's own driver, for counting

    def connections_in_use(self) -> int:
        """Connections of the API's pool taken by a session that has not given them back."""
        graph: Graph = self.app.state.graph
        return connections_in_use(graph.driver())


@pytest.fixture(scope="module")
def guarded(neo4j_server: EmbeddedNeo4j, driver: Driver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guarded]:
    load_samples(driver, ("molweni",))
    tmp = tmp_path_factory.mktemp("guarded")
    export_to_oxigraph(driver, tmp)
    settings = served_settings(
        neo4j_server,
        tmp,
        API_KEY,
        cypher_timeout=CYPHER_TIMEOUT,
        cypher_max_running=MAX_RUNNING,
        header_timeout=HEADER_TIMEOUT,
    )
    app = create_app(settings)
    # Served as `argweb serve` serves it (its uvicorn configuration: the header-read timeout).
    with serve_app(
        app, config=lambda port: uvicorn_setup.config(app, settings, "127.0.0.1", port, log_level="warning")
    ) as url:
        yield Guarded(url, app, settings, driver)


def _problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, Any] = response.json()
    assert "Traceback" not in body["detail"]
    return body


def _health_seconds(client: httpx.Client) -> float:
    started = time.perf_counter()
    response = client.get("/health", timeout=30)
    took = time.perf_counter() - started
    assert response.status_code == 200, response.text
    return took


@contextmanager
def _health_watch(url: str) -> Iterator[list[float]]:
    """Time ``/health`` every 0.1 s while the block runs; the list of seconds it took."""
    seconds: list[float] = []
    stop = threading.Event()

    def watch() -> None:
        with httpx.Client(base_url=url) as client:
            while not stop.is_set():
                seconds.append(_health_seconds(client))
                time.sleep(0.1)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield seconds
    finally:
        stop.set()
        thread.join(timeout=60)


# -- Item 3: the cost guard reads backquoted names as Neo4j does -----------------------------------

BACKQUOTED = [
    ("RETURN any(x IN `range`(1,4000000000) WHERE x < 0) AS n", "at most 100000 values"),
    ("RETURN any(x IN `RANGE` /* c */ (1,4000000000) WHERE x < 0) AS n", "at most 100000 values"),
    ("RETURN size([x IN `range`(1, 100000000) | x]) AS n", "at most 100000 values"),
    (
        "RETURN size([`a` IN range(1, 3000) | size([`b` IN range(1, 3000) WHERE `a` <> `b`])]) AS n",
        "inside another",
    ),
    (
        "RETURN any(`a b` IN range(1, 3000) WHERE all(`c``d` IN range(1, 3000) WHERE `a b` < `c``d`)) AS n",
        "inside another",
    ),
    ("RETURN size([é IN range(1, 3000) | size([ü IN range(1, 3000) | é + ü])]) AS n", "inside another"),
]


@pytest.mark.parametrize(("query", "why"), BACKQUOTED, ids=range(len(BACKQUOTED)))
def test_a_backquoted_loop_is_refused_before_it_runs(guarded: Guarded, query: str, why: str) -> None:
    """Issue 47 item 3: `range` and loop variables in backquotes (or in other scripts) were
    read past by the guard; the range query ran 15 s and stayed in SHOW TRANSACTIONS for 90 s."""
    started = time.perf_counter()
    with httpx.Client(base_url=guarded.url, timeout=60) as client:
        detail = _problem(client.post("/cypher", json={"query": query}), 403)["detail"]
    took = time.perf_counter() - started
    assert why in detail, detail
    assert took < CYPHER_TIMEOUT, f"refused after {took:.1f} s: it ran first"
    assert tagged_transactions(guarded.driver, "neo4j") == []


@pytest.mark.parametrize(
    "query",
    [
        "RETURN [`x` IN range(1, 10) | `x` * 2] AS `the list`",
        "WITH [1, 2] AS `range` RETURN `range` AS l",
        "UNWIND `range`(1, 1000000) AS `x` RETURN count(`x`) AS n",
    ],
)
def test_backquoted_names_in_bounded_queries_still_run(guarded: Guarded, query: str) -> None:
    with httpx.Client(base_url=guarded.url, timeout=60) as client:
        response = client.post("/cypher", json={"query": query})
    assert response.status_code == 200, response.text


# -- Item 4: bodies bounded by what they cost to parse and hold ------------------------------------

ITEMS = 3_300_000


def _rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


# Eight clients posting bodies, in a process of their own (see LOAD below for why).
BODIES = """
import json, sys, httpx
from concurrent.futures import ThreadPoolExecutor
url, items = sys.argv[1], int(sys.argv[2])
listed = ("[" + ",".join("0" for _ in range(items)) + "]").encode()
cypher = b'{"query": "RETURN size($l) AS n", "parameters": {"l": ' + listed + b"}}"
amf = b'{"AIF": {"nodes": ' + listed + b', "edges": []}, "text": ""}'
bodies = [("/cypher", cypher)] * 4 + [("/amf/ari", amf)] * 4
with httpx.Client(base_url=url, timeout=120) as client:
    def post(path_body):
        r = client.post(path_body[0], content=path_body[1], headers={"content-type": "application/json"})
        return [r.status_code, r.headers.get("content-type"), r.text[:400], len(path_body[1])]
    with ThreadPoolExecutor(len(bodies)) as pool:
        print(json.dumps(list(pool.map(post, bodies))))
"""


def test_a_list_of_millions_is_refused_before_it_is_parsed(guarded: Guarded) -> None:
    """Issue 47 item 4: four POST /cypher with a 3.3-million-item list took the API from 1,977 to
    4,513 MB and /health to 9.4 s; four POST /amf/ari with it made /health take 27.4 s."""
    before = _rss_mb()
    with _health_watch(guarded.url) as health:
        started = time.perf_counter()
        load = subprocess.run(
            [sys.executable, "-c", BODIES, guarded.url, str(ITEMS)], capture_output=True, text=True, timeout=300
        )
        answered = time.perf_counter() - started
    grown = _rss_mb() - before
    assert load.returncode == 0, load.stderr
    responses = json.loads(load.stdout)
    assert len(responses) == 8
    for status, media, text, size in responses:
        assert size < guarded.settings.request_size_limit
        assert status == 413 and media == PROBLEM, text
        assert "more than 200,000 items" in json.loads(text)["detail"], text
    worst = max(health)
    record(
        "guard_list_of_millions",
        requests=len(responses),
        answered_s=round(answered, 2),
        health_worst_s=round(worst, 3),
        rss_growth_mb=round(grown),
    )
    assert worst < HEALTH_BOUND_S, f"/health took {worst:.2f} s"
    assert grown < 500, f"the API grew by {grown:.0f} MB"
    assert guarded.connections_in_use() == 0


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (json.dumps({"query": "RETURN size($s) AS n", "parameters": {"s": "x" * 1_000_001}}), "1,000,001 characters"),
        ('{"query": "RETURN $a", "parameters": {"a": ' + "[" * 70 + "]" * 70 + "}}", "deeper than 64 levels"),
        (json.dumps({"query": "RETURN 1", "parameters": {f"p{i}": i for i in range(200_001)}}), "200,000 items"),
    ],
    ids=["string", "depth", "members"],
)
def test_cypher_bodies_over_a_limit_are_413_naming_it(guarded: Guarded, body: str, named: str) -> None:
    with httpx.Client(base_url=guarded.url, timeout=60) as client:
        response = client.post("/cypher", content=body, headers={"content-type": "application/json"})
        detail = _problem(response, 413)["detail"]
        assert named in detail, detail
        within = client.post("/cypher", json={"query": "RETURN size($s) AS n", "parameters": {"s": "x" * 100_000}})
        assert within.status_code == 200 and within.json()["rows"] == [[100_000]]


def test_an_amf_upload_over_a_limit_is_413(guarded: Guarded) -> None:
    items = ",".join("0" for _ in range(300_000))
    document = '{"AIF": {"nodes": [' + items + '], "edges": []}, "text": ""}'
    with httpx.Client(base_url=guarded.url, timeout=60) as client:
        response = client.post("/amf/ari", files={"file": ("map.json", document, "application/json")})
    detail = _problem(response, 413)["detail"]
    assert "the uploaded file holds more than 200,000 items" in detail, detail


# -- Item 5: /health is not starved by slow anonymous queries --------------------------------------

SLOW = "UNWIND range(1, 100000000000) AS x WITH x WHERE x < 0 RETURN x"
# The 50 clients run in a process of their own, as they would on another machine: in this process
# their threads would compete with the served API for the interpreter.
LOAD = """
import json, sys, httpx
from concurrent.futures import ThreadPoolExecutor
url, query, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with httpx.Client(base_url=url, timeout=120, limits=httpx.Limits(max_connections=n)) as client:
    def post(_):
        r = client.post("/cypher", json={"query": query})
        return [r.status_code, r.headers.get("retry-after"), r.text[:300]]
    with ThreadPoolExecutor(n) as pool:
        print(json.dumps(list(pool.map(post, range(n)))))
"""


def test_fifty_slow_queries_leave_health_answering(guarded: Guarded) -> None:
    """Issue 47 item 5: 50 anonymous slow /cypher queries made /health take up to 13 s."""
    with httpx.Client(base_url=guarded.url) as client:
        _health_seconds(client)  # as a deployment's probe would have, before the load
    with _health_watch(guarded.url) as health:
        started = time.perf_counter()
        load = subprocess.run(
            [sys.executable, "-c", LOAD, guarded.url, SLOW, "50"], capture_output=True, text=True, timeout=300
        )
        answered = time.perf_counter() - started
    assert load.returncode == 0, load.stderr
    responses = json.loads(load.stdout)
    statuses = [status for status, _, _ in responses]
    busy = [(retry, text) for status, retry, text in responses if status == 503]
    assert len(busy) >= 50 - 2 * MAX_RUNNING, statuses
    assert all(retry for retry, _ in busy)
    assert all("Cypher queries are running" in text for _, text in busy)
    # The admitted ones ran to the time limit: a row-by-row loop the server's timeout ends.
    assert set(statuses) <= {400, 503}, statuses
    worst = max(health)
    record(
        "guard_fifty_slow_queries",
        refused_busy=len(busy),
        ran=50 - len(busy),
        answered_s=round(answered, 2),
        health_checks=len(health),
        health_worst_s=round(worst, 3),
        health_median_s=round(sorted(health)[len(health) // 2], 3),
    )
    assert worst < HEALTH_BOUND_S, f"/health took {worst:.2f} s"
    wait_for(lambda: guarded.connections_in_use() == 0, 15, "the API's connections to come back")
    wait_for(lambda: tagged_transactions(guarded.driver, "neo4j") == [], 15, "the client transactions to end")
    with httpx.Client(base_url=guarded.url, timeout=30) as client:
        response = client.post("/cypher", json={"query": "RETURN 1 AS one"})
    assert response.status_code == 200, "a slot was not given back"


# -- Item 8: JSON answers are valid JSON -------------------------------------------------------------


def _strict(text: str) -> Any:
    def refuse(token: str) -> Any:
        raise AssertionError(f"not JSON: bare {token}")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_numbers_are_answered_as_strings(guarded: Guarded) -> None:
    """Issue 47 item 8: ``RETURN 0.0/0.0 AS nan, 1e308*10 AS inf`` answered ``[[NaN, Infinity]]``."""
    query = "RETURN 0.0/0.0 AS nan, 1e308*10 AS inf, -1e308*10 AS ninf, [1.5, 0.0/0.0] AS l, {x: 1e308*10} AS m"
    with httpx.Client(base_url=guarded.url, timeout=30) as client:
        response = client.post("/cypher", json={"query": query})
    assert response.status_code == 200, response.text
    body = _strict(response.text)
    assert body["rows"] == [["NaN", "Infinity", "-Infinity", [1.5, "NaN"], {"x": "Infinity"}]]


# -- Item 12: a header-read timeout ----------------------------------------------------------------


def test_connections_that_never_finish_their_headers_are_closed(guarded: Guarded) -> None:
    """Issue 47 item 12: 3,000 slow connections stayed open with no header timeout."""
    host, port = guarded.url.removeprefix("http://").split(":")
    count = 200
    sockets = [socket.create_connection((host, int(port)), timeout=10) for _ in range(count)]
    started = time.perf_counter()
    try:
        # Half say nothing; half trickle a header line, one byte at a time, which must not reset the clock.
        for i, raw in enumerate(sockets):
            if i % 2:
                raw.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        trickle = b"X-Slow: " + b"a" * 64
        for byte in trickle:
            if time.perf_counter() - started > HEADER_TIMEOUT + 1:
                break
            for raw in sockets[1::2]:
                with suppress(OSError):  # closed already: the server's limit passed
                    raw.send(bytes([byte]))
            time.sleep(0.1)
        closed_at: list[float] = []
        for raw in sockets:
            raw.settimeout(HEADER_TIMEOUT + 10)
            with suppress(ConnectionResetError):
                assert raw.recv(1024) == b""
            closed_at.append(time.perf_counter() - started)
    finally:
        for raw in sockets:
            raw.close()
    latest = max(closed_at)
    record(
        "guard_header_timeout", connections=count, header_timeout_s=HEADER_TIMEOUT, all_closed_after_s=round(latest, 2)
    )
    assert latest < HEADER_TIMEOUT + 3, f"the last slow connection was closed after {latest:.1f} s"
    with httpx.Client(base_url=guarded.url, timeout=30) as client:
        assert client.get("/health").status_code == 200


def test_a_kept_alive_connection_gets_a_new_clock_per_request(guarded: Guarded) -> None:
    """The clock runs while a request head is awaited, from the connection or the last response:
    three requests on one connection, each after a pause of half the limit, are all answered."""
    host, port = guarded.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        for _ in range(3):
            time.sleep(HEADER_TIMEOUT / 2)
            raw.sendall(b"GET /competency-questions HTTP/1.1\r\nHost: x\r\n\r\n")
            head = raw.recv(65536)
            assert head.startswith(b"HTTP/1.1 200"), head[:200]
            length = int(head.split(b"content-length: ")[1].split(b"\r\n")[0])
            received = len(head.split(b"\r\n\r\n", 1)[1])
            while received < length:
                received += len(raw.recv(65536))
