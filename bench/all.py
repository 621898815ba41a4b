"""``make bench``: run every benchmark under ``bench/`` and print ONE table of figures and goals.

Each ``bench/*.py`` (but :mod:`bench.harness` and this file) runs in its own process, one after the
other, with the arguments of its ``BENCH_ARGS`` constant when it has one; the figures it records
with :func:`bench.harness.record` are gathered into one table (figure, goal, ratio, pass/miss),
printed and written to ``bench/results.json``. A script that fails or records nothing is a FAIL
row. Exit status: 0 when every figure met its goal and every script ran, else 1.

Usage: ``python -m bench.all [--only NAME ...] [--timeout SECONDS]``
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import time
from pathlib import Path

from bench.harness import BENCH_DIR, RECORDS, RESULTS, read_records, table

ROOT = BENCH_DIR.parent
SKIP = {"harness", "all", "__init__"}


def bench_args(script: Path) -> list[str]:
    """The script's ``BENCH_ARGS`` constant, read from its source (the script is not imported)."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "BENCH_ARGS" for t in node.targets):
            value = ast.literal_eval(node.value)
            return [str(v) for v in value]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--only", nargs="*", help="run only these benchmarks (script names without .py)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per benchmark script")
    args = parser.parse_args(argv)

    scripts = sorted(p for p in BENCH_DIR.glob("*.py") if p.stem not in SKIP)
    if args.only:
        scripts = [p for p in scripts if p.stem in args.only]
    RECORDS.unlink(missing_ok=True)
    failures: dict[str, str] = {}
    started = time.perf_counter()
    for script in scripts:
        before = len(read_records())
        print(f"\n=== bench/{script.name}", flush=True)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(
                [sys.executable, "-m", f"bench.{script.stem}", *bench_args(script)],
                cwd=ROOT,
                timeout=args.timeout,
                check=False,
            )
            code = proc.returncode
        except subprocess.TimeoutExpired:
            code = None
        seconds = time.perf_counter() - t0
        recorded = len(read_records()) - before
        if code is None:
            failures[script.stem] = f"timed out after {args.timeout:.0f}s"
        elif code != 0:
            failures[script.stem] = f"exited with {code} after {seconds:.0f}s"
        elif recorded == 0:
            failures[script.stem] = "recorded no figure (see bench/harness.py)"

    rows = read_records()
    print(f"\n=== argweb benchmarks ({time.perf_counter() - started:.0f}s)")
    print(table(rows, failures))
    RESULTS.write_text(
        json.dumps(
            {
                "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "figures": [f.as_dict() for f in rows],
                "failures": failures,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"written to {RESULTS.relative_to(ROOT)}")
    return 0 if not failures and all(f.passed for f in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
