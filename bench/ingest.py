"""Benchmark: batched GraphStore ingest against one transaction per record, on the same data.

One run does:

1. start its own embedded Neo4j on a free port in a temporary directory (or use ``--uri``);
2. parse the corpora found under ``--corpora`` (default ``../shared/corpora``: Molweni
   ``DP/dev.json``, STAC ``train.json`` and every DialAM-2024 map; any directory laid out the same
   way works, e.g. ``graphstore/samples``) into bundles, timed apart from the writes;
3. empty the graph and ingest the three bundles with :class:`GraphStore` (``UNWIND`` batches, the
   production path), timing wall time and nodes + relationships per second;
4. empty the graph and write the first ``--baseline-n`` items of the same data (nodes in file
   order, then the relationships among them) with one write transaction per record, using
   ``cypher.create_node_single`` / ``cypher.create_edge_single``;
5. print a summary table with items/s, the batched/baseline ratio and the targets
   (three corpora in <= 60 s, ratio >= 20x).

The graph is emptied twice, so ``--uri`` is refused without ``--wipe``.

Figures go to the shared table of ``make bench`` through :mod:`bench.harness`.

Usage: ``python -m bench.ingest [--corpora DIR] [--baseline-n 5000] [--batch-size 5000]
[--heap 2g] [--uri bolt://... --user neo4j --password ... --wipe] [--json OUT]``
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from neo4j import Driver, ManagedTransaction
from rich.console import Console
from rich.table import Table

from api.services.corpora import corpora_root
from api.settings import get_settings
from bench.harness import bench_neo4j
from graphstore import cypher
from graphstore.store import DEFAULT_BATCH_SIZE, GraphStore
from ontology.formats.registry import CORPORA
from ontology.records import CorpusBundle, EdgeRecord, NodeRecord

TARGET_SECONDS = 60.0
TARGET_RATIO = 20.0
BENCH_CORPORA = ("molweni", "stac", "qt30")
BENCH_QUICK_ARGS = ["--corpora", "graphstore/samples", "--baseline-n", "200", "--heap", "1g"]
console = Console(width=120)


@dataclass
class Row:
    """One line of the summary."""

    what: str
    files: int
    nodes: int
    edges: int
    load_s: float
    write_s: float

    @property
    def items(self) -> int:
        return self.nodes + self.edges

    @property
    def rate(self) -> float:
        return self.items / self.write_s if self.write_s > 0 else 0.0


@contextmanager
def neo4j_driver(args: argparse.Namespace) -> Iterator[Driver]:
    """The driver of ``--uri``, or of a throw-away embedded server."""
    with bench_neo4j(args, "argweb-bench-", console.print) as (_settings, driver):
        yield driver


def empty(store: GraphStore) -> None:
    for name in store.stats()["corpora"]:
        store.delete_corpus(name)
    left = store.stats()["labels"]
    if left:
        raise SystemExit(f"could not empty the graph, left: {left}")


def first_items(bundles: list[CorpusBundle], n: int) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    """The shortest prefix of the nodes that, with the edges among them, makes ``n`` items."""
    nodes = [node for bundle in bundles for node in bundle.nodes]
    position = {node.id: k for k, node in enumerate(nodes)}
    # An edge becomes writable once the later of its two ends is in the prefix.
    edges = sorted(
        (max(position[e.source], position[e.target]), k, e)
        for k, e in enumerate(edge for bundle in bundles for edge in bundle.edges)
    )
    chosen: list[EdgeRecord] = []
    j = 0
    for k in range(1, len(nodes) + 1):
        while j < len(edges) and edges[j][0] < k:
            chosen.append(edges[j][2])
            j += 1
        if k + len(chosen) >= n:
            return nodes[:k], chosen[: n - k]
    return nodes, chosen


def _run(tx: ManagedTransaction, query: str, params: dict[str, Any]) -> None:
    tx.run(query, params).consume()


def write_one_by_one(driver: Driver, database: str, nodes: list[NodeRecord], edges: list[EdgeRecord]) -> float:
    """Write every record in its own transaction; returns the wall time."""
    batch = uuid.uuid4().hex
    started = time.perf_counter()
    with driver.session(database=database) as session:
        params: dict[str, Any]
        for node in nodes:
            params = {"id": node.id, "props": node.properties(), "batch": batch}
            session.execute_write(_run, cypher.create_node_single(node.labels()), params)
        for edge in edges:
            params = {
                "source": edge.source,
                "target": edge.target,
                "props": edge.properties(),
                "batch": batch,
            }
            session.execute_write(_run, cypher.create_edge_single(edge.type), params)
    return time.perf_counter() - started


def check_counts(store: GraphStore, bundles: list[CorpusBundle]) -> list[str]:
    """Differences between what the graph holds per corpus and what the bundles contain."""
    corpora = store.stats()["corpora"]
    problems = []
    for bundle in bundles:
        name = bundle.corpus.id
        got = corpora.get(name, {"labels": {}, "relationships": {}})
        want_rels: dict[str, int] = {}
        for edge in bundle.edges:
            want_rels[edge.type.value] = want_rels.get(edge.type.value, 0) + 1
        if got["relationships"] != want_rels:
            problems.append(f"{name}: relationships {got['relationships']} != {want_rels}")
        nodes = len(bundle.nodes)
        if got["labels"].get("Node") != nodes:
            problems.append(f"{name}: {got['labels'].get('Node')} nodes != {nodes}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--corpora", type=Path, help="corpora directory (default: as `argweb run` finds it)")
    parser.add_argument("--baseline-n", type=int, default=5000, help="items written one transaction each")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="rows per UNWIND transaction")
    parser.add_argument("--heap", default="2g", help="JVM heap of the embedded server")
    parser.add_argument("--uri", help="use this Neo4j instead of an embedded one (its graph is emptied!)")
    parser.add_argument("--user", default=get_settings().neo4j_user)
    parser.add_argument("--password", default="")
    parser.add_argument("--wipe", action="store_true", help="allow emptying the graph behind --uri")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.uri and not args.wipe:
        parser.error("--uri empties that graph twice; add --wipe if that is what you want")
    # The server's deprecation/"unknown property" notices would drown the figures.
    logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)

    root = corpora_root(get_settings().with_overrides(corpora=args.corpora))
    rows: list[Row] = []
    bundles: list[CorpusBundle] = []
    for spec in (CORPORA[name] for name in BENCH_CORPORA):
        files = spec.find(root)
        if not files:
            console.print(f"[yellow]{spec.name}: no files under {root / spec.folder}, skipped[/]")
            continue
        started = time.perf_counter()
        bundle = spec.load(files)
        bundle.validate()
        rows.append(Row(spec.name, len(files), len(bundle.nodes), len(bundle.edges), time.perf_counter() - started, 0))
        bundles.append(bundle)
    if not bundles:
        console.print(f"[red]no corpora found under {root}[/]")
        return 1
    console.print(f"corpora: {root} ({', '.join(r.what for r in rows)})")

    total_started = time.perf_counter()
    with neo4j_driver(args) as driver:
        store = GraphStore(driver, batch_size=args.batch_size)
        store.ensure_schema()
        empty(store)

        # 1. batched, the production path
        batched_started = time.perf_counter()
        for row, bundle in zip(rows, bundles, strict=True):
            report = store.ingest(bundle)
            row.write_s = report.seconds
            console.print(f"  batched {row.what}: {row.items:,} items in {row.write_s:.1f}s ({row.rate:,.0f}/s)")
        batched_s = time.perf_counter() - batched_started
        problems = check_counts(store, bundles)

        # 2. one transaction per record, same data, cleared graph
        empty(store)
        nodes, edges = first_items(bundles, args.baseline_n)
        console.print(f"  baseline: {len(nodes):,} nodes + {len(edges):,} relationships, one transaction each ...")
        baseline_s = write_one_by_one(driver, store.database, nodes, edges)
        baseline_nodes = store.stats()["labels"].get("Node", 0)
        if baseline_nodes != len(nodes):
            problems.append(f"baseline wrote {baseline_nodes} nodes, expected {len(nodes)}")
        empty(store)
    total_s = time.perf_counter() - total_started

    total = Row(
        "all three",
        sum(r.files for r in rows),
        sum(r.nodes for r in rows),
        sum(r.edges for r in rows),
        sum(r.load_s for r in rows),
        batched_s,
    )
    baseline = Row("1 tx per record", 0, len(nodes), len(edges), 0.0, baseline_s)
    ratio = total.rate / baseline.rate if baseline.rate else float("inf")

    table = Table(title=f"argweb ingest benchmark (batch size {args.batch_size}, corpora {root})")
    for col in ("what", "files", "nodes", "relationships", "items", "parse s", "write s", "items/s"):
        table.add_column(col, justify="left" if col == "what" else "right")
    for row in [*rows, total, baseline]:
        table.add_row(
            row.what,
            str(row.files) if row.files else "",
            f"{row.nodes:,}",
            f"{row.edges:,}",
            f"{row.items:,}",
            f"{row.load_s:.1f}" if row.load_s else "",
            f"{row.write_s:.1f}",
            f"{row.rate:,.0f}",
        )
    console.print(table)
    ok_time = total.write_s <= TARGET_SECONDS
    ok_ratio = ratio >= TARGET_RATIO
    mark = {True: "[green]ok[/]", False: "[red]MISSED[/]"}
    console.print(
        f"batched ingest of the three corpora: {total.write_s:.1f}s wall "
        f"(target <= {TARGET_SECONDS:.0f}s: {mark[ok_time]}); parse {total.load_s:.1f}s; "
        f"parse + write {total.load_s + total.write_s:.1f}s"
    )
    console.print(
        f"batched {total.rate:,.0f} items/s vs one-transaction-per-record {baseline.rate:,.0f} items/s: "
        f"ratio {ratio:,.1f}x (target >= {TARGET_RATIO:.0f}x: {mark[ok_ratio]})"
    )
    console.print(f"benchmark wall time (incl. server start/stop and clean-ups): {total_s:.1f}s")
    for problem in problems:
        console.print(f"[red]count check: {problem}[/]")
    from bench.harness import record

    record(
        "ingest: molweni+stac+qt30 batched, wall", total.write_s, "s", TARGET_SECONDS, "lower", f"{total.items:,} items"
    )
    record("ingest: batched / one tx per record", ratio, "x", TARGET_RATIO, "higher")
    record("ingest: count mismatches after ingest", len(problems), "", 0, "lower")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        figures = {
            "corpora": str(root),
            "batch_size": args.batch_size,
            "rows": [asdict(r) | {"items": r.items, "items_per_s": r.rate} for r in rows],
            "batched_seconds": total.write_s,
            "batched_items_per_s": total.rate,
            "baseline": asdict(baseline) | {"items": baseline.items, "items_per_s": baseline.rate},
            "ratio": ratio,
            "count_problems": problems,
        }
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
