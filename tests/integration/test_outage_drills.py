"""Outage drills (issue 11): the API keeps answering while its backends go away and come back.

A real ``argweb serve`` process runs against a private embedded Neo4j loaded with the shipped
samples (and their RDF export). Neo4j is stopped (cleanly, then with SIGKILL of the JVM): every
route of the OpenAPI document is called and each one that needs the graph answers 503
``application/problem+json`` within the configured connect timeout plus a small margin, while the
routes that do not need Neo4j (the page, static files, SPARQL, Linked Data) keep answering as
before; nothing answers 500 and nothing hangs. Neo4j is started again on the same data directory
and port and the same API process answers 200 again. Then the Oxigraph store directory is removed
under the running API: SPARQL and Linked Data answer 503 problem+json naming the fix, ``/health``
says ``degraded``, and after ``argweb rdf load`` they answer again. Figures (per-route latency
during the outage, seconds to recover) go to ``.argweb/drill-figures.json``.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.app import create_app
from api.problems import PROBLEM
from api.services.apiserver import ApiServer
from api.services.mainjob import RDF_EXPORT
from graphstore.runtime import free_port
from ontology.formats.registry import SAMPLES
from tests.conftest import embedded_settings
from tests.integration.cli_support import run_argweb
from tests.integration.drill_support import DrillServer, kill9, record, wait_for

pytestmark = pytest.mark.drill

API_KEY = "outage-drill-key"
CONNECT_TIMEOUT = 3.0
# What an answer may take beyond the connect timeout on a busy 2-core machine (HTTP, JSON).
MARGIN = 2.0
# A hang shows as a client timeout well past the bound, not as a stuck test run.
CLIENT_TIMEOUT = 60.0


@dataclass(frozen=True)
class Call:
    """One request to one route of the OpenAPI document."""

    method: str
    url: str
    graph: bool  # whether the route needs Neo4j
    ok: frozenset[int] = frozenset({200})
    kwargs: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass
class Stack:
    """The drill's Neo4j, its API process and a client for it."""

    neo4j: DrillServer
    api: ApiServer
    client: httpx.Client
    calls: dict[tuple[str, str], Call]
    api_pid: int

    def send(self, call: Call) -> tuple[httpx.Response, float]:
        started = time.perf_counter()
        response = self.client.request(call.method, call.url, **call.kwargs)
        return response, time.perf_counter() - started


def _routes() -> set[tuple[str, str]]:
    """Every (method, path template) of the API's OpenAPI document."""
    app = create_app(embedded_settings(Path("unused")))
    return {(method.upper(), path) for path, ops in app.openapi()["paths"].items() for method in ops}


def _ids(client: httpx.Client, neo4j: DrillServer) -> dict[str, str]:
    """Real ids from the loaded graph, taken before any outage."""
    dialogue = client.get("/dialogues", params={"corpus": "molweni", "limit": 1}).json()["items"][0]["id"]
    document = client.get("/documents", params={"limit": 1}).json()["items"][0]["id"]
    driver = neo4j.driver()
    try:
        with driver.session() as session:
            node = session.run(
                "MATCH (n:Node {corpus: 'molweni'})-[r]-(:Node) WHERE NOT n:Corpus RETURN n.id AS id LIMIT 1"
            ).single()
    finally:
        driver.close()
    assert node is not None
    return {"dialogue": dialogue, "document": document, "node": node["id"]}


def _calls(ids: dict[str, str]) -> dict[tuple[str, str], Call]:
    """One request per route, its path parameters filled with real ids."""
    aif = {
        "nodes": [
            {"nodeID": "1", "text": "We should drill outages.", "type": "I"},
            {"nodeID": "2", "text": "Outages happen.", "type": "I"},
            {"nodeID": "3", "text": "Default Inference", "type": "RA"},
        ],
        "edges": [{"edgeID": "1", "fromID": "2", "toID": "3"}, {"edgeID": "2", "fromID": "3", "toID": "1"}],
        "locutions": [],
        "participants": [],
    }
    xaif = {
        "AIF": {"nodes": [], "edges": [], "locutions": [], "participants": []},
        "text": {"txt": "Ann: We should drill outages.\nBob: They cost too much."},
        "dialog": True,
        "ova": [],
    }
    node, dialogue, document = ids["node"], ids["dialogue"], ids["document"]
    turtle = {"headers": {"Accept": "text/turtle"}}
    calls = [
        Call("GET", "/stats", True),
        Call("GET", "/health", True),
        Call("GET", "/corpora", True),
        Call("GET", "/corpora/molweni", True),
        Call("GET", "/schema", True),
        Call("GET", "/dialogues", True),
        Call("GET", f"/dialogues/{dialogue}", True),
        Call("GET", "/documents", True),
        Call("GET", f"/documents/{document}", True),
        Call("GET", f"/discourses/{dialogue}", True),
        # Loaded without predictions: no run to compare with gold, 404 until Neo4j is away.
        Call("GET", f"/discourses/{dialogue}/comparison", True, frozenset({404})),
        Call("GET", f"/nodes/{node}/neighbors", True),
        Call("GET", f"/nodes/{node}", True),
        Call("GET", "/relations", True),
        Call("GET", "/search", True, kwargs={"params": {"q": "the"}}),
        Call("GET", "/agreement/m-arg", True),
        Call("POST", "/cypher", True, kwargs={"json": {"query": "MATCH (n:Node) RETURN count(n) AS n"}}),
        Call("GET", "/sparql", False, kwargs={"params": {"query": "ASK { ?s ?p ?o }"}}),
        Call(
            "POST",
            "/sparql",
            False,
            kwargs={
                "content": b"SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
                "headers": {"Content-Type": "application/sparql-query"},
            },
        ),
        Call("GET", f"/aif/{dialogue}", True),
        Call(
            "POST",
            "/aif",
            True,
            frozenset({201}),
            {"json": aif, "params": {"name": "outage"}, "headers": {"X-API-Key": API_KEY}},
        ),
        Call("GET", f"/data/{node}", False, kwargs=turtle),
        # No prediction model is installed in this checkout's API: 503 before and during the outage.
        Call(
            "POST",
            "/predict",
            True,
            frozenset({200, 503}),
            {"json": {"task": "dialogue", "dialogue_id": dialogue}},
        ),
        Call("GET", "/", False),
        Call("GET", "/static/page.css", False),
        Call("GET", "/dashboard/molweni", True),
        Call("GET", "/dashboard/molweni/relation-types.svg", True),
        # The workbench page, the question list and the oAMF modules need no graph.
        Call("GET", "/workbench", False),
        Call("GET", "/competency-questions", False),
        Call("GET", "/amf/turns", False),
        Call("GET", "/amf/turns/metadata.yaml", False),
        Call("POST", "/amf/turns", False, kwargs={"json": xaif}),
    ]
    return {(c.method, _template(c.url)): c for c in calls}


def _template(url: str) -> str:
    """The OpenAPI path template a drill URL exercises."""
    templates = {
        "/corpora/": "/corpora/{name}",
        "/dialogues/": "/dialogues/{dialogue_id}",
        "/documents/": "/documents/{document_id}",
        "/discourses/": "/discourses/{discourse_id}",
        "/agreement/": "/agreement/{corpus}",
        "/aif/": "/aif/{discourse_id}",
        "/data/": "/data/{resource}",
        "/static/": "/static/{name}",
    }
    if url.startswith("/amf/"):
        return "/amf/{task}/metadata.yaml" if url.endswith("/metadata.yaml") else "/amf/{task}"
    if url.startswith("/discourses/") and url.endswith("/comparison"):
        return "/discourses/{discourse_id}/comparison"
    if url.startswith("/nodes/"):
        return "/nodes/{node_id}/neighbors" if url.endswith("/neighbors") else "/nodes/{node_id}"
    if url.startswith("/dashboard/"):
        return "/dashboard/{corpus}/{plot}.{ext}" if url.count("/") == 3 else "/dashboard/{corpus}"
    for prefix, template in templates.items():
        if url.startswith(prefix):
            return template
    return url


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data = tmp_path_factory.mktemp("outage") / "data"
    neo4j = DrillServer(data, batch_size=500)
    port = free_port()
    env = {
        **neo4j.env,
        "ARGWEB_CORPORA": str(SAMPLES),
        "ARGWEB_API_KEY": API_KEY,
        "ARGWEB_API_PORT": str(port),
        "ARGWEB_NEO4J_CONNECT_TIMEOUT": str(CONNECT_TIMEOUT),
    }
    neo4j.start()
    api = ApiServer(data, port=port, env=env)
    try:
        loaded = run_argweb(env, "run", "--no-bulk", "--no-predict", "--no-serve", "--keep-export", timeout=1800)
        assert loaded.returncode == 0, loaded.stdout + loaded.stderr
        info = api.start(timeout=120)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=CLIENT_TIMEOUT) as client:
            calls = _calls(_ids(client, neo4j))
            yield Stack(neo4j, api, client, calls, info.pid)
    finally:
        api.stop()
        neo4j.stop()


def test_the_drill_calls_every_route_of_the_openapi_document(stack: Stack) -> None:
    assert set(stack.calls) == _routes()


def _baseline(stack: Stack) -> None:
    """Every route answers as it should with every backend up."""
    for key, call in stack.calls.items():
        response, _ = stack.send(call)
        assert response.status_code in call.ok, (key, response.status_code, response.text[:300])


def _during_outage(stack: Stack) -> dict[str, float]:
    """Call every route with Neo4j away; seconds each took."""
    seconds: dict[str, float] = {}
    for key, call in stack.calls.items():
        response, took = stack.send(call)
        name = f"{key[0]} {key[1]}"
        seconds[name] = round(took, 3)
        assert response.status_code != 500, (name, response.text[:300])
        assert took <= CONNECT_TIMEOUT + MARGIN, f"{name} took {took:.1f}s with Neo4j away"
        if call.graph:
            assert response.status_code == 503, (name, response.status_code, response.text[:300])
            assert response.headers["content-type"] == PROBLEM, name
            problem = response.json()
            assert problem["status"] == 503 and problem["type"].endswith(("/unavailable", "/503")), problem
            assert "internal error" not in problem["detail"], problem
        else:
            assert response.status_code in call.ok, (name, response.status_code, response.text[:300])
    return seconds


def _recover(stack: Stack) -> dict[str, float]:
    """Start Neo4j again; seconds until the same API process answers the graph routes again."""
    start_s = stack.neo4j.start()
    bolt_up = time.perf_counter()
    corpora = stack.calls[("GET", "/corpora")]
    wait_for(lambda: stack.send(corpora)[0].status_code == 200, 60, "the API to answer /corpora again")
    recovered = time.perf_counter() - bolt_up
    _baseline(stack)
    info = stack.api.info()
    assert info is not None and info.pid == stack.api_pid, "the API was restarted"
    return {"neo4j_start_s": round(start_s, 2), "api_recovered_after_neo4j_s": round(recovered, 3)}


def _counts(stats: dict[str, Any]) -> dict[str, Any]:
    """The counts of ``argweb stats --json``, per corpus too (marker metadata such as the last
    load's run id changes with every ``POST /aif`` and is left out)."""
    per_corpus = {
        name: (entry.get("labels"), entry.get("relationships"), entry.get("status"))
        for name, entry in stats["corpora"].items()
    }
    return {"labels": stats["labels"], "relationships": stats["relationships"], "corpora": per_corpus}


def _rows(stats: dict[str, Any]) -> int:
    """Nodes plus relationships in ``argweb stats --json`` counts."""
    return int(stats["labels"].get("Node", 0) + sum(stats["relationships"].values()))


def _outage_drill(stack: Stack, name: str, stop: Callable[[], None]) -> None:
    _baseline(stack)
    before = stack.send(stack.calls[("GET", "/stats")])[0].json()
    stop()
    wait_for(lambda: stack.neo4j.server.info() is None, 60, "Neo4j to be gone")
    seconds = _during_outage(stack)
    figures = _recover(stack)
    after = stack.send(stack.calls[("GET", "/stats")])[0].json()
    assert _counts(after) == _counts(before)  # nothing lost, nothing half-written
    slowest = max(seconds, key=lambda k: seconds[k])
    record(
        name,
        routes=len(seconds),
        max_latency_s=seconds[slowest],
        slowest_route=slowest,
        bound_s=CONNECT_TIMEOUT + MARGIN,
        per_route_s=seconds,
        rows_before=_rows(before),
        rows_after_recovery=_rows(after),
        **figures,
    )


def test_neo4j_stopped_cleanly_every_route_answers_then_the_api_recovers(stack: Stack) -> None:
    _outage_drill(stack, "outage-neo4j-stop", stack.neo4j.stop)


def test_neo4j_jvm_killed_every_route_answers_then_the_api_recovers(stack: Stack) -> None:
    _outage_drill(stack, "outage-neo4j-kill9", lambda: kill9(stack.neo4j.jvm_pid()))


def test_sparql_store_vanishing_gives_503_then_rdf_load_brings_it_back(stack: Stack) -> None:
    _baseline(stack)
    store = stack.neo4j.data_dir / "oxigraph"
    assert (store / "CURRENT").is_file()
    shutil.rmtree(store)
    sparql = [c for key, c in stack.calls.items() if key[1] in ("/sparql", "/data/{resource}")]
    seconds = {}
    for call in sparql:
        response, took = stack.send(call)
        seconds[f"{call.method} {_template(call.url)}"] = round(took, 3)
        assert response.status_code == 503, (call.url, response.status_code, response.text[:300])
        assert response.headers["content-type"] == PROBLEM
        assert "argweb rdf load" in response.json()["detail"]
    health = stack.send(stack.calls[("GET", "/health")])[0]
    assert health.status_code == 200 and health.json()["status"] == "degraded", health.text
    graph_ok = stack.send(stack.calls[("GET", "/relations")])[0]
    assert graph_ok.status_code == 200  # the graph routes do not depend on the SPARQL store
    started = time.perf_counter()
    loaded = run_argweb(stack.api.env or {}, "rdf", "load", str(stack.neo4j.data_dir / RDF_EXPORT))
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    for call in sparql:
        response, _ = stack.send(call)
        assert response.status_code == 200, (call.url, response.status_code, response.text[:300])
    recovered = time.perf_counter() - started
    assert stack.send(stack.calls[("GET", "/health")])[0].json()["status"] == "ok"
    record("outage-sparql-store", per_route_s=seconds, reload_and_answer_s=round(recovered, 2))
