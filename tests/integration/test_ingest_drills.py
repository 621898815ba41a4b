"""Ingest drills (issue 47, items 1, 2, 9 and 10): against the real embedded Neo4j and real processes.

1. An ingest killed (SIGKILL or SIGTERM) mid-write leaves its corpus ``loading``: every read route
   of a running API refuses it (409, naming the corpus and what to do), and the running API
   undoes the interrupted ingest itself, so that the same routes serve the corpus as it was
   seconds later, without a restart or another ingest.
2. An ingest whose Neo4j JVM is killed mid-way ends within seconds, exit 1, with one line naming
   the server and what to run (no raw driver retry lines).
9. One corpus-name grammar for the command line and HTTP; near-copies of a gold corpus's name are refused.
10. A re-ingest with every speaker changed leaves each locution with one ``SPOKEN_BY`` and no
    orphaned Speaker.

Figures go to ``.argweb/drill-figures.json`` (table in docs/drills.md).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from neo4j import Driver

from api.app import create_app
from graphstore.runtime import EmbeddedNeo4j
from graphstore.store import GraphStore
from ontology.formats.registry import CORPORA, SAMPLES
from ontology.records import CorpusBundle, NodeRecord
from ontology.terms import Label
from tests.conftest import served_settings
from tests.integration.cli_support import spawn_argweb
from tests.integration.drill_support import DrillServer, kill9, marker, record, rows_of_batch, wait_for
from tests.integration.test_integrity_drills import graph_dump

pytestmark = pytest.mark.drill

QT30_FILES = CORPORA["qt30"].find(SAMPLES)
API_KEY = "ingest-drill-key-0123456789"
REWRITTEN = " REWRITTEN-BY-A-KILLED-INGEST"


def rewritten_maps(out: Path, text: Any) -> list[Path]:
    """The QT30 sample maps with ``text(node)`` as every L and I node's text, written under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for path in QT30_FILES:
        doc = json.loads(path.read_text(encoding="utf-8"))
        for node in doc["nodes"]:
            if node.get("type") in ("L", "I"):
                node["text"] = text(node)
        target = out / path.name
        target.write_text(json.dumps(doc), encoding="utf-8")
        files.append(target)
    return files


def rewritten(store: GraphStore) -> int:
    """Nodes whose text a killed ingest rewrote."""
    rows = store.read("MATCH (n:Node) WHERE n.text ENDS WITH $tag RETURN count(n) AS n", tag=REWRITTEN)
    return int(rows[0]["n"])


def first_of(bundle: CorpusBundle, label: Label) -> NodeRecord:
    """The first node of ``bundle`` with ``label`` (in id order)."""
    return min((n for n in bundle.nodes if label in n.labels()), key=lambda n: n.id)


# -- Item 1: a corpus left loading is refused by every read route and undone by the running API --------


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["sigkill", "sigterm"])
def test_a_killed_ingest_is_refused_by_every_read_route_then_undone_by_the_running_api(
    store: GraphStore,
    driver: Driver,
    neo4j_server: EmbeddedNeo4j,
    cli_env: dict[str, str],
    tmp_path: Path,
    how: signal.Signals,
) -> None:
    bundle = CORPORA["qt30"].load(QT30_FILES)
    store.ingest(bundle)
    before = graph_dump(driver)
    dialogue = first_of(bundle, Label.Dialogue).id
    locution = first_of(bundle, Label.Locution).id
    reads = [
        f"/dialogues/{dialogue}",
        f"/discourses/{dialogue}",
        f"/nodes/{locution}",
        f"/nodes/{locution}/neighbors",
        f"/aif/{dialogue}",
        "/dialogues?corpus=qt30",
        "/relations?corpus=qt30",
        "/corpora/qt30",
    ]
    maps = rewritten_maps(tmp_path / "maps", lambda node: node["text"] + REWRITTEN)
    env = {**cli_env, "ARGWEB_BATCH_SIZE": "20"}
    settings = served_settings(neo4j_server, tmp_path / "api", API_KEY)
    # The API runs before the ingest starts: its start finds nothing to recover.
    with TestClient(create_app(settings)) as client:
        for path in reads:
            assert client.get(path).status_code == 200, path
        ingest = spawn_argweb(env, "ingest", CORPORA["qt30"].command_name, *map(str, maps), log=tmp_path / "ingest.log")
        try:

            def some_batches_in() -> bool:
                assert ingest.poll() is None, (tmp_path / "ingest.log").read_text(errors="replace")
                m = marker(store, "qt30")
                return m is not None and m["status"] == "loading" and rewritten(store) >= 20

            wait_for(some_batches_in, 120, "the re-ingest to rewrite 20 texts", interval=0.02)
            # Stopped, the ingest is alive: every read refuses the corpus as being loaded.
            os.kill(ingest.pid, signal.SIGSTOP)
            for path in reads:
                answer = client.get(path)
                assert answer.status_code == 409, (path, answer.text)
                assert "corpus qt30 is half-loaded" in answer.json()["detail"], answer.text
                assert "is running" in answer.json()["detail"], answer.text
            os.kill(ingest.pid, how)
            os.kill(ingest.pid, signal.SIGCONT)
            ingest.wait(timeout=60)
        finally:
            if ingest.poll() is None:
                kill9(ingest.pid)
                ingest.wait(timeout=60)
        assert ingest.returncode == -how, (tmp_path / "ingest.log").read_text(errors="replace")
        assert marker(store, "qt30")["status"] == "loading"  # type: ignore[index]

        # Killed: the first read that meets the corpus refuses it and has the running API undo it.
        started = time.perf_counter()
        first = client.get(f"/nodes/{locution}")
        assert first.status_code == 409, first.text
        detail = first.json()["detail"]
        assert "corpus qt30 is half-loaded" in detail and "interrupted" in detail, detail
        assert "the API is undoing it now" in detail and "run the ingest of qt30 again" in detail, detail
        wait_for(lambda: client.get(f"/nodes/{locution}").status_code == 200, 60, "the API to undo the ingest")
        undone_s = time.perf_counter() - started
        for path in reads:
            answer = client.get(path)
            assert answer.status_code == 200, (path, answer.text)
            assert REWRITTEN.strip() not in answer.text, path
    assert store.incomplete() == []
    assert graph_dump(driver) == before  # exactly as the last complete load left it
    record(
        f"ingest47_{how.name.lower()}_refused_then_undone_by_running_api",
        read_routes_refusing=len(reads),
        seconds_from_first_refusal_to_served=round(undone_s, 1),
    )


# -- Item 2: an ingest whose database goes away ends within seconds, in one line ------------------------


def test_an_ingest_whose_neo4j_jvm_is_killed_ends_within_seconds_in_one_line(tmp_path: Path) -> None:
    server = DrillServer(tmp_path / "data", batch_size=10, root=SAMPLES)
    server.start()
    try:
        env = {**server.env, "COLUMNS": "2000"}
        log = tmp_path / "ingest.log"
        client = spawn_argweb(env, "ingest", CORPORA["qt30"].command_name, *map(str, QT30_FILES), log=log)
        driver = server.driver()
        try:
            store = GraphStore(driver)

            def some_rows_in() -> bool:
                assert client.poll() is None, log.read_text(errors="replace")
                m = marker(store, "qt30")
                return m is not None and m["status"] == "loading" and rows_of_batch(store, m["run"]) >= 50

            wait_for(some_rows_in, 300, "the ingest to commit 50 rows", interval=0.02)
            kill9(server.jvm_pid())
            killed = time.perf_counter()
        finally:
            driver.close()
        try:
            client.wait(timeout=120)
        except subprocess.TimeoutExpired:
            kill9(client.pid)
            client.wait(timeout=60)
            raise AssertionError("the ingest was still running 120 s after its database was killed") from None
        ended_s = time.perf_counter() - killed
    finally:
        server.stop()
    out = log.read_text(errors="replace")
    assert client.returncode == 1, out
    assert ended_s < 30, (ended_s, out)
    assert "will be retried" not in out and "Traceback" not in out, out
    errors = [line for line in out.splitlines() if "error:" in line]
    assert len(errors) == 1, out
    line = errors[0]
    assert f"bolt://127.0.0.1:{server.port}" in line and "went away" in line, line
    assert "argweb db start" in line and "run the ingest of qt30 again" in line, line
    assert "until the next ingest" in line, line  # what stays, and who undoes it
    record("ingest47_database_killed_mid_ingest", seconds_from_kill_to_exit=round(ended_s, 1), exit_code=1)


# -- Item 9: one corpus-name grammar for the command line and HTTP --------------------------------------

NEAR_GOLD = ["QT30", "Qt30", "qt30.", "qt30\n", "m_arg", "MOLWENI"]


def test_corpus_names_follow_one_grammar_over_http_and_the_command_line(
    store: GraphStore, neo4j_server: EmbeddedNeo4j, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from api.cli.main import app as cli_app

    aif = json.loads(QT30_FILES[0].read_text(encoding="utf-8"))
    settings = served_settings(neo4j_server, tmp_path / "api", API_KEY)
    headers = {"X-API-Key": API_KEY}
    with TestClient(create_app(settings)) as client:
        for name in [*NEAR_GOLD, "my maps", "my_maps", "-maps", "Maps"]:
            answer = client.post("/aif", params={"corpus": name, "name": "m"}, json=aif, headers=headers)
            assert answer.status_code == 400, (name, answer.text)
            detail = answer.json()["detail"]
            assert "lower-case letters, digits and '-'" in detail, detail
        newline = client.post("/aif?corpus=qt30%0A&name=m", json=aif, headers=headers)
        assert newline.status_code == 400 and "gold corpus 'qt30'" in newline.json()["detail"], newline.text
        ok = client.post("/aif", params={"corpus": "my-maps-2", "name": "m"}, json=aif, headers=headers)
        assert ok.status_code == 201, ok.text
    corpora = {row["id"] for row in store.read("MATCH (c:Corpus) RETURN c.id AS id")}
    assert corpora == {"my-maps-2"}

    runner = CliRunner()
    for name in NEAR_GOLD:
        result = runner.invoke(cli_app, ["ingest", "xaif", "--corpus", name, str(QT30_FILES[0])])
        assert result.exit_code == 2, (name, result.output)
        assert "only in case or punctuation" in " ".join(result.output.split()), result.output
    result = runner.invoke(cli_app, ["ingest", "xaif", "--corpus", "My.Maps", str(QT30_FILES[0])])
    assert result.exit_code == 2 and "lower-case letters" in " ".join(result.output.split()), result.output
    assert {row["id"] for row in store.read("MATCH (c:Corpus) RETURN c.id AS id")} == {"my-maps-2"}


# -- Item 10: derived edges are replaced on re-ingest ----------------------------------------------------


def test_a_reingest_with_every_speaker_changed_leaves_one_spoken_by_per_locution(
    store: GraphStore, tmp_path: Path
) -> None:
    store.ingest(CORPORA["qt30"].load(QT30_FILES))
    old_speakers = {row["name"] for row in store.read("MATCH (s:Speaker) RETURN s.name AS name")}
    assert old_speakers
    spoken_before = store.read("MATCH (l:Locution) WHERE EXISTS { (l)-[:SPOKEN_BY]->() } RETURN count(l) AS n")

    def renamed(node: dict[str, Any]) -> str:
        speaker, _, said = node["text"].partition(" : ")
        return f"Renamed {speaker} : {said}" if node["type"] == "L" and said else node["text"]

    changed = CORPORA["qt30"].load(rewritten_maps(tmp_path / "maps", renamed))
    store.ingest(changed)

    per_locution = store.read(
        "MATCH (l:Locution {corpus: 'qt30'}) OPTIONAL MATCH (l)-[:SPOKEN_BY]->(s:Speaker) "
        "RETURN l.id AS id, collect(s.name) AS speakers"
    )
    assert per_locution
    spoken = [row for row in per_locution if row["speakers"]]
    # Each locution a speaker was named for has exactly one (the new one); none has two.
    assert len(spoken) == spoken_before[0]["n"] > 0
    assert [row for row in per_locution if len(row["speakers"]) > 1] == []
    assert all(row["speakers"][0].startswith("Renamed ") for row in spoken)
    speakers = {row["name"] for row in store.read("MATCH (s:Speaker) RETURN s.name AS name")}
    assert speakers == {f"Renamed {name}" for name in old_speakers}  # the old Speakers are gone
    orphans = store.read("MATCH (s:Speaker) WHERE NOT EXISTS { ()-[:SPOKEN_BY]->(s) } RETURN count(s) AS n")
    assert orphans[0]["n"] == 0
    # The graph is the one a first load of the changed maps leaves, and the marker says so.
    assert store.graph_counts("qt30") == changed.counts()
    m = marker(store, "qt30")
    assert m is not None and m["status"] == "complete" and json.loads(m["counts"]) == changed.counts()
    record(
        "ingest47_speakers_changed_on_reingest",
        locutions=len(per_locution),
        spoken_by_per_locution=1,
        old_speakers_left=0,
    )
