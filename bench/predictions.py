"""Benchmark: writing, re-writing and deleting one large prediction run.

One run does:

1. start its own embedded Neo4j on a free port in a temporary directory;
2. ingest the Molweni and STAC files found under ``--corpora`` (default ``../shared/corpora``,
   else the packaged samples);
3. build ``--n`` predicted relations (default 100,000) between locutions of the same dialogue,
   cycling through the 16 discourse senses and the argument labels;
4. write them as one prediction run with :class:`PredictionStore` (``UNWIND`` batches, run marker),
   write the same run again (must write nothing), delete the model's predictions;
5. print the seconds and relations per second of each step and check that the gold counts did
   not change.

Usage: ``python bench/predictions.py [--corpora DIR] [--n 100000] [--batch-size 5000] [--heap 2g]``
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from api.services.graph import embedded_server, open_driver, private_settings
from graphstore.predictions import PredictionStore
from graphstore.store import DEFAULT_BATCH_SIZE, GraphStore
from ontology.formats.registry import CORPORA, SAMPLES
from ontology.labels import RelationLabel
from ontology.records import PredictedRelation, PredictionRun

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "argweb-bench-password"
console = Console(width=120)


def _pairs(store: GraphStore, n: int) -> list[PredictedRelation]:
    dialogues = store.read(
        "MATCH (l:Locution)-[:PART_OF]->(d:Dialogue) WITH d, collect(l.id) AS ids RETURN ids ORDER BY d.id"
    )
    labels = list(RelationLabel)
    rows: list[PredictedRelation] = []
    seen: set[tuple[str, str, str]] = set()
    pairs = ((a, b) for row in dialogues for a, b in itertools.permutations(sorted(row["ids"]), 2))
    for k, (a, b) in enumerate(itertools.cycle(list(pairs))):
        label = labels[k % len(labels)]
        if (a, b, label.value) in seen:
            label = labels[(k // len(labels)) % len(labels)]
        if (a, b, label.value) in seen:
            continue
        seen.add((a, b, label.value))
        rows.append(PredictedRelation(source=a, target=b, label=label, score=(k % 1000) / 1000))
        if len(rows) == n:
            return rows
        if k > 50 * n:
            break
    raise SystemExit(f"only {len(rows)} distinct (source, target, label) triples in the loaded dialogues")


BENCH_QUICK_ARGS = ["--n", "2000", "--corpora", "graphstore/samples", "--heap", "1g"]
# 100,000 predicted relations written within a minute.
WRITE_PER_S = 100_000 / 60


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--corpora", type=Path, default=ROOT.parent / "shared" / "corpora")
    parser.add_argument("--n", type=int, default=100_000, help="predicted relations in the run")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    parser.add_argument("--heap", default="2g")
    args = parser.parse_args(argv)
    root = args.corpora if args.corpora.is_dir() else SAMPLES
    with tempfile.TemporaryDirectory(prefix="argweb-bench-") as tmp:
        settings = private_settings(Path(tmp), PASSWORD, heap=args.heap)
        server = embedded_server(settings)
        server.start()
        try:
            driver = open_driver(settings, start=False)
            store = GraphStore(driver, batch_size=args.batch_size)
            for name in ("molweni", "stac"):
                spec = CORPORA[name]
                store.ingest(spec.load(spec.find(root)))
            gold = store.stats()
            rows = _pairs(store, args.n)
            preds = PredictionStore(driver, batch_size=args.batch_size)
            run = PredictionRun(run_id="bench", model="bench-model", model_version="1", task="bench")
            figures = []
            started = time.perf_counter()
            report = preds.write(run, rows)
            figures.append(("write", report.written, time.perf_counter() - started))
            started = time.perf_counter()
            again = preds.write(run, rows)
            figures.append(("write again (no-op)", again.written, time.perf_counter() - started))
            started = time.perf_counter()
            deleted = preds.delete("bench-model")
            figures.append(("delete", deleted, time.perf_counter() - started))
            unchanged = store.stats() == gold
            driver.close()
        finally:
            server.stop()
    table = Table(title=f"prediction run of {args.n} relations ({root})")
    for col in ("step", "relations", "seconds", "relations/s"):
        table.add_column(col, justify="left" if col == "step" else "right")
    for step, n, seconds in figures:
        table.add_row(step, str(n), f"{seconds:.1f}", f"{n / seconds:.0f}" if n else "-")
    console.print(table)
    console.print(f"gold counts unchanged after write and delete: {unchanged}")
    from bench.harness import record

    (_, written, write_s), (_, rewritten, _), (_, _, delete_s) = figures
    note = f"{args.n:,} relations"
    record("predictions: write one run", written / write_s, "rel/s", WRITE_PER_S, "higher", note)
    record("predictions: written again by a re-run", rewritten, "rel", 0, "lower", note)
    record("predictions: delete the run", deleted / delete_s if delete_s else 0, "rel/s", WRITE_PER_S, "higher", note)
    record("predictions: gold counts changed", 0 if unchanged else 1, "", 0, "lower", note)
    return 0 if unchanged and again.already_complete and deleted == args.n else 1


if __name__ == "__main__":
    sys.exit(main())
