"""The shared harness of argweb's benchmarks: every figure recorded beside its goal.

A benchmark is a script ``bench/<name>.py`` that measures what it measures, prints its own detail,
and reports each headline figure with one call::

    from bench.harness import record

    record("ingest: three corpora, batched", 41.2, "s", goal=60, better="lower")
    record("ingest: batched / one tx per record", 27.5, "x", goal=20, better="higher")

``record`` prints the figure with its goal, ratio and verdict, and appends it to
``bench/out/records.jsonl``. ``make bench`` runs ``bench/all.py``, which empties that file, runs
every ``bench/*.py`` (except this module and itself) in its own process, one after the other, and
prints ONE table of every recorded figure (figure, goal, ratio, pass/miss), also written to
``bench/results.json``. A script that exits non-zero or records nothing shows up in the table as a
failed row, so a broken benchmark cannot pass silently.

To plug in a new benchmark: add ``bench/<name>.py`` with a ``main()`` run under
``if __name__ == "__main__"``, runnable without arguments (bounded in count and time, load
generators on loopback only), and call :func:`record` for each figure that has a goal. Arguments
for ``make bench`` go in a module constant ``BENCH_ARGS = ["--flag", "value"]``, those of a small
bounded smoke run (``python -m bench.all --quick``) in ``BENCH_QUICK_ARGS`` (both read by
``bench/all.py`` without importing the script). The ratio is always "goal met" when >= 1:
``figure / goal`` for ``better="higher"``, ``goal / figure`` for ``better="lower"``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import runpy
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from api.settings import Settings

BENCH_DIR = Path(__file__).resolve().parent
OUT_DIR = BENCH_DIR / "out"
RECORDS = OUT_DIR / "records.jsonl"
RESULTS = BENCH_DIR / "results.json"
Better = Literal["higher", "lower"]
PASSWORD = "argweb-bench-password"
MAIN_HELP = "the main job's graph (`argweb run` first): full corpora with predictions, read only"


@dataclass(frozen=True)
class Figure:
    """One measured figure and its goal.

    Attributes:
        bench: The benchmark script that measured it.
        name: What was measured.
        figure: The measured value.
        unit: Its unit (``s``, ``items/s``, ``MB``, ``x``...).
        goal: The value to reach.
        better: ``higher`` when larger figures are better, else ``lower``.
        note: Optional context (data size, machine...).
    """

    bench: str
    name: str
    figure: float
    unit: str
    goal: float
    better: Better
    note: str = ""

    @property
    def ratio(self) -> float:
        """Figure against goal, >= 1 when the goal is met."""
        if self.better == "higher":
            return self.figure / self.goal if self.goal else math.inf
        return self.goal / self.figure if self.figure else math.inf

    @property
    def passed(self) -> bool:
        """Whether the goal is met."""
        return self.ratio >= 1.0 and math.isfinite(self.figure)

    def as_dict(self) -> dict[str, object]:
        """JSON form, with ratio and verdict."""
        ratio = self.ratio
        return asdict(self) | {"ratio": ratio if math.isfinite(ratio) else None, "pass": self.passed}


def run_script(records: Path, module: str, args: list[str]) -> None:
    """Run ``python -m MODULE ARGS`` in this process with its figures appended to ``records``.

    ``bench/all.py`` starts every benchmark through this (``python -m bench.harness RECORDS
    MODULE ARGS...``), so that a run can keep its figures apart from :data:`RECORDS` (the
    test of ``bench/all.py`` does) without any script knowing.
    """
    global RECORDS, OUT_DIR
    RECORDS, OUT_DIR = records, records.parent
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def _bench_name() -> str:
    return Path(sys.argv[0]).stem if sys.argv and sys.argv[0] else "interactive"


def record(name: str, figure: float, unit: str, goal: float, better: Better = "higher", note: str = "") -> Figure:
    """Record one figure against its goal: print it and append it to :data:`RECORDS`.

    Args:
        name: What was measured (unique within the benchmark).
        figure: The measured value.
        unit: Its unit.
        goal: The value to reach.
        better: ``"higher"`` or ``"lower"``.
        note: Optional context shown in the table.

    Returns:
        The recorded figure.
    """
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower', not {better!r}")
    item = Figure(_bench_name(), name, float(figure), unit, float(goal), better, note)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with open(RECORDS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(item.as_dict()) + "\n")
    verdict = "pass" if item.passed else "MISS"
    sign = ">=" if better == "higher" else "<="
    print(f"[bench] {name}: {figure:,.4g} {unit} (goal {sign} {goal:,.4g} {unit}, ratio {item.ratio:.2f}: {verdict})")
    return item


def read_records(path: Path = RECORDS) -> list[Figure]:
    """The figures recorded so far."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            out.append(Figure(**{k: data[k] for k in Figure.__dataclass_fields__}))
    return out


def table(rows: list[Figure], failures: dict[str, str] | None = None) -> str:
    """The plain-text table of ``rows`` (and of benchmarks that failed or recorded nothing)."""
    head = ("benchmark", "figure", "value", "goal", "ratio", "result")
    lines = [head]
    for f in rows:
        sign = ">=" if f.better == "higher" else "<="
        ratio = f"{f.ratio:.2f}" if math.isfinite(f.ratio) else "inf"
        lines.append(
            (
                f.bench,
                f.name + (f" ({f.note})" if f.note else ""),
                f"{f.figure:,.4g} {f.unit}",
                f"{sign} {f.goal:,.4g} {f.unit}",
                ratio,
                "pass" if f.passed else "MISS",
            )
        )
    for bench, why in (failures or {}).items():
        lines.append((bench, why, "-", "-", "-", "FAIL"))
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    rule = "-+-".join("-" * w for w in widths)
    text = [" | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in lines]
    return "\n".join([text[0], rule, *text[1:]])


def peak_rss_mb() -> float:
    """Peak resident memory of this process image in MB.

    ``ru_maxrss`` survives ``exec``: a child forked from a large parent would report the parent's
    peak, so the per-image high-water mark VmHWM is read where Linux provides it.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextmanager
def bench_neo4j(
    args: argparse.Namespace, prefix: str, log: Callable[[str], None] = lambda _msg: None
) -> Iterator[tuple[Settings, Any]]:
    """Settings and driver of the main job's graph (``--main``), of ``--uri`` (``--user``,
    ``--password``), or of a throw-away embedded server.

    ``--main`` is the graph ``argweb run`` loaded, as the settings name it (the embedded server of
    the data directory, started if it is not running, or ``ARGWEB_NEO4J_URI``): the full corpora
    with their predictions, which ``make bench`` loads first. A throw-away server lives in a
    temporary directory with the benchmarks' password and the heap of ``--heap``; it is stopped
    and its directory removed when the benchmark leaves the context.

    Args:
        args: Parsed options with ``uri``, ``user``, ``password`` and ``heap`` (``main`` optional).
        prefix: Prefix of the embedded server's temporary directory.
        log: Receives the line saying where and how fast the embedded server came up.
    """
    # Imported here: bench/all.py imports this module and needs none of it.
    from pydantic import SecretStr

    from api.services.graph import bolt_uri, embedded_server, neo4j_password, open_driver, private_settings
    from api.settings import get_settings

    if getattr(args, "main", False):
        configured = get_settings()
        # The URI and password themselves, so that the API child process of bench_api reaches the
        # same server (the embedded one's password is stored in its data directory).
        settings = configured.with_overrides(
            neo4j_uri=bolt_uri(configured, start=True), neo4j_password=SecretStr(neo4j_password(configured))
        )
        driver = open_driver(settings)
        log(f"the main job's graph at {settings.neo4j_uri} (read only)")
        try:
            yield settings, driver
        finally:
            driver.close()
        return
    if args.uri:
        settings = get_settings().with_overrides(
            neo4j_uri=args.uri, neo4j_user=args.user, neo4j_password=SecretStr(args.password)
        )
        driver = open_driver(settings)
        try:
            yield settings, driver
        finally:
            driver.close()
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        settings = private_settings(Path(tmp), PASSWORD, heap=args.heap)
        server = embedded_server(settings)
        started = time.perf_counter()
        info = server.start()
        log(f"embedded Neo4j up on {info.uri} in {time.perf_counter() - started:.1f}s (heap {args.heap})")
        settings = settings.with_overrides(neo4j_uri=info.uri)
        driver = open_driver(settings, start=False)
        try:
            yield settings, driver
        finally:
            driver.close()
            server.stop()


if __name__ == "__main__":
    # The benchmark imports `bench.harness`, not this `__main__` copy: set the path there.
    from bench import harness

    harness.run_script(Path(sys.argv[1]), sys.argv[2], sys.argv[3:])


@contextmanager
def bench_graph(
    args: argparse.Namespace, prefix: str, log: Callable[[str], None] = print
) -> Iterator[tuple[Settings, Any]]:
    """:func:`bench_neo4j` with the corpora of ``args.corpora`` loaded (nothing is written to ``--uri``
    or the main job's graph)."""
    from graphstore.store import GraphStore
    from ontology.formats.registry import CORPORA

    with bench_neo4j(args, prefix, log) as (settings, driver):
        if not args.uri and not getattr(args, "main", False):
            store = GraphStore(driver, batch_size=5000)
            for name, spec in CORPORA.items():
                files = spec.find(args.corpora)
                if files:
                    report = store.ingest(spec.load(files))
                    log(f"loaded {name}: {report.items:,} items in {report.seconds:.1f}s")
        yield settings, driver


@contextmanager
def bench_api(settings: Settings, app: str = "api.app:app", ready: str = "/corpora") -> Iterator[tuple[str, int]]:
    """The API (``uvicorn api.app:app``, one worker; or another ASGI ``app``) over ``settings``' graph
    as a child process on a loopback port, once ``ready`` answers 200; its base URL and process id."""
    import requests

    from api.services.graph import neo4j_password
    from graphstore.runtime import free_port

    port = free_port()
    env = {
        **os.environ,
        "ARGWEB_NEO4J_URI": str(settings.neo4j_uri),
        "ARGWEB_NEO4J_USER": settings.neo4j_user,
        "ARGWEB_NEO4J_PASSWORD": neo4j_password(settings),
        "ARGWEB_DATA_DIR": str(settings.data_dir),
    }
    cmd = [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(
        [*cmd, "--log-level", "warning"],
        cwd=BENCH_DIR.parent,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if requests.get(f"{url}{ready}", timeout=5).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the API did not start: {proc.stderr.read().decode() if proc.stderr else ''}")
            time.sleep(0.2)
        yield url, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process has used so far, from ``/proc`` (Linux; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
