"""Benchmark: the HTTP API against the same Cypher through the driver, and throughput under load.

One run does:

1. start its own embedded Neo4j on a free port in a temporary directory and load the corpora of
   ``--corpora`` (default: the shipped samples), or use ``--uri`` or, with ``--main`` (what
   ``make bench`` passes), the main job's graph: the full corpora with their predictions (read
   only, nothing written);
2. start the API (``uvicorn api.app:app``, one worker) as a child process on a loopback port;
3. for ``/nodes/{id}/neighbors`` (``--nodes`` locutions, depth 1) time ``--n`` requests through
   HTTP (one keep-alive ``http.client`` connection: the leanest client, so that the figure is the
   API's cost rather than a client library's; ``requests`` adds about a millisecond of client CPU
   per call) and the same Cypher builder run through the driver in a READ transaction (what the
   route does, minus HTTP and JSON), in alternation so that both see the same machine load;
   report median and p99 of each (goal: API median <= 1.3x the direct query's); then the same
   against the smallest FastAPI app serving that route (``bench/api_floor.py``: no middleware,
   service or response model), the framework's own floor, printed beside the API's figure;
4. time ``/relations?limit=100`` the same way with no filter and with each filter alone (type,
   origin gold and predicted, model, min_score, corpus, sense; values taken from the graph), the
   API against its own Cypher through the driver (goal: API median <= 20 ms each);
   Beside each median: the CPU time per call of the API process (from ``/proc``) and of the
   driver's side of a direct call, which a loaded machine does not stretch as it does wall time;
5. run a bounded concurrent load (``--concurrency`` clients, at most ``--load-requests`` requests
   and ``--load-seconds`` seconds, loopback only) over a mix of read routes and report requests/s
   and errors;
6. print the table (figure, goal, ratio, pass/miss) and write it to ``--json``.

Usage: ``python bench/api.py [--corpora DIR] [--n 200] [--concurrency 8] [--load-seconds 15]
[--load-requests 2000] [--uri bolt://... --user neo4j --password ...] [--json OUT]``
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import requests
from rich.console import Console
from rich.table import Table

# This file is named like the `api` package; run as a script, its folder must not shadow it.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from bench.harness import MAIN_HELP, bench_api, bench_graph, cpu_seconds  # noqa: E402
from graphstore import browse  # noqa: E402
from graphstore.browsing import RelationFilter  # noqa: E402
from graphstore.readonly import ReadRunner  # noqa: E402
from ontology.formats.registry import SAMPLES  # noqa: E402

GOAL_RATIO = 1.3
GOAL_RELATIONS_MS = 20.0
# make bench runs the main job first: the figures are those of the full graph with its predictions.
BENCH_ARGS = ["--main"]
BENCH_QUICK_ARGS = ["--n", "20", "--nodes", "10", "--load-seconds", "3", "--load-requests", "200"]
console = Console(width=120)


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def compare(
    n: int, api_call: Callable[[int], Any], direct_call: Callable[[int], Any], api_pid: int
) -> dict[str, float]:
    """Median and p99 (ms) of ``n`` API calls and ``n`` direct calls, alternated (after 10 warm-ups
    each), and the CPU time per call of the API process and of this process's direct calls (the
    driver's side; robust to the machine's load, unlike the wall times)."""
    for i in range(10):
        api_call(i)
        direct_call(i)
    api_ms: list[float] = []
    direct_ms: list[float] = []
    api_cpu = direct_cpu = 0.0
    for i in range(n):
        before = cpu_seconds(api_pid)
        api_ms.append(timed(lambda i=i: api_call(i)))
        api_cpu += cpu_seconds(api_pid) - before
        started = time.process_time()
        direct_ms.append(timed(lambda i=i: direct_call(i)))
        direct_cpu += time.process_time() - started
    return {
        "api_median_ms": statistics.median(api_ms),
        "api_p99_ms": percentile(api_ms, 0.99),
        "direct_median_ms": statistics.median(direct_ms),
        "direct_p99_ms": percentile(direct_ms, 0.99),
        "api_cpu_ms": api_cpu * 1000 / n,
        "direct_client_cpu_ms": direct_cpu * 1000 / n,
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
    parser.add_argument("--main", action="store_true", help=MAIN_HELP)
    parser.add_argument("--uri")
    parser.add_argument("--user", default="neo4j")
    parser.add_argument("--password", default="")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    with (
        bench_graph(args, "argweb-bench-api-", console.print) as (settings, driver),
        bench_api(settings) as (url, api_pid),
        bench_api(settings, "bench.api_floor:app", "/ready") as (floor_url, floor_pid),
    ):
        reader = ReadRunner(driver, settings.neo4j_database, settings.cypher_timeout)
        ids = [
            r["id"] for r in reader.rows("MATCH (n:Locution) RETURN n.id AS id ORDER BY n.id LIMIT $n", n=args.nodes)
        ]
        if not ids:
            raise SystemExit("no locutions in the graph")
        connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=60)
        neighbors_query = browse.neighbors([], "both", 1)

        def get(path: str) -> None:
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                raise SystemExit(f"GET {path} answered {response.status}")

        def api_neighbors(i: int) -> None:
            get(f"/nodes/{quote(ids[i % len(ids)], safe=':')}/neighbors")

        def direct_neighbors(i: int) -> None:
            reader.rows(neighbors_query, id=ids[i % len(ids)], limit=200)  # the route's default page

        floor = http.client.HTTPConnection(floor_url.removeprefix("http://"), timeout=60)

        def floor_neighbors(i: int) -> None:
            path = f"/nodes/{quote(ids[i % len(ids)], safe=':')}/neighbors"
            floor.request("GET", path)
            response = floor.getresponse()
            response.read()
            if response.status != 200:
                raise SystemExit(f"GET {path} (smallest FastAPI app) answered {response.status}")

        figures: dict[str, Any] = {
            "neighbors": compare(args.n, api_neighbors, direct_neighbors, api_pid),
            "neighbors_floor": compare(args.n, floor_neighbors, direct_neighbors, floor_pid),
            "relations": {},
        }
        for name, params in relation_filters(reader).items():
            where = RelationFilter(**{("kind" if k == "type" else k): v for k, v in params.items()})
            query, values = where.query(), {**where.params(), "after": "", "limit": 101}
            path = "/relations?" + urlencode({"limit": 100, **params})

            def api_relations(i: int, path: str = path) -> None:
                get(path)

            def direct_relations(i: int, query: str = query, values: dict[str, Any] = values) -> None:
                reader.rows(query, **values)

            figures["relations"][name] = {"path": path, **compare(args.n, api_relations, direct_relations, api_pid)}
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
    f = figures["neighbors"]
    f["ratio"] = f["api_median_ms"] / f["direct_median_ms"]
    f["pass"] = f["ratio"] <= GOAL_RATIO
    rows += [
        (
            "/nodes/{id}/neighbors median (API / direct)",
            f"{f['api_median_ms']:.1f} / {f['direct_median_ms']:.1f} ms",
            f"<= {GOAL_RATIO}x",
            f"{f['ratio']:.2f}x",
            "pass" if f["pass"] else "miss",
        ),
        (
            "/nodes/{id}/neighbors p99 (API / direct)",
            f"{f['api_p99_ms']:.1f} / {f['direct_p99_ms']:.1f} ms",
            "-",
            f"{f['api_p99_ms'] / f['direct_p99_ms']:.2f}x",
            "-",
        ),
    ]
    fl = figures["neighbors_floor"]
    fl["ratio"] = fl["api_median_ms"] / fl["direct_median_ms"]
    rows.append(
        (
            "/nodes/{id}/neighbors median, smallest FastAPI app / direct",
            f"{fl['api_median_ms']:.1f} / {fl['direct_median_ms']:.1f} ms",
            "-",
            f"{fl['ratio']:.2f}x",
            "-",
        )
    )
    for name, r in figures["relations"].items():
        r["pass"] = r["api_median_ms"] <= GOAL_RELATIONS_MS
        rows.append(
            (
                f"/relations?limit=100 {name} median (API / direct; p99 API)",
                f"{r['api_median_ms']:.1f} / {r['direct_median_ms']:.1f} ms; {r['api_p99_ms']:.1f} ms",
                f"<= {GOAL_RELATIONS_MS:.0f} ms",
                f"{r['api_median_ms'] / r['direct_median_ms']:.2f}x",
                "pass" if r["pass"] else "miss",
            )
        )
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

    f = figures["neighbors"]
    note = (
        f"{f['api_median_ms']:.1f} / {f['direct_median_ms']:.1f} ms, n={args.n}; CPU per call: API process "
        f"{f['api_cpu_ms']:.1f} ms, driver side {f['direct_client_cpu_ms']:.1f} ms; the smallest FastAPI app "
        f"serving this route (bench/api_floor.py): {fl['api_median_ms']:.1f} / {fl['direct_median_ms']:.1f} ms, "
        f"{fl['ratio']:.2f}x"
    )
    record("api: /nodes/{id}/neighbors median, API / direct", f["ratio"], "x", GOAL_RATIO, "lower", note)
    for name, r in figures["relations"].items():
        note = (
            f"{r['path']}; direct {r['direct_median_ms']:.1f} ms, n={args.n}; CPU per call: API process "
            f"{r['api_cpu_ms']:.1f} ms, driver side {r['direct_client_cpu_ms']:.1f} ms"
        )
        record(f"api: /relations?limit=100 {name} median", r["api_median_ms"], "ms", GOAL_RELATIONS_MS, "lower", note)
    note = f"{ld['requests_per_s']:.0f} req/s, {ld['requests']} requests, {args.concurrency} clients"
    record("api: errors under concurrent load", ld["errors"], "", 0, "lower", note)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")


def relation_filters(reader: ReadRunner) -> dict[str, dict[str, Any]]:
    """The ``/relations`` filters to time: none, then each alone, with values the graph holds (a
    filter whose value the graph lacks, e.g. no predictions, is left out)."""
    row = reader.rows(
        "MATCH (r:Relation) WITH r LIMIT 1 "
        "CALL () { MATCH (p:Relation) WHERE p.origin = 'predicted' RETURN p.model AS model LIMIT 1 } "
        "CALL () { MATCH (d:DiscourseRelation) WHERE d.sense IS NOT NULL RETURN d.sense AS sense LIMIT 1 } "
        "RETURN r.corpus AS corpus, model, sense"
    )
    found = row[0] if row else {}
    filters: dict[str, dict[str, Any]] = {
        "no filter": {},
        "type=Support": {"type": "Support"},
        "origin=gold": {"origin": "gold"},
    }
    if found.get("model"):
        filters["origin=predicted"] = {"origin": "predicted"}
        filters["model"] = {"model": found["model"]}
        filters["min_score=0.5"] = {"min_score": 0.5}
    if found.get("corpus"):
        filters["corpus"] = {"corpus": "qt30" if _has_corpus(reader, "qt30") else found["corpus"]}
    if found.get("sense"):
        filters["sense"] = {"sense": found["sense"]}
    return filters


def _has_corpus(reader: ReadRunner, corpus: str) -> bool:
    return bool(reader.rows("MATCH (c:Corpus {id: $c}) RETURN c.id AS id", c=corpus))


if __name__ == "__main__":
    main()
