"""Benchmark: the HTTP API against the same Cypher through the driver, and throughput under load.

One run does:

1. start its own embedded Neo4j on a free port in a temporary directory and load the corpora of
   ``--corpora`` (default: the shipped samples), or use ``--uri`` (read only, nothing written);
2. start the API (``uvicorn api.app:app``, one worker) as a child process on a loopback port;
3. for ``/nodes/{id}/neighbors`` (``--nodes`` locutions, depth 1) and ``/relations?limit=100``,
   time ``--n`` requests through HTTP (one keep-alive ``http.client`` connection: the leanest
   client, so that the figure is the API's cost rather than a client library's; ``requests``
   adds about a millisecond of client CPU per call) and the same Cypher builder run
   through the driver in a READ transaction (what the route does, minus HTTP and JSON), in
   alternation so that both see the same machine load; report median and p99 of each;
4. run a bounded concurrent load (``--concurrency`` clients, at most ``--load-requests`` requests
   and ``--load-seconds`` seconds, loopback only) over a mix of read routes and report requests/s
   and errors;
5. print the table (figure, goal, ratio, pass/miss) and write it to ``--json``.

Goal: API median <= 1.5x the direct query's median.

Usage: ``python bench/api.py [--corpora DIR] [--n 200] [--concurrency 8] [--load-seconds 15]
[--load-requests 2000] [--uri bolt://... --user neo4j --password ...] [--json OUT]``
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests
from neo4j import Driver
from rich.console import Console
from rich.table import Table

# This file is named like the `api` package; run as a script, its folder must not shadow it.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from api.services.graph import neo4j_password  # noqa: E402
from api.settings import Settings  # noqa: E402
from bench.harness import bench_neo4j  # noqa: E402
from graphstore import browse  # noqa: E402
from graphstore.loaders.registry import CORPORA, SAMPLES  # noqa: E402
from graphstore.readonly import ReadRunner  # noqa: E402
from graphstore.runtime import free_port  # noqa: E402
from graphstore.store import GraphStore  # noqa: E402
from ontology.terms import Label  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GOAL_RATIO = 1.5
BENCH_QUICK_ARGS = ["--n", "20", "--nodes", "10", "--load-seconds", "3", "--load-requests", "200"]
console = Console(width=120)


@contextmanager
def graph(args: argparse.Namespace) -> Iterator[tuple[Settings, Driver]]:
    """Settings and driver of ``--uri``, or of a throw-away embedded server with the corpora loaded."""
    with bench_neo4j(args, "argweb-bench-api-") as (settings, driver):
        if not args.uri:
            store = GraphStore(driver, batch_size=5000)
            for name, spec in CORPORA.items():
                files = spec.find(args.corpora)
                if files:
                    report = store.ingest(spec.load(files))
                    console.print(f"loaded {name}: {report.items:,} items in {report.seconds:.1f}s")
        yield settings, driver


@contextmanager
def api_server(settings: Settings) -> Iterator[str]:
    """The API as a child process on a loopback port."""
    port = free_port()
    env = {
        **os.environ,
        "ARGWEB_NEO4J_URI": str(settings.neo4j_uri),
        "ARGWEB_NEO4J_USER": settings.neo4j_user,
        "ARGWEB_NEO4J_PASSWORD": neo4j_password(settings),
        "ARGWEB_DATA_DIR": str(settings.data_dir),
    }
    cmd = [sys.executable, "-m", "uvicorn", "api.app:app", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(
        [*cmd, "--log-level", "warning"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if requests.get(f"{url}/corpora", timeout=5).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the API did not start: {proc.stderr.read().decode() if proc.stderr else ''}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def compare(n: int, api_call: Callable[[int], Any], direct_call: Callable[[int], Any]) -> dict[str, float]:
    """Median and p99 (ms) of ``n`` API calls and ``n`` direct calls, alternated (after 10 warm-ups each)."""
    for i in range(10):
        api_call(i)
        direct_call(i)
    api_ms: list[float] = []
    direct_ms: list[float] = []
    for i in range(n):
        api_ms.append(timed(lambda i=i: api_call(i)))
        direct_ms.append(timed(lambda i=i: direct_call(i)))
    return {
        "api_median_ms": statistics.median(api_ms),
        "api_p99_ms": percentile(api_ms, 0.99),
        "direct_median_ms": statistics.median(direct_ms),
        "direct_p99_ms": percentile(direct_ms, 0.99),
    }


def load(url: str, paths: list[str], concurrency: int, max_requests: int, max_seconds: float) -> dict[str, float]:
    """Requests/s of ``concurrency`` clients over ``paths``, bounded in count and time (loopback)."""
    lock = threading.Lock()
    state = {"sent": 0, "errors": 0}
    deadline = time.monotonic() + max_seconds

    def client(k: int) -> None:
        session = requests.Session()
        i = k
        while time.monotonic() < deadline:
            with lock:
                if state["sent"] >= max_requests:
                    return
                state["sent"] += 1
            r = session.get(url + paths[i % len(paths)], timeout=60)
            if r.status_code != 200:
                with lock:
                    state["errors"] += 1
            i += concurrency

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(client, range(concurrency)))
    seconds = time.perf_counter() - started
    return {
        "requests": state["sent"],
        "errors": state["errors"],
        "seconds": seconds,
        "requests_per_s": state["sent"] / seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", type=Path, default=SAMPLES)
    parser.add_argument("--n", type=int, default=200, help="timed requests per endpoint and side")
    parser.add_argument("--nodes", type=int, default=50, help="distinct nodes for /neighbors")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--load-seconds", type=float, default=15.0)
    parser.add_argument("--load-requests", type=int, default=2000)
    parser.add_argument("--heap", default="1g")
    parser.add_argument("--uri")
    parser.add_argument("--user", default="neo4j")
    parser.add_argument("--password", default="")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    with graph(args) as (settings, driver), api_server(settings) as url:
        reader = ReadRunner(driver, settings.neo4j_database, settings.cypher_timeout)
        ids = [
            r["id"] for r in reader.rows("MATCH (n:Locution) RETURN n.id AS id ORDER BY n.id LIMIT $n", n=args.nodes)
        ]
        if not ids:
            raise SystemExit("no locutions in the graph")
        connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=60)
        neighbors_query = browse.neighbors([], "both", 1)
        relations_query = browse.relations(Label.Relation)

        def get(path: str) -> None:
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                raise SystemExit(f"GET {path} answered {response.status}")

        def api_neighbors(i: int) -> None:
            get(f"/nodes/{quote(ids[i % len(ids)], safe=':')}/neighbors")

        def direct_neighbors(i: int) -> None:
            reader.rows(neighbors_query, id=ids[i % len(ids)], limit=201)

        def api_relations(i: int) -> None:
            get("/relations?limit=100")

        def direct_relations(i: int) -> None:
            reader.rows(
                relations_query, origin=None, model=None, min_score=None, corpus=None, sense=None, after="", limit=101
            )

        figures: dict[str, Any] = {
            "neighbors": compare(args.n, api_neighbors, direct_neighbors),
            "relations": compare(args.n, api_relations, direct_relations),
        }
        mix = [f"/nodes/{i}/neighbors" for i in ids[:10]] + [
            "/relations?limit=100",
            "/corpora",
            "/dialogues?limit=50",
            f"/nodes/{ids[0]}",
        ]
        figures["load"] = load(url, mix, args.concurrency, args.load_requests, args.load_seconds)

    table = Table(title="API vs direct driver (loopback)")
    for col in ("figure", "value", "goal", "ratio", "result"):
        table.add_column(col, justify="left" if col in ("figure", "goal") else "right")
    rows = []
    for name in ("neighbors", "relations"):
        f = figures[name]
        ratio = f["api_median_ms"] / f["direct_median_ms"]
        f["ratio"] = ratio
        f["pass"] = ratio <= GOAL_RATIO
        path = "/nodes/{id}/neighbors" if name == "neighbors" else "/relations?limit=100"
        rows += [
            (
                f"{path} median (API / direct)",
                f"{f['api_median_ms']:.1f} / {f['direct_median_ms']:.1f} ms",
                f"<= {GOAL_RATIO}x",
                f"{ratio:.2f}x",
                "pass" if f["pass"] else "miss",
            ),
            (
                f"{path} p99 (API / direct)",
                f"{f['api_p99_ms']:.1f} / {f['direct_p99_ms']:.1f} ms",
                "-",
                f"{f['api_p99_ms'] / f['direct_p99_ms']:.2f}x",
                "-",
            ),
        ]
    ld = figures["load"]
    rows.append(
        (
            f"load: {args.concurrency} clients, mixed reads",
            f"{ld['requests_per_s']:.0f} req/s ({ld['requests']} in {ld['seconds']:.1f}s, {ld['errors']} errors)",
            "0 errors",
            "-",
            "pass" if ld["errors"] == 0 else "miss",
        )
    )
    for row in rows:
        table.add_row(*row)
    console.print(table)
    from bench.harness import record

    for name, path in (("neighbors", "/nodes/{id}/neighbors"), ("relations", "/relations?limit=100")):
        f = figures[name]
        note = f"{f['api_median_ms']:.1f} / {f['direct_median_ms']:.1f} ms, n={args.n}"
        record(f"api: {path} median, API / direct", f["ratio"], "x", GOAL_RATIO, "lower", note)
    note = f"{ld['requests_per_s']:.0f} req/s, {ld['requests']} requests, {args.concurrency} clients"
    record("api: errors under concurrent load", ld["errors"], "", 0, "lower", note)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
