"""Crash drills (issue 11): real processes killed with SIGKILL in the middle of their work.

(a) the Neo4j JVM killed mid-ingest, (b) the ingest client killed mid-ingest, (d) ``export rdf``
and ``rdf load`` killed mid-way. After a restart and a re-run every count equals a clean ingest's,
no id is duplicated, nothing is left ``loading`` and the SPARQL store keeps answering. They run on
the shipped samples with a small batch size (so that the kill lands between batches); with
``-m corpora`` the same drills run on ``../shared/corpora``. Figures go to
``.argweb/drill-figures.json`` (see :mod:`tests.integration.drill_support`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphstore.store import GraphStore
from ontology.formats.registry import CORPORA, SAMPLES
from tests.conftest import shared_corpora
from tests.integration.cli_support import ROOT, run_argweb
from tests.integration.drill_support import (
    PASSWORD,
    DrillServer,
    kill9,
    marker,
    record,
    rows_of_batch,
    settled_state,
    wait_for,
)

pytestmark = pytest.mark.drill

SHARED = shared_corpora()
# The shared corpora drill runs wherever they are present (like every `corpora` test).
SOURCES = [pytest.param((SAMPLES, 10), id="samples")]
if SHARED is not None:
    SOURCES.append(pytest.param((SHARED, 2000), id="shared", marks=pytest.mark.corpora))
# The samples in batches large enough to write each corpus at once (the drill kills other work).
WHOLE_BATCHES = [pytest.param((SAMPLES, 5000), id="samples")]


@pytest.fixture
def drill_server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[DrillServer]:
    root, batch = request.param if hasattr(request, "param") else (SAMPLES, 10)
    server = DrillServer(tmp_path / "data", batch_size=batch, root=root)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def corpus_files(root: Path | None, corpus: str) -> list[Path]:
    assert root is not None, "../shared/corpora (or $ARGWEB_CORPORA) is required with -m corpora"
    files = CORPORA[corpus].find(root)
    assert files, f"no {corpus} files under {root}"
    return files


def clean_counts(files: list[Path], corpus: str) -> dict[str, int]:
    """What a clean ingest of ``files`` stores (the loader's bundle, checked equal to the graph elsewhere)."""
    return CORPORA[corpus].load(files).counts()


def kill_mid_ingest(
    server: DrillServer, corpus: str, files: list[Path], tmp_path: Path, kill_jvm: bool, at_rows: int
) -> int:
    """Start an ingest, SIGKILL the JVM or the client once ``at_rows`` rows committed; rows committed by then."""
    command = CORPORA[corpus].command_name
    client = server.spawn(tmp_path / "ingest.log", "ingest", command, *map(str, files))
    driver = server.driver()
    try:
        store = GraphStore(driver)
        state: dict[str, int | str] = {}

        def some_batches_committed() -> bool:
            m = marker(store, corpus)
            if m is None or m["status"] != "loading":
                return False
            state["run"] = m["run"]
            state["rows"] = rows_of_batch(store, m["run"])
            return int(state["rows"]) >= at_rows

        wait_for(some_batches_committed, 900, f"{at_rows} committed rows of {corpus}", interval=0.02)
        if kill_jvm:
            kill9(server.jvm_pid())
        else:
            kill9(client.pid)
    finally:
        driver.close()
    client.wait(timeout=300)
    out = (tmp_path / "ingest.log").read_text(errors="replace")
    if kill_jvm:
        # The client outlives the JVM and says what is kept (the rows stay until the next ingest).
        assert client.returncode == 1, out
        assert "until the next ingest" in out or "nothing kept" in out, out
    return int(state["rows"])


@pytest.mark.parametrize("drill_server", SOURCES, indirect=True)
@pytest.mark.parametrize("kill_jvm", [True, False], ids=["kill-jvm", "kill-client"])
def test_kill_mid_ingest_then_rerun_equals_a_clean_ingest(
    drill_server: DrillServer, kill_jvm: bool, tmp_path: Path
) -> None:
    root = drill_server.root
    corpus = "qt30"
    files = corpus_files(root, corpus)
    want = clean_counts(files, corpus)

    # A quarter of the way through: several batches are in, most are still to come.
    written = kill_mid_ingest(drill_server, corpus, files, tmp_path, kill_jvm, at_rows=sum(want.values()) // 4)
    started = time.perf_counter()
    if kill_jvm:
        drill_server.start()  # the stale pid file of the killed JVM is no obstacle
    rerun = drill_server.ingest(CORPORA[corpus].command_name, *files)
    recovered = time.perf_counter() - started
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr

    got, defects, m = settled_state(drill_server, corpus)
    assert got == want
    assert defects == dict.fromkeys(defects, 0)
    assert m is not None and m["status"] == "complete"
    assert json.loads(m["counts"]) == got  # the marker describes the graph
    record(
        f"ingest-{'jvm' if kill_jvm else 'client'}-killed-{'samples' if root == SAMPLES else 'shared'}",
        corpus=corpus,
        rows_committed_before_kill=written,
        rows_after_recovery=sum(got.values()),
        rows_clean_ingest=sum(want.values()),
        seconds_to_recover=round(recovered, 1),
    )


def ingest_samples(server: DrillServer, corpus: str) -> None:
    """Ingest the shipped sample of ``corpus`` (it must load)."""
    result = server.ingest(CORPORA[corpus].command_name, *corpus_files(SAMPLES, corpus))
    assert result.returncode == 0, result.stdout + result.stderr


def sparql_count(server: DrillServer) -> int:
    result = run_argweb(server.env, "sparql", "--format", "csv", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    assert result.returncode == 0, result.stdout + result.stderr
    return int(result.stdout.split()[-1])


@pytest.mark.parametrize("drill_server", WHOLE_BATCHES, indirect=True)
def test_kill_mid_export_and_mid_load_keeps_the_previous_sparql_store(
    drill_server: DrillServer, tmp_path: Path
) -> None:
    ingest_samples(drill_server, "molweni")
    out = tmp_path / "export" / "graph.nt"
    first = run_argweb(drill_server.env, "export", "rdf", str(out))
    assert first.returncode == 0, first.stdout + first.stderr
    before = sparql_count(drill_server)
    assert before > 0

    # More data, so that the next export differs from what the store holds.
    ingest_samples(drill_server, "stac")

    # 1. Killed while writing the export file: a .part stays behind; the store still answers.
    exporter = drill_server.spawn(tmp_path / "export.log", "export", "rdf", str(out), "--page-size", "5")
    wait_for(lambda: any(out.parent.glob(f".{out.name}.*.part")), 300, "the export's .part file", interval=0.01)
    kill9(exporter.pid)
    exporter.wait(timeout=60)
    leaked = list(out.parent.glob(f".{out.name}.*.part"))
    assert leaked, "the killed export left no partial file (killed too late?)"
    assert sparql_count(drill_server) == before

    # 2. Killed while bulk-loading a big file into the store: the previous store still answers.
    big = tmp_path / "big.nt"
    with open(big, "w", encoding="utf-8") as fh:
        for i in range(300_000):
            fh.write(f'<https://w3id.org/argweb/data/b{i}> <https://w3id.org/argweb/ontology#text> "t{i}" .\n')
    loader = drill_server.spawn(tmp_path / "load.log", "rdf", "load", str(big))
    loading = tmp_path / "data" / "oxigraph.loading"
    wait_for(loading.exists, 300, "the store's .loading directory", interval=0.01)
    kill9(loader.pid)
    loader.wait(timeout=60)
    assert sparql_count(drill_server) == before

    # 3. The next export replaces the store and removes what the killed runs left.
    started = time.perf_counter()
    again = run_argweb(drill_server.env, "export", "rdf", str(out))
    recovered = time.perf_counter() - started
    assert again.returncode == 0, again.stdout + again.stderr
    after = sparql_count(drill_server)
    assert after > before
    assert not list(out.parent.glob(f".{out.name}.*.part"))
    assert not loading.exists()
    record(
        "export-and-load-killed",
        quads_before=before,
        quads_after_rerun=after,
        partial_files_left_by_kill=len(leaked),
        seconds_to_recover=round(recovered, 1),
    )


@pytest.mark.parametrize("drill_server", WHOLE_BATCHES, indirect=True)
def test_kill_mid_prediction_write_then_rerun_writes_the_whole_run_once(
    drill_server: DrillServer, tmp_path: Path
) -> None:
    ingest_samples(drill_server, "qt30")
    driver = drill_server.driver()
    try:
        store = GraphStore(driver)
        gold = (
            "MATCH (n:Node {corpus: 'qt30'}) WHERE coalesce(n.origin, 'gold') = 'gold' "
            "RETURN count(n) AS nodes, "
            "sum(COUNT { (n)-[]->(m:Node) WHERE coalesce(m.origin, 'gold') = 'gold' }) AS rels"
        )
        gold_before = store.read(gold)[0]
        locutions = [r["id"] for r in store.read("MATCH (l:Locution {corpus: 'qt30'}) RETURN l.id AS id")]
        want = len(locutions) - 1
        run_id = "drill-run-1"
        args = [sys.executable, "-m", "tests.integration.predict_writer", str(drill_server.port), PASSWORD, run_id, "2"]
        writer = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        count = "MATCH (r:Relation) WHERE r.run_id = $run RETURN count(r) AS n"
        state: dict[str, int] = {}

        def some_written() -> bool:
            state["n"] = store.read(count, run=run_id)[0]["n"]
            return state["n"] >= want // 4

        wait_for(some_written, 600, "a quarter of the prediction run", interval=0.02)
        kill9(writer.pid)
        writer.wait(timeout=60)
        written = state["n"]
        assert written < want, "the run finished before the kill"
        started = time.perf_counter()
        again = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
        recovered = time.perf_counter() - started
        assert again.returncode == 0, again.stdout + again.stderr
        after = store.read(count, run=run_id)[0]["n"]
        runs = store.read("MATCH (r:PredictionRun) RETURN r.status AS status, count(*) AS n")
        gold_after = store.read(gold)[0]
        third = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
        assert third.returncode == 0 and "written 0" in third.stdout  # idempotent per run id
        assert store.read(count, run=run_id)[0]["n"] == want
    finally:
        driver.close()
    assert after == want
    assert [(r["status"], r["n"]) for r in runs] == [("complete", 1)]
    assert gold_after == gold_before  # predictions never touch gold nodes or edges
    record(
        "prediction-write-killed",
        relations_committed_before_kill=written,
        relations_after_rerun=after,
        relations_in_run=want,
        seconds_to_recover=round(recovered, 1),
    )
