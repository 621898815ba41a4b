"""Concurrency drills (issue 11): overlapping ingests of one corpus, and reads during an ingest.

Two ``argweb ingest`` processes load the same new corpus at once while a reader keeps querying
the graph: both succeed (the second waits for the first's claim), readers never see an error, and
the final counts equal a single clean ingest's with no duplicate.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from graphstore.store import GraphStore
from ontology.errors import ArgwebError
from ontology.formats.registry import CORPORA, SAMPLES
from tests.integration.drill_support import DrillServer, record, settled_state

pytestmark = pytest.mark.drill


def test_two_ingests_of_one_new_corpus_with_readers_running(tmp_path: Path) -> None:
    corpus = "qt30"
    files = CORPORA[corpus].find(SAMPLES)
    want = CORPORA[corpus].load(files).counts()
    server = DrillServer(tmp_path / "data", batch_size=10)
    server.start()
    driver = server.driver()
    stop = threading.Event()
    reads = 0
    errors: list[str] = []

    def reader() -> None:
        nonlocal reads
        store = GraphStore(driver)
        while not stop.is_set():
            try:
                store.stats()
                store.read("MATCH (n:Node {corpus: $c})-[r]->(m) RETURN count(r) AS n", c=corpus)
                reads += 1
            except ArgwebError as e:  # every failure a reader could see
                errors.append(str(e))

    try:
        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        started = time.perf_counter()
        command = CORPORA[corpus].command_name
        first = server.spawn(tmp_path / "first.log", "ingest", command, *map(str, files))
        second = server.spawn(tmp_path / "second.log", "ingest", command, *map(str, files))
        codes = (first.wait(timeout=900), second.wait(timeout=900))
        seconds = time.perf_counter() - started
        stop.set()
        thread.join(timeout=60)
        logs = [(tmp_path / f"{n}.log").read_text(errors="replace") for n in ("first", "second")]
        assert codes == (0, 0), logs
        got, defects, m = settled_state(server, corpus)
    finally:
        stop.set()
        driver.close()
        server.stop()
    assert errors == []
    assert reads > 0
    assert got == want
    assert defects == dict.fromkeys(defects, 0)
    assert m is not None and m["status"] == "complete"
    record(
        "two-ingests-one-corpus-with-readers",
        corpus=corpus,
        rows=sum(got.values()),
        rows_clean_ingest=sum(want.values()),
        reads_during_ingest=reads,
        reader_errors=len(errors),
        seconds_both_ingests=round(seconds, 1),
    )
