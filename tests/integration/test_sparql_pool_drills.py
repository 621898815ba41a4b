"""SPARQL drills of issue 47 (findings 6, 7 and the SPARQL store part of 12).

The API is served by uvicorn on a loopback port in this process over a real Oxigraph store (no
Neo4j: these routes only need the SPARQL store), so the drills count the real ``sparql_worker``
processes it starts: children of this process, read from the process table, not the pool's own
bookkeeping. Figures go to ``.argweb/drill-figures.json`` (table in docs/drills.md).
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import psutil
import pytest
from pydantic import SecretStr

from api.app import create_app
from api.settings import Settings
from graphstore.runtime import free_port
from ontology.client_query import POOL
from ontology.rdf import RdfMapper
from ontology.sparql import load_store
from tests.conftest import serve_app
from tests.integration.cli_support import ROOT, cli_env, run_argweb
from tests.integration.drill_support import record, wait_for

pytestmark = pytest.mark.drill

NODE = "molweni:1056:edu:0"
CAP = 2
# Solutions of four copies of the 300 filler triples: 8.1e9, far more than any test waits for.
FILLER = 300
BIG = "{ ?a <urn:p> ?c . ?d <urn:p> ?f . ?g <urn:p> ?i . ?j <urn:p> ?l }"
# Never true, and not something the optimiser can push into an index lookup.
NEVER = "FILTER(STRLEN(CONCAT(?c, ?f, ?i, ?l)) > 1000)"
# One query of each form whose worker computes for minutes; those that name no variable to output
# (the aggregate, ASK) send nothing before the whole evaluation is done.
HEAVY = {
    "select-count": f"SELECT (COUNT(*) AS ?n) WHERE {BIG}",
    "ask": f"ASK {{ {BIG[1:-1]} {NEVER} }}",
    "select-filtered": f"SELECT ?a WHERE {{ {BIG[1:-1]} {NEVER} }}",
    "construct": f"CONSTRUCT {{ ?a <urn:q> ?d }} WHERE {{ {BIG[1:-1]} {NEVER} }}",
    "describe": f"DESCRIBE ?a WHERE {{ {BIG[1:-1]} {NEVER} }}",
}


def workers() -> int:
    """``sparql_worker`` processes that are children of this process (the served API's), alive."""
    count = 0
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "ontology.sparql_worker" in child.cmdline():
                count += 1
        except psutil.Error:
            continue
    return count


@dataclass
class Sampler:
    """Counts the worker processes every 20 ms in a thread, keeping the largest count seen."""

    peak: int = 0
    samples: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, workers())
            self.samples += 1
            time.sleep(0.02)


@contextmanager
def sampling() -> Iterator[Sampler]:
    sampler = Sampler()
    thread = threading.Thread(target=sampler.run, daemon=True)
    thread.start()
    try:
        yield sampler
    finally:
        sampler._stop.set()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("sparql-pool")
    iri = RdfMapper().iri(NODE)
    data = tmp / "data.nt"
    lines = [
        f'<{iri}> <http://www.w3.org/2000/01/rdf-schema#label> "okay, thanks" .\n',
        f"<{iri}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <https://w3id.org/argweb/ontology#Unit> .\n",
        *(f'<urn:s{i}> <urn:p> "{i}" .\n' for i in range(FILLER)),
    ]
    data.write_text("".join(lines), encoding="utf-8")
    load_store(tmp / "oxigraph", data, "nt")
    return tmp / "oxigraph"


@contextmanager
def served(store: Path, timeout: float) -> Iterator[str]:
    """The API over ``store`` (no Neo4j behind it), with a worker cap of :data:`CAP`; its base URL."""
    settings = Settings(
        # Nothing listens there: the SPARQL routes never need Neo4j.
        neo4j_uri=f"bolt://127.0.0.1:{free_port()}",
        neo4j_password=SecretStr("unused-password"),
        data_dir=store.parent,
        oxigraph_store=store,
        api_key=SecretStr("sparql-pool-drill-key-0123456789"),
        sparql_timeout=timeout,
        sparql_memory_mb=1024,
        sparql_max_workers=CAP,
    )
    with serve_app(create_app(settings)) as url:
        yield url
    wait_for(lambda: workers() == 0, 10, "the workers of the served API to end")


def _hold(url: str, query: str) -> socket.socket:
    """A raw connection that sent a SPARQL GET and reads nothing: a client that may leave at any time."""
    host, port = url.removeprefix("http://").split(":")
    raw = socket.create_connection((host, int(port)), timeout=10)
    raw.sendall(f"GET /sparql?query={quote(query)} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    return raw


# -- Finding 6: /data/{id} and the worker cap ------------------------------------------------------


def test_linked_data_goes_through_the_worker_cap(store_dir: Path) -> None:
    """40 concurrent ``GET /data/molweni:1056:edu:0`` (Turtle), first while the cap's workers are
    busy, then on an idle pool: never more workers than the cap, the rest 503 with Retry-After."""

    def describe(_: int) -> httpx.Response:
        with httpx.Client(timeout=60) as client:
            return client.get(f"{url}/data/{NODE}", headers={"Accept": "text/turtle"})

    with served(store_dir, timeout=60) as url:
        held = [_hold(url, HEAVY["select-count"]) for _ in range(CAP)]
        try:
            # The pool's places too, not only the processes: a worker still ending from an earlier
            # test is a process of this one, and once let a dereference take the second place.
            wait_for(lambda: POOL.state().running >= CAP and workers() == CAP, 30, f"{CAP} held places")
            with sampling() as busy, ThreadPoolExecutor(40) as pool:
                answers = list(pool.map(describe, range(40)))
            assert busy.peak == CAP, f"{busy.peak} workers with a cap of {CAP}"
            for response in answers:
                assert response.status_code == 503, response.text
                assert response.headers["retry-after"].isdigit()
                assert f"{CAP} SPARQL queries are running" in response.json()["detail"]
        finally:
            for raw in held:
                raw.close()
        wait_for(lambda: workers() == 0, 10, "the held queries' workers to end with their clients")
        with sampling() as idle, ThreadPoolExecutor(40) as pool:
            answers = list(pool.map(describe, range(40)))
        statuses = sorted(r.status_code for r in answers)
        assert set(statuses) <= {200, 503}, statuses
        assert idle.peak <= CAP, f"{idle.peak} workers with a cap of {CAP}"
        served_ok = [r for r in answers if r.status_code == 200]
        assert served_ok, statuses
        for response in served_ok:
            assert response.headers["content-type"].startswith("text/turtle")
            assert "okay, thanks" in response.text
        for response in answers:
            if response.status_code == 503:
                assert response.headers["retry-after"].isdigit()
    record(
        "sparql_linked_data_cap",
        cap=CAP,
        requests=80,
        peak_workers_busy=busy.peak,
        peak_workers_idle=idle.peak,
        served_200=len(served_ok),
        refused_503=statuses.count(503),
    )


# -- Finding 7: a worker ends with its client, for every query form --------------------------------


def _gone_after_leaving(url: str, request: bytes, computing: float = 1.5) -> float:
    """Send ``request``, let its worker compute, close the connection: seconds until no worker is left."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        raw.sendall(request)
        wait_for(lambda: workers() == 1, 30, "the query's worker")
        time.sleep(computing)
        assert workers() == 1, "the worker ended before its client left"
        left = time.perf_counter()
    wait_for(lambda: workers() == 0, 10, "the worker of a client that left")
    return time.perf_counter() - left


@pytest.mark.parametrize("form", list(HEAVY))
def test_a_worker_ends_when_its_client_leaves(store_dir: Path, form: str) -> None:
    """The client of a query that computes for minutes leaves after 1.5 s: its worker is killed
    within seconds (the time limit is 60 s), whether or not the worker has sent anything yet."""
    query = HEAVY[form]
    body = query.encode()
    with served(store_dir, timeout=60) as url:
        by_get = _gone_after_leaving(url, f"GET /sparql?query={quote(query)} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        by_post = _gone_after_leaving(
            url,
            b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body,
        )
    assert by_get < 5 and by_post < 5, (by_get, by_post)
    record(f"sparql_client_left_{form}", worker_gone_after_get_s=round(by_get, 2), post_s=round(by_post, 2))


def test_clients_that_left_do_not_keep_the_endpoint_busy(store_dir: Path) -> None:
    """The cap's worth of aggregate queries whose clients left after 2 s: the next client is
    answered (200), not 503 for the rest of the time limit."""
    with served(store_dir, timeout=60) as url:
        held = [_hold(url, HEAVY["select-count"]) for _ in range(CAP)]
        wait_for(lambda: workers() == CAP, 30, f"{CAP} workers")
        time.sleep(2.0)
        with httpx.Client(base_url=url, timeout=30) as client:
            assert client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}).status_code == 503
            for raw in held:
                raw.close()
            left = time.perf_counter()
            wait_for(lambda: workers() == 0, 10, "the workers of the clients that left")
            response = client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"})
            answered = time.perf_counter() - left
        assert response.status_code == 200, response.text
        assert response.json()["boolean"] is True
    assert answered < 10
    record("sparql_clients_left_endpoint_free", cap=CAP, answered_after_s=round(answered, 2))


def test_a_client_leaving_frees_its_place_with_a_sparql_server(tmp_path: Path) -> None:
    """With a real Oxigraph server configured (``ARGWEB_SPARQL_ENDPOINT``), the cap's worth of
    aggregates that the server computes for minutes, clients gone after 1.5 s: the connections to
    the server are closed and the places given back within seconds, not at the server's timeout."""
    from bench.sparql_servers import oxigraph_server
    from ontology.sparql_remote import push

    filler = tmp_path / "filler.nt"
    filler.write_text("".join(f'<urn:s{i}> <urn:p> "{i}" .\n' for i in range(FILLER)), encoding="utf-8")
    with oxigraph_server(tmp_path, query_timeout=120.0) as server:
        push(server.store, filler)
        settings = Settings(
            neo4j_uri=f"bolt://127.0.0.1:{free_port()}",
            neo4j_password=SecretStr("unused-password"),
            data_dir=tmp_path / "data",
            api_key=SecretStr("sparql-pool-drill-key-0123456789"),
            sparql_endpoint=server.store.query_url,
            sparql_timeout=60,
            sparql_max_workers=CAP,
        )
        with serve_app(create_app(settings)) as url, httpx.Client(base_url=url, timeout=30) as client:
            before = POOL.state().running
            held = [_hold(url, HEAVY["select-count"]) for _ in range(CAP)]
            wait_for(lambda: POOL.state().running == before + CAP, 30, f"{CAP} places taken")
            time.sleep(1.5)
            assert client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}).status_code == 503
            for raw in held:
                raw.close()
            left = time.perf_counter()
            wait_for(lambda: POOL.state().running == before, 10, "the places of the clients that left")
            freed = time.perf_counter() - left
            response = client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"})
            assert response.status_code == 200, response.text
            assert response.json()["boolean"] is True
    record("sparql_server_client_left", cap=CAP, places_freed_after_s=round(freed, 2))


# -- Finding 12: the SPARQL store is private wherever it is configured ------------------------------


def _exposed(top: Path) -> list[str]:
    """Paths under ``top`` (itself included) that another local user could list or read."""
    found = []
    for path in [top, *top.rglob("*")]:
        mode = path.lstat().st_mode
        if (stat.S_ISDIR(mode) or stat.S_ISREG(mode)) and mode & 0o077:
            found.append(f"{path} {oct(mode & 0o777)}")
    return found


def _said(done: subprocess.CompletedProcess[str]) -> str:
    """What a command printed, its lines joined (the console wraps long lines)."""
    return " ".join((done.stdout + done.stderr).split())


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def test_a_store_outside_the_data_directory_is_private(tmp_path: Path) -> None:
    """``ARGWEB_OXIGRAPH_STORE`` under directories that do not exist yet, loaded by ``argweb rdf
    load`` (umask 022, the usual one): the new directories, the store and every file in it are
    the owner's alone, after a replacing load and after an append."""
    data = tmp_path / "data.nt"
    data.write_text("".join(f'<urn:s{i}> <urn:p> "{i}" .\n' for i in range(50)), encoding="utf-8")
    more = tmp_path / "more.nt"
    more.write_text('<urn:x> <urn:p> "x" .\n', encoding="utf-8")
    outside = tmp_path / "elsewhere"
    store = outside / "rdf" / "oxigraph"
    env = cli_env(tmp_path / "data-dir", free_port(), "unused-password", ARGWEB_OXIGRAPH_STORE=str(store))
    with _umask(0o022):
        loaded = run_argweb(env, "rdf", "load", str(data), timeout=120)
        assert loaded.returncode == 0, loaded.stdout + loaded.stderr
        assert "50 quads" in _said(loaded)
        assert _exposed(outside) == []
        appended = run_argweb(env, "rdf", "load", "--append", str(more), timeout=120)
        assert appended.returncode == 0, appended.stdout + appended.stderr
        assert "51 quads" in _said(appended)
        assert _exposed(outside) == []
        again = run_argweb(env, "rdf", "load", str(data), timeout=120)
        assert again.returncode == 0, again.stdout + again.stderr
        queried = run_argweb(env, "sparql", "--format", "csv", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        assert queried.returncode == 0, queried.stdout + queried.stderr
        assert queried.stdout.split() == ["n", "50"]
        assert _exposed(outside) == []
    files: list[Any] = [p for p in store.rglob("*") if p.is_file()]
    assert files, "the store holds no files"
    assert not store.with_name("oxigraph.loading").exists() and not store.with_name("oxigraph.old").exists()
    # The checkout itself is untouched by a store configured elsewhere.
    assert not (ROOT / "elsewhere").exists()
    record("sparql_store_private", files=len(files), modes=sorted({oct(p.stat().st_mode & 0o777) for p in files}))
