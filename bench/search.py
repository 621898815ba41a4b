"""Benchmark: semantic search (Neo4j vector indexes) against full-text search on the whole graph.

Starts its own embedded Neo4j in a temporary directory (or uses ``--data-dir`` as it is), loads
every corpus the registry finds under ``$ARGWEB_CORPORA`` or ``../shared/corpora`` (the shipped
samples when neither exists) when the graph is empty, embeds every locution and proposition
(``argweb embed``: the embedding cache of the settings makes a second run fast), then runs
``--queries`` texts drawn from the graph (seeded; half of them cut to their first words, so the
queries vary in length and never equal a stored text) through ``semantic.search`` (k=10, both
labels, a fifth of them with a corpus filter) and through the full-text index, and prints median
and p99 latency of each. The goal of issue 9: semantic search under 100 ms median.

Usage: ``python -m bench.search [--corpora DIR] [--data-dir DIR [--no-embed]] [--queries 200] [--seed 0]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BENCH_ARGS: list[str] = ["--queries", "200"]
BENCH_QUICK_ARGS = ["--corpora", "graphstore/samples", "--queries", "20", "--heap", "1g"]
PASSWORD = "argweb-bench-password"


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", help="Corpora directory (default: $ARGWEB_CORPORA, ../shared/corpora).")
    parser.add_argument("--data-dir", help="An existing data directory to use (default: a temporary one).")
    parser.add_argument("--queries", type=int, default=200, help="Number of queries.")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the query sample.")
    parser.add_argument("--heap", default="3g", help="Neo4j heap.")
    parser.add_argument(
        "--no-embed", action="store_true", help="Measure on what is embedded already (with --data-dir)."
    )
    args = parser.parse_args()

    from api.services import semantic
    from api.services.corpora import corpora_root
    from api.services.graph import Graph, embedded_server, neo4j_password, open_driver, private_settings
    from api.settings import get_settings
    from bench.harness import record
    from graphstore.browsing import BrowseService
    from graphstore.store import GraphStore
    from ontology.formats.registry import CORPORA

    root = corpora_root(get_settings().with_overrides(corpora=Path(args.corpora) if args.corpora else None))
    work = Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="argweb-bench-search-"))
    # An existing data directory keeps the password it was created with (configured, or stored in it).
    password = neo4j_password(get_settings().with_overrides(data_dir=work)) if args.data_dir else PASSWORD
    settings = private_settings(work, password, heap=args.heap).model_copy(
        update={"cache_dir": get_settings().cache_dir}
    )
    server = embedded_server(settings)
    server.start()
    driver = open_driver(settings, start=False)
    try:
        store = GraphStore(driver, batch_size=settings.batch_size)
        if not store.read("MATCH (n:Node) RETURN n.id AS id LIMIT 1"):
            print(f"== ingest ({root})")
            for spec in CORPORA.values():
                files = spec.find(root)
                if files:
                    report = store.ingest(spec.load(files))
                    print(f"{spec.name:<11} {report.nodes:>9,} nodes {report.seconds:7.1f}s")
        graph = Graph(settings, driver=driver)
        if not args.no_embed:
            print("== embed")
            t0 = time.perf_counter()
            report = semantic.embed_graph(graph, settings)
            print(f"{report.as_dict()} in {time.perf_counter() - t0:.1f}s")

        rows = store.read(
            "MATCH (n) WHERE (n:Proposition OR n:Locution) AND n.embedding IS NOT NULL "
            "RETURN n.text AS text, n.corpus AS corpus"
        )
        rng = random.Random(args.seed)
        picked = rng.sample(rows, min(args.queries, len(rows)))
        queries: list[tuple[str, str | None]] = []
        for i, r in enumerate(picked):
            words = r["text"].split()
            text = " ".join(words[: max(3, len(words) // 2)]) if i % 2 else r["text"]
            queries.append((text[:500], r["corpus"] if i % 5 == 0 else None))
        print(f"== {len(queries)} queries over {len(rows):,} embedded nodes")

        semantic.search(graph, settings, "warm up the encoder", k=10)
        sem: list[float] = []
        for text, corpus in queries:
            t = time.perf_counter()
            semantic.search(graph, settings, text, k=10, corpus=corpus)
            sem.append((time.perf_counter() - t) * 1000)
        browse = BrowseService(driver, settings.neo4j_database, 30.0)
        full: list[float] = []
        for text, corpus in queries:
            t = time.perf_counter()
            browse.search(text, corpus, limit=10)
            full.append((time.perf_counter() - t) * 1000)
        note = f"{len(queries)} queries, {len(rows):,} nodes"
        print(f"semantic  median {statistics.median(sem):7.1f} ms  p99 {_p99(sem):7.1f} ms")
        print(f"full-text median {statistics.median(full):7.1f} ms  p99 {_p99(full):7.1f} ms")
        record("semantic search: median latency", statistics.median(sem), "ms", 100, "lower", note)
        record("semantic search: p99 latency", _p99(sem), "ms", 500, "lower", note)
        record("full-text search: median latency", statistics.median(full), "ms", 100, "lower", note)
    finally:
        driver.close()
        if not args.data_dir:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
