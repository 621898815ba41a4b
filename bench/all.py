"""``make bench``: run every benchmark under ``bench/`` and print ONE table of figures and goals.

Each ``bench/*.py`` (but :mod:`bench.harness`, this file and the corpus generator
:mod:`bench.synth`) runs in its own process, one after the other, with the arguments of its
``BENCH_ARGS`` constant when it has one (``BENCH_QUICK_ARGS`` with ``--quick``: a small, bounded
form that proves the script works, not figures to compare with the goals); the figures it records
with :func:`bench.harness.record` are gathered into one table (figure, goal, ratio, pass/miss),
printed and written to ``bench/results.json``. A script that fails or records nothing is a FAIL
row. Exit status: 0 when every figure met its goal and every script ran, else 1.

Usage: ``python -m bench.all [--quick] [--only NAME ...] [--merge] [--timeout SECONDS] [--results FILE]``
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.harness import BENCH_DIR, RESULTS, read_records, table

ROOT = BENCH_DIR.parent
# Not benchmarks: the harness, this runner, the synthetic corpus generator bench/scale.py uses and the
# SPARQL servers bench/sparql.py and the tests start.
# The page generator bench/report.py is not one either, nor the smallest FastAPI app bench/api.py
# starts beside the API (bench/api_floor.py), nor the relation rows bench/models.py reads
# (bench/models_relations.py, still runnable by hand).
SKIP = {"harness", "all", "__init__", "synth", "sparql_servers", "report", "api_floor", "models_relations"}


def bench_args(script: Path, constant: str = "BENCH_ARGS") -> list[str]:
    """A module constant of the script (``BENCH_ARGS`` or ``BENCH_QUICK_ARGS``), read from its
    source without importing the script; empty when absent."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == constant for t in targets):
            return [str(v) for v in ast.literal_eval(value)]
    return []


def commit() -> str | None:
    """The checked-out commit, with ``-dirty`` when tracked files differ from it (None outside git)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT, check=False).returncode != 0
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("-dirty" if dirty else "")


def machine() -> dict[str, object]:
    """Cores, memory and Python of this machine (the figures depend on them)."""
    memory = None
    with contextlib.suppress(ValueError, OSError):
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    return {"cpus": os.cpu_count(), "memory_gb": memory, "python": platform.python_version()}


def merged(
    earlier: dict[str, Any], now: dict[str, Any], ran: set[str], benchmarks: set[str] | None = None
) -> dict[str, Any]:
    """``now`` (the scripts of ``ran``) laid over ``earlier``: the other scripts keep their figures,
    times, loads and commits, except those that are no longer among ``benchmarks`` (when given).
    A quick run is never merged into a full one, nor a full into a quick."""
    if bool(earlier.get("quick")) != bool(now["quick"]):
        raise SystemExit("--merge: the results file holds a run of the other kind (--quick or not); nothing merged")
    gone: set[str] = set()
    if benchmarks is not None:
        gone = {f["bench"] for f in earlier.get("figures", [])} | set(earlier.get("seconds_per_script", {}))
        gone -= benchmarks
    replaced = ran | gone
    kept = [f for f in earlier.get("figures", []) if f["bench"] not in replaced]
    out = dict(now)
    out["figures"] = kept + list(now["figures"])
    out["figures"].sort(key=lambda f: f["bench"])  # stable: each script's figures keep their order
    for key in ("failures", "seconds_per_script", "load_per_script"):
        older = {k: v for k, v in earlier.get(key, {}).items() if k not in replaced}
        out[key] = {**older, **now[key]}
    before = earlier.get("commit_per_script") or {
        k: earlier.get("commit") for k in earlier.get("seconds_per_script", {})
    }
    out["commit_per_script"] = {**{k: v for k, v in before.items() if k not in replaced}, **now["commit_per_script"]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--only", nargs="*", help="run only these benchmarks (script names without .py)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per benchmark script")
    parser.add_argument("--quick", action="store_true", help="each script's BENCH_QUICK_ARGS: a bounded smoke run")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where the table goes as JSON")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep the other scripts' figures of the results file and replace only those of the scripts run now "
        "(each script's commit is recorded): re-run one benchmark after a fix without the hour of the others",
    )
    args = parser.parse_args(argv)

    scripts = sorted(p for p in BENCH_DIR.glob("*.py") if p.stem not in SKIP)
    benchmarks = {p.stem for p in scripts}
    if args.only:
        unknown = set(args.only) - {p.stem for p in scripts}
        if unknown:
            parser.error(f"no benchmark named {', '.join(sorted(unknown))}")
        scripts = [p for p in scripts if p.stem in args.only]
    results: Path = args.results.resolve()
    # Beside the results, as bench/out/records.jsonl is beside bench/results.json.
    records = results.parent / "out" / "records.jsonl"
    records.parent.mkdir(parents=True, exist_ok=True)
    records.unlink(missing_ok=True)
    constant = "BENCH_QUICK_ARGS" if args.quick else "BENCH_ARGS"
    failures: dict[str, str] = {}
    seconds_per_script: dict[str, float] = {}
    load_per_script: dict[str, tuple[float, float]] = {}
    started = time.perf_counter()
    for script in scripts:
        before = len(read_records(records))
        script_args = bench_args(script, constant)
        print(f"\n=== bench/{script.name} {' '.join(script_args)}", flush=True)
        t0 = time.perf_counter()
        load_before = os.getloadavg()[0]
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "bench.harness", str(records), f"bench.{script.stem}", *script_args],
                cwd=ROOT,
                timeout=args.timeout,
                check=False,
            )
            code = proc.returncode
        except subprocess.TimeoutExpired:
            code = None
        seconds = time.perf_counter() - t0
        seconds_per_script[script.stem] = round(seconds, 1)
        load_per_script[script.stem] = (round(load_before, 2), round(os.getloadavg()[0], 2))
        recorded = len(read_records(records)) - before
        if code is None:
            failures[script.stem] = f"timed out after {args.timeout:.0f}s"
        elif code != 0:
            failures[script.stem] = f"exited with {code} after {seconds:.0f}s"
        elif recorded == 0:
            failures[script.stem] = "recorded no figure (see bench/harness.py)"

    rows = read_records(records)
    mode = " quick" if args.quick else ""
    print(f"\n=== argweb benchmarks{mode} ({time.perf_counter() - started:.0f}s)")
    print(table(rows, failures))
    head = commit()
    out: dict[str, object] = {
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "quick": args.quick,
        "commit": head,
        "machine": machine(),
        "figures": [f.as_dict() for f in rows],
        "failures": failures,
        "seconds_per_script": seconds_per_script,
        "load_per_script": load_per_script,
        "commit_per_script": {script.stem: head for script in scripts},
    }
    if args.merge and results.exists():
        earlier = json.loads(results.read_text(encoding="utf-8"))
        out = merged(earlier, out, {script.stem for script in scripts}, benchmarks)
    results.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"written to {results}")
    return 0 if not failures and all(f.passed for f in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
