"""A private embedded Neo4j driven through the real CLI, for drills that kill processes.

Drills kill the JVM, so they never use the test session's server. Figures (rows written before a
kill, rows after recovery, seconds to recover) are appended to ``.argweb/drill-figures.json`` and
printed, for the closing note of a drill run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neo4j import Driver

from graphstore.runtime import EmbeddedNeo4j, connect, free_port
from graphstore.store import GraphStore
from tests.integration.cli_support import ROOT, cli_env, run_argweb, spawn_argweb

FIGURES = ROOT / ".argweb" / "drill-figures.json"
PASSWORD = "argweb-drill-password"


def record(drill: str, **figures: Any) -> None:
    """Append one drill's figures to :data:`FIGURES` and print them."""
    FIGURES.parent.mkdir(parents=True, exist_ok=True)
    try:
        data = json.loads(FIGURES.read_text())
    except (OSError, ValueError):
        data = {}
    data[drill] = {**figures, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    FIGURES.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    print(f"DRILL {drill}: {json.dumps(figures, sort_keys=True)}")


def connections_in_use(driver: Driver) -> int:
    """Connections of ``driver``'s pool taken by a session that has not given them back."""
    pool = driver._pool  # type: ignore[attr-defined]
    return sum(pool.in_use_connection_count(address) for address in list(pool.connections))


def wait_for(check: Callable[[], bool], timeout: float, what: str, interval: float = 0.05) -> None:
    """Poll ``check`` until true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


@dataclass
class DrillServer:
    """An embedded server of its own data directory, started and stopped through ``argweb db``."""

    data_dir: Path
    port: int = field(default_factory=free_port)
    batch_size: int = 5000
    root: Path | None = None

    @property
    def env(self) -> dict[str, str]:
        """Environment of an ``argweb`` process on this server."""
        return cli_env(self.data_dir, self.port, PASSWORD, ARGWEB_BATCH_SIZE=str(self.batch_size))

    @property
    def server(self) -> EmbeddedNeo4j:
        """The runtime view of the server (pid file, stop)."""
        return EmbeddedNeo4j(self.data_dir / "neo4j", password=PASSWORD, port=self.port)

    def start(self) -> float:
        """Start it (seconds taken)."""
        started = time.perf_counter()
        result = run_argweb(self.env, "db", "start")
        if result.returncode != 0 and "did not answer" in result.stderr:
            # A JVM start on a saturated machine can outlast the start timeout; one more try.
            result = run_argweb(self.env, "db", "start")
        assert result.returncode == 0, result.stdout + result.stderr
        return time.perf_counter() - started

    def stop(self) -> None:
        """Stop it if it runs."""
        self.server.stop()

    def jvm_pid(self) -> int:
        """Pid of the running JVM."""
        info = self.server.info()
        assert info is not None, "the drill server is not running"
        return info.pid

    def driver(self) -> Driver:
        """A driver for it (the caller closes it)."""
        return connect(f"bolt://127.0.0.1:{self.port}", "neo4j", PASSWORD)

    def ingest(self, corpus: str, *paths: Path) -> subprocess.CompletedProcess[str]:
        """``argweb ingest CORPUS PATHS`` to completion."""
        return run_argweb(self.env, "ingest", corpus, *map(str, paths), timeout=3600)

    def spawn(self, log: Path, *args: str) -> subprocess.Popen[bytes]:
        """``argweb ARGS`` in the background."""
        return spawn_argweb(self.env, *args, log=log)


def kill9(pid: int) -> None:
    """SIGKILL, no clean-up of any kind."""
    os.kill(pid, signal.SIGKILL)


def rows_of_batch(store: GraphStore, batch: str) -> int:
    """Nodes plus relationships stamped with ``batch``."""
    nodes = store.read("MATCH (n:Node) WHERE n.batch = $b RETURN count(n) AS n", b=batch)[0]["n"]
    rels = store.read("MATCH ()-[r]->() WHERE r.batch = $b RETURN count(r) AS n", b=batch)[0]["n"]
    return int(nodes + rels)


def marker(store: GraphStore, corpus: str) -> dict[str, Any] | None:
    """Status and run of a corpus marker."""
    rows = store.read(
        "MATCH (c:Corpus {id: $c}) RETURN c.status AS status, c.ingest_run AS run, c.counts AS counts", c=corpus
    )
    return rows[0] if rows else None


def integrity(store: GraphStore) -> dict[str, int]:
    """Defects that must all be zero after recovery."""
    one = store.read
    return {
        "duplicate_node_ids": one("MATCH (n:Node) WITH n.id AS id, count(*) AS c WHERE c > 1 RETURN count(*) AS n")[0][
            "n"
        ],
        "duplicate_relationship_ids": one(
            "MATCH ()-[r]->() WHERE r.id IS NOT NULL WITH type(r) AS t, r.id AS id, count(*) AS c WHERE c > 1 "
            "RETURN count(*) AS n"
        )[0]["n"],
        "corpora_not_complete": one("MATCH (c:Corpus) WHERE c.status <> 'complete' RETURN count(c) AS n")[0]["n"],
        "nodes_without_corpus_marker": one(
            "MATCH (n:Node) WHERE NOT n:Corpus AND NOT EXISTS { MATCH (c:Corpus {id: n.corpus}) } RETURN count(n) AS n"
        )[0]["n"],
        "relationships_across_corpora": one(
            "MATCH (a:Node)-[r]->(b:Node) WHERE a.corpus <> b.corpus OR r.corpus <> a.corpus RETURN count(r) AS n"
        )[0]["n"],
    }


def settled_state(server: DrillServer, corpus: str) -> tuple[dict[str, int], dict[str, int], dict[str, Any] | None]:
    """What a drill checks once the work is done: the corpus's graph counts, the integrity defects
    of the whole graph and the corpus's ingest marker, read on a connection of its own."""
    driver = server.driver()
    try:
        store = GraphStore(driver)
        return store.graph_counts(corpus), integrity(store), marker(store, corpus)
    finally:
        driver.close()
