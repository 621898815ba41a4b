"""Integrity drills (issue 35): nothing lost under concurrency, nothing half-written served, every bad input refused.

Each test reproduces one finding of the issue against real processes and the real Neo4j: a bulk
first load racing an ``argweb ingest`` (finding 4), re-ingests that fail or are killed mid-way (5),
an export overlapping an ingest (7), duplicate inputs (11), an API killed during ``POST /aif`` (12),
a changed AIF edge id (13), local access (14) and the smaller findings (15). Where a drill ends
with "nothing lost", it compares counts and a digest of every node and relationship with all their
labels and properties against the expected graph. Figures go to ``.argweb/drill-figures.json``
(table in docs/drills.md).
"""

from __future__ import annotations

import errno
import hashlib
import json
import shutil
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from neo4j import Driver, GraphDatabase
from neo4j.exceptions import AuthError
from typer.testing import CliRunner

from api.app import create_app
from api.cli.main import app as cli_app
from api.errors import outcome
from api.services import aif as aif_service
from api.services.corpora import recover_leftovers
from api.services.graph import Graph
from api.services.rdf import export_rdf
from api.settings import Settings
from graphstore import cypher
from graphstore.browsing import BrowseService
from graphstore.bulk import BulkLoader
from graphstore.predictions import PredictionStore
from graphstore.runtime import LEGACY_PASSWORD, PASSWORD_FILE, EmbeddedNeo4j, free_port
from graphstore.store import GraphStore, running
from ontology.errors import CorpusIncompleteError, GraphStoreError, StoreNotEmptyError, WriteConflictError
from ontology.formats.registry import CORPORA, SAMPLES, read_corpus
from ontology.formats.transcript import read_utterances
from ontology.labels import RelationLabel
from ontology.records import PredictedRelation, PredictionRun
from tests.conftest import PASSWORD, served_settings
from tests.integration.cli_support import cli_env, spawn_argweb
from tests.integration.drill_support import kill9, record, wait_for

pytestmark = pytest.mark.drill

QT30_MAPS = SAMPLES / "dialam-2024"
API_KEY = "integrity-drill-key-0123456789"
SECRET_IN_ADDRESS = "the-key-must-never-be-logged-7391"


# -- what "nothing lost" compares -----------------------------------------------------------------

RUN_STAMPS = ("batch", "ingest_run")


def graph_dump(driver: Driver, stamps: bool = True) -> tuple[list[Any], list[Any]]:
    """Every node and relationship of the graph with labels and properties (the store's bookkeeping
    left out: :data:`graphstore.cypher.BOOKKEEPING`); without ``stamps`` the per-run ids are blanked
    (two loads of the same files in another order or way stamp other run ids)."""

    def canon(props: dict[str, Any]) -> list[tuple[str, Any]]:
        return sorted((k, "<run>" if not stamps and k in RUN_STAMPS else v) for k, v in props.items())

    nodes, _, _ = driver.execute_query(cypher.dump_nodes())
    rels, _, _ = driver.execute_query(cypher.dump_relationships())
    return (
        [(r["id"], sorted(r["labels"]), canon(r["props"])) for r in nodes],
        [(r["source"], r["type"], r["target"], canon(r["props"])) for r in rels],
    )


def digest(dump: tuple[list[Any], list[Any]]) -> dict[str, Any]:
    """Counts and a SHA-256 of a :func:`graph_dump`."""
    text = json.dumps(dump, sort_keys=True, default=repr)
    return {"nodes": len(dump[0]), "relationships": len(dump[1]), "sha256": hashlib.sha256(text.encode()).hexdigest()}


def cli(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli_app, args, env=env, catch_exceptions=False)
    return result.exit_code, " ".join(result.output.split())


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- Finding 4 (and 14): a bulk first load and a concurrent ingest ----------------------------------


def _corpora_dir(root: Path) -> Path:
    """A corpora directory with the molweni and stac samples only (the bulk load's part of the race)."""
    for name in ("molweni", "stac"):
        shutil.copytree(SAMPLES / name, root / name)
    return root


def test_a_bulk_first_load_and_a_concurrent_ingest_lose_nothing(
    store: GraphStore, driver: Driver, tmp_path: Path
) -> None:
    """Issue 35, finding 4: ``argweb run --no-predict --no-serve & sleep 1.5; argweb ingest aif MAPS`` on an
    empty data directory. Before, both exited 0 and the maps were gone (the importer replaced the
    store under the ingest). Now the ingest waits for the bulk load's lease (or, when it claims
    first, the main job loads transactionally): both succeed and the graph is the union, digest for
    digest. The same data directory shows finding 14: no documented password, private modes."""
    corpora = _corpora_dir(tmp_path / "corpora")
    data = tmp_path / "data"
    port = free_port()
    env = {k: v for k, v in cli_env(data, port, "unused").items() if k != "ARGWEB_NEO4J_PASSWORD"}
    env["ARGWEB_CORPORA"] = str(corpora)
    started = time.perf_counter()
    # --keep-export: the export file stays, so that its mode can be checked (finding 14).
    run = spawn_argweb(env, "run", "--no-predict", "--no-serve", "--keep-export", log=tmp_path / "run.log")
    time.sleep(1.5)
    ingest = spawn_argweb(env, "ingest", "aif", str(QT30_MAPS), log=tmp_path / "ingest.log")
    server = EmbeddedNeo4j(data / "neo4j", password="", port=port)
    try:
        codes = (run.wait(timeout=1200), ingest.wait(timeout=1200))
        seconds = time.perf_counter() - started
        logs = {n: (tmp_path / f"{n}.log").read_text(errors="replace") for n in ("run", "ingest")}
        assert codes == (0, 0), logs
        password = (data / "neo4j" / PASSWORD_FILE).read_text().strip()
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=("neo4j", password)) as drill:
            got = graph_dump(drill, stamps=False)
            loading, _, _ = drill.execute_query("MATCH (c:Corpus) WHERE c.status <> 'complete' RETURN c.id AS id")
            # Finding 14: the documented default is refused; the generated password is the data directory's.
            legacy = GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=("neo4j", LEGACY_PASSWORD))
            with legacy, pytest.raises(AuthError):
                legacy.verify_connectivity()
        modes = {
            "data_dir": mode(data),
            "neo4j_home": mode(data / "neo4j"),
            "password_file": mode(data / "neo4j" / PASSWORD_FILE),
            "neo4j_log": mode(data / "neo4j" / "argweb-neo4j.log"),
            "export": mode(data / "export.nt"),
        }
    finally:
        for proc in (run, ingest):
            if proc.poll() is None:
                proc.kill()
        server.stop()
    assert loading == []
    assert password and password != LEGACY_PASSWORD and len(password) >= 24
    assert modes == {
        "data_dir": 0o700,
        "neo4j_home": 0o700,
        "password_file": 0o600,
        "neo4j_log": 0o600,
        "export": 0o600,
    }
    # The expected graph: the same files loaded one after the other, transactionally (the main
    # job's with the input digests it records).
    for name in ("molweni", "stac"):
        spec = CORPORA[name]
        store.ingest(read_corpus(spec, spec.find(corpora), spec.input_digest(corpora)))
    store.ingest(CORPORA["qt30"].load(CORPORA["qt30"].find(SAMPLES)))
    want = graph_dump(driver, stamps=False)
    assert digest(got) == digest(want)
    assert got == want
    # The main job prints a summary; its every detail is in the data directory's run.log.
    details = logs["run"] + (data / "run.log").read_text(errors="replace")
    order = "ingest first, main job transactional" if "loading transactionally" in details else "bulk first"
    if order == "bulk first":
        assert "bulk load of molweni, stac" in details, details
    record(
        "integrity_bulk_vs_ingest",
        order=order,
        both_exit_0=True,
        seconds=round(seconds, 1),
        **{f"graph_{k}": v for k, v in digest(got).items()},
        expected_sha256=digest(want)["sha256"],
        modes={k: oct(v) for k, v in modes.items()},
    )


def _molweni() -> Any:
    spec = CORPORA["molweni"]
    return spec.load(spec.find(SAMPLES))


def test_the_bulk_lease_refuses_every_other_write_and_the_reverse(
    store: GraphStore, driver: Driver, neo4j_server: EmbeddedNeo4j, tmp_path: Path
) -> None:
    """Every write path takes its turn through the write lease; a bulk load holding it refuses them all
    (an ingest after waiting ``bulk_wait``), and a bulk load is refused once any write came first."""
    loader = BulkLoader(neo4j_server)
    run = "drill-bulk-run"
    with running(run):
        loader.claim(run)
        try:
            with pytest.raises(WriteConflictError, match=r"a bulk load .* is replacing the whole store"):
                GraphStore(driver, bulk_wait=0).ingest(_molweni())
            started = time.perf_counter()
            with pytest.raises(WriteConflictError, match="gave up waiting after 2s"):
                GraphStore(driver, bulk_wait=2).ingest(_molweni())
            waited = time.perf_counter() - started
            prediction = PredictionRun(run_id="drill-run", model="m", model_version="1", task="t")
            rows = [PredictedRelation(source="a", target="b", label=RelationLabel.SUPPORT, score=0.5)]
            with pytest.raises(WriteConflictError, match="prediction run drill-run refused"):
                PredictionStore(driver).write(prediction, rows)
            # A corpus slipped in behind the lease's back (raw Cypher): deleting it is a write too.
            driver.execute_query("CREATE (:Node:Corpus {id: 'slipped', corpus: 'slipped', status: 'complete'})")
            with pytest.raises(WriteConflictError, match="deleting corpus slipped refused"):
                store.delete_corpus("slipped")
            settings = served_settings(neo4j_server, tmp_path, API_KEY)
            with TestClient(create_app(settings)) as client:
                answer = client.post(
                    "/aif", params={"name": "during-bulk"}, json=_small_map(), headers={"X-API-Key": API_KEY}
                )
            assert answer.status_code == 409, answer.text
            assert "bulk load" in answer.json()["detail"] and answer.headers["retry-after"].isdigit()
            assert store.read("MATCH (n:Node) WHERE n.corpus <> 'slipped' RETURN count(n) AS n")[0]["n"] == 0
        finally:
            loader.release(run)
    # The reverse: with anything written first, the bulk load is refused before it parses a file.
    with running("drill-bulk-2"), pytest.raises(StoreNotEmptyError, match="not empty"):
        loader.claim("drill-bulk-2")
    store.clear()
    # A lease whose bulk load was killed holds nothing: the next write goes ahead.
    driver.execute_query(
        "MERGE (g:WriteLease {id: 'graph'}) SET g.ingest_owner = $owner, g.ingest_run = 'dead', "
        "g.ingest_lease = timestamp() + 3600000",
        owner=f"{socket.gethostname()}:999999999:1",
    )
    assert GraphStore(driver, bulk_wait=0).ingest(_molweni()).nodes > 0
    record("integrity_bulk_lease_refusals", refused_writes=5, ingest_waited_s=round(waited, 1))


def _small_map(text: str = "Labour must win back trust") -> dict[str, Any]:
    return {
        "nodes": [
            {"nodeID": "1", "text": f"Lisa Nandy : {text}", "type": "L"},
            {"nodeID": "2", "text": "Asserting", "type": "YA", "scheme": "Asserting"},
            {"nodeID": "3", "text": text, "type": "I"},
        ],
        "edges": [{"edgeID": "11", "fromID": "1", "toID": "2"}, {"edgeID": "12", "fromID": "2", "toID": "3"}],
        "locutions": [{"nodeID": "1", "personID": "Lisa Nandy"}],
    }


# -- Finding 5: a failed re-ingest keeps nothing of its changes ------------------------------------


def _rewritten_maps(folder: Path, long_scheme: bool) -> Path:
    """The qt30 sample maps with every text changed (and, if asked, one TA scheme of 40 KB)."""
    folder.mkdir(parents=True)
    for path in CORPORA["qt30"].find(SAMPLES):
        data = json.loads(path.read_text(encoding="utf-8"))
        for node in data["nodes"]:
            if node.get("type") in ("I", "L"):
                node["text"] = f"{node['text']} (edited)"
        if long_scheme:
            ta = next((n for n in data["nodes"] if n.get("type") == "TA"), None)
            if ta is not None:
                ta["scheme"] = "Default Transition " + "x" * 40_000
                long_scheme = False
        (folder / path.name).write_text(json.dumps(data), encoding="utf-8")
    assert not long_scheme, "no TA node in the qt30 samples"
    return folder


def _journal_entries(driver: Driver) -> int:
    rows, _, _ = driver.execute_query("MATCH (j:IngestJournal) WHERE j.journal_kind = 'node' RETURN count(j) AS n")
    return int(rows[0]["n"])


def test_a_failed_reingest_leaves_every_node_and_property_as_it_was(
    store: GraphStore, driver: Driver, cli_env: dict[str, str], neo4j_settings: Settings, tmp_path: Path
) -> None:
    """Issue 35, finding 5. Before, a re-ingest with new texts and one 40 KB TA scheme printed "failed,
    nothing kept" while 54 of 71 texts stayed rewritten. Now (a) that file is refused before anything
    is written, (b) a re-ingest failing in its 4th batch puts back every node it changed, and (c) one
    killed with SIGKILL mid-way is undone from its journal at the next start: each time the digest
    of every node and property equals the one before."""
    qt30 = CORPORA["qt30"]
    store.ingest(qt30.load(qt30.find(SAMPLES)))
    before = graph_dump(driver)

    # (a) The issue's file: refused by the checks, before any write.
    code, out = cli(["ingest", "aif", str(_rewritten_maps(tmp_path / "long", long_scheme=True))], cli_env)
    assert code == 2, out
    assert "'scheme_label' holds 40,019 bytes" in out and "node" in out, out
    assert graph_dump(driver) == before

    # (b) A write that fails mid-way (the 4th batch), in process.
    edited = qt30.load(sorted(_rewritten_maps(tmp_path / "edited", long_scheme=False).glob("*.json")))
    failing = GraphStore(driver, batch_size=25)
    write, calls, journaled = failing._write, [0], [0]

    def fail_fourth(*args: Any, **kwargs: Any) -> None:
        calls[0] += 1
        if calls[0] == 4:
            journaled[0] = _journal_entries(driver)
            raise GraphStoreError("the 4th batch failed (drill)")
        write(*args, **kwargs)

    failing._write = fail_fourth  # type: ignore[method-assign]
    with pytest.raises(GraphStoreError, match="failed, nothing kept"):
        failing.ingest(edited)
    assert journaled[0] > 0, "the failing run changed no existing node before it failed"
    assert graph_dump(driver) == before
    assert _journal_entries(driver) == 0

    # (c) The ingest process killed with SIGKILL mid-way, then the recovery every start runs.
    env = {**cli_env, "ARGWEB_BATCH_SIZE": "5"}
    proc = spawn_argweb(env, "ingest", "aif", str(tmp_path / "edited"), log=tmp_path / "killed.log")
    try:
        wait_for(lambda: _journal_entries(driver) >= 30, 300, "the re-ingest to change 30 existing nodes")
        changed = _journal_entries(driver)
        kill9(proc.pid)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert graph_dump(driver) != before, "the kill left nothing to undo"
    started = time.perf_counter()
    assert recover_leftovers(Graph(neo4j_settings, driver=driver)) == ["qt30"]
    recovered_s = time.perf_counter() - started
    after = graph_dump(driver)
    assert digest(after) == digest(before)
    assert after == before
    assert driver.execute_query("MATCH (j:IngestJournal) RETURN count(j) AS n")[0][0]["n"] == 0
    # And the edited maps load in full afterwards.
    assert cli(["ingest", "aif", str(tmp_path / "edited")], cli_env)[0] == 0
    texts, _, _ = driver.execute_query("MATCH (n:Proposition {corpus: 'qt30'}) RETURN n.text AS t")
    assert texts and all(r["t"].endswith("(edited)") for r in texts)
    record(
        "integrity_failed_reingest",
        nodes=digest(before)["nodes"],
        relationships=digest(before)["relationships"],
        changed_before_failure=journaled[0],
        changed_before_kill=changed,
        recovery_s=round(recovered_s, 2),
        digest_equal=True,
    )


# -- Finding 7: an export overlapping an ingest ----------------------------------------------------


class _Trigger:
    """A reporter whose progress, at the first exported row, starts ``work`` and waits until it wrote."""

    def __init__(self, work: Callable[[], None], started: Callable[[], bool]) -> None:
        self.work, self.started, self.rows = work, started, 0
        self.thread: threading.Thread | None = None

    def log(self, message: str) -> None:
        pass

    def warn(self, message: str) -> None:
        pass

    @contextmanager
    def progress(self, title: str, total: int) -> Iterator[Callable[[int], None]]:
        def advance(n: int) -> None:
            self.rows += n
            if self.thread is None:
                self.thread = threading.Thread(target=self.work)
                self.thread.start()
                wait_for(self.started, 120, "the ingest to claim its corpus")

        yield advance


def test_an_export_overlapping_an_ingest_is_refused_naming_it(
    store: GraphStore, driver: Driver, neo4j_settings: Settings, tmp_path: Path
) -> None:
    """Issue 35, finding 7: an ingest starting during an export was exported half-loaded (1,741 of 6,883
    ContextDeP nodes), exit 0. Now the export reads the write turns before and after: it is refused
    naming the ingest, and writes no file; run again, it is whole."""
    store.ingest(_molweni())
    spec = CORPORA["contextdep"]
    bundle = spec.load(spec.find(SAMPLES))
    slow = GraphStore(driver, batch_size=20)

    def claimed() -> bool:
        rows = store.read("MATCH (c:Corpus {id: 'contextdep'}) RETURN c.status AS s")
        return bool(rows)

    trigger = _Trigger(lambda: slow.ingest(bundle), claimed)
    graph = Graph(neo4j_settings, driver=driver)
    out = tmp_path / "whole.nt"
    with pytest.raises(CorpusIncompleteError, match=r"an ingest of contextdep started while the RDF export read"):
        export_rdf(graph, out, load=False, page_size=5, reporter=trigger)
    assert trigger.thread is not None
    trigger.thread.join(timeout=300)
    assert not out.exists() and not list(tmp_path.glob(".whole.nt.*"))
    done = export_rdf(graph, out, load=False, page_size=500)
    counts = store.read("MATCH (n:Node) RETURN count(n) AS n")[0]["n"]
    assert done.export.nodes == counts
    record(
        "integrity_export_during_ingest",
        refused=True,
        rows_read_before_refusal=trigger.rows,
        nodes_exported_after=done.export.nodes,
    )


# -- Finding 11: the same input twice --------------------------------------------------------------


def test_duplicate_files_and_document_names_are_refused_naming_both(
    store: GraphStore, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Issue 35, finding 11: ``ingest molweni dev.json dev.json`` stored every dialogue twice (as ``~2``),
    and of two Sci-Arg directories holding A01 the second was ignored. Each is now refused, naming
    both inputs, and the graph is unchanged."""
    store.ingest(_molweni())
    dev = CORPORA["molweni"].find(SAMPLES)[0]
    copy = tmp_path / "copy" / "dev-copy.json"
    copy.parent.mkdir()
    shutil.copy(dev, copy)
    # Another file with one dialogue of dev.json (and one of its own).
    dialogues = json.loads(dev.read_text(encoding="utf-8"))
    other = tmp_path / "other.json"
    other.write_text(json.dumps([dialogues[1], {**dialogues[0], "id": "a-new-one"}]), encoding="utf-8")
    papers = sorted((SAMPLES / "sciarg" / "compiled_corpus").glob("*.ann"))[0]
    for k in (1, 2):
        folder = tmp_path / f"sciarg{k}"
        folder.mkdir()
        shutil.copy(papers, folder / papers.name)
        shutil.copy(papers.with_suffix(".txt"), folder / papers.with_suffix(".txt").name)
    # The second copy differs (a trailing line): not a copy of a file, a second paper of the same name.
    with open(tmp_path / "sciarg2" / papers.name, "a", encoding="utf-8") as fh:
        fh.write("\n")
    maps = CORPORA["qt30"].find(SAMPLES)
    (tmp_path / "aif").mkdir()
    edited = json.loads(maps[0].read_text(encoding="utf-8"))
    edited["nodes"][0]["text"] = edited["nodes"][0]["text"] + " (edited)"
    (tmp_path / "aif" / maps[0].name).write_text(json.dumps(edited), encoding="utf-8")
    before = digest(graph_dump(store.driver))
    cases = [
        (["ingest", "molweni", str(dev), str(dev)], f"{dev}: given twice (the same path)"),
        (["ingest", "molweni", str(dev), str(copy)], f"{copy}: the same content as {dev}"),
        (["ingest", "molweni", str(dev), str(other)], f"dialogue id '{dialogues[1]['id']}' is also dialogue #1"),
        (
            ["ingest", "sciarg", str(tmp_path / "sciarg1"), str(tmp_path / "sciarg2")],
            f"a paper named '{papers.stem}' is also given as {tmp_path / 'sciarg1' / papers.name}",
        ),
        (["ingest", "aif", str(maps[0]), str(tmp_path / "aif")], f"a map named '{maps[0].stem}' is also given as"),
    ]
    for args, expected in cases:
        code, out = cli(args, cli_env)
        assert code == 2, (args, out)
        assert expected in out, (expected, out)
        assert digest(graph_dump(store.driver)) == before
    record("integrity_duplicate_inputs", refused=len(cases), graph_unchanged=True)


# -- Finding 12 (and 14): an API killed during POST /aif -------------------------------------------


def _big_map(locutions: int) -> dict[str, Any]:
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    locs = []
    for i in range(locutions):
        loc, ya, p = f"L{i}", f"Y{i}", f"I{i}"
        speaker = f"Speaker{i % 5}"
        nodes += [
            {"nodeID": loc, "text": f"{speaker} : crashproof claim number {i}", "type": "L"},
            {"nodeID": ya, "text": "Asserting", "type": "YA", "scheme": "Asserting"},
            {"nodeID": p, "text": f"crashproof claim number {i}", "type": "I"},
        ]
        edges += [{"edgeID": f"a{i}", "fromID": loc, "toID": ya}, {"edgeID": f"b{i}", "fromID": ya, "toID": p}]
        locs.append({"nodeID": loc, "personID": speaker})
    return {"nodes": nodes, "edges": edges, "locutions": locs}


def _serve(env: dict[str, str], port: int, log: Path) -> Any:
    proc = spawn_argweb(env, "serve", "--host", "127.0.0.1", "--port", str(port), log=log)

    def up() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return proc.poll() is not None

    wait_for(up, 180, "the API to answer /health", interval=0.3)
    assert proc.poll() is None, log.read_text(errors="replace")
    return proc


def test_an_api_killed_during_post_aif_leaves_nothing_served_and_is_recovered_at_start(
    store: GraphStore, driver: Driver, neo4j_server: EmbeddedNeo4j, neo4j_settings: Settings, tmp_path: Path
) -> None:
    """Issue 35, finding 12: after a kill -9 of the API during ``POST /aif``, 29,002 nodes stayed
    ``loading``; ``GET /aif/<id>`` answered an empty map with 200, ``/search`` returned the half-loaded
    nodes, the whole-graph export was refused until the map was sent again, and nothing called the
    recovery. Now those reads refuse (409) or leave the corpus out, and the next start of the API
    undoes the leftovers. The same API shows finding 14: a key in the address is refused and never
    logged."""
    store.ingest(_molweni())
    info = neo4j_server.info()
    assert info is not None
    port = free_port()
    env = cli_env(tmp_path / "data", info.port, PASSWORD, ARGWEB_NEO4J_URI=info.uri, ARGWEB_API_KEY=API_KEY)
    env["ARGWEB_BATCH_SIZE"] = "100"
    before = graph_dump(driver)
    big = _big_map(4000)
    api = _serve(env, port, tmp_path / "api-1.log")
    answers: list[Any] = []

    def post() -> None:
        try:
            answers.append(
                httpx.post(
                    f"http://127.0.0.1:{port}/aif",
                    params={"corpus": "crash-drill", "name": "big"},
                    json=big,
                    headers={"X-API-Key": API_KEY},
                    timeout=600,
                )
            )
        except httpx.HTTPError as e:
            answers.append(e)

    sender = threading.Thread(target=post)
    sender.start()
    try:

        def half_written() -> bool:
            rows = store.read("MATCH (n:Node {corpus: 'crash-drill'}) RETURN count(n) AS n")
            return rows[0]["n"] >= 3000

        wait_for(half_written, 300, "POST /aif to write 3,000 nodes")
        kill9(api.pid)
        api.wait(timeout=30)
    finally:
        if api.poll() is None:
            api.kill()
        sender.join(timeout=60)
    assert isinstance(answers[0], httpx.HTTPError), answers
    left = store.read("MATCH (n:Node {corpus: 'crash-drill'}) RETURN count(n) AS n")[0]["n"]
    assert store.incomplete() == ["crash-drill"] and left >= 3000

    # Never served as complete: the map, the search and the whole-graph export.
    with pytest.raises(CorpusIncompleteError, match="crash-drill is half-loaded"):
        aif_service.export_map(driver, "neo4j", "crash-drill:big", 10.0)
    raw, _, _ = driver.execute_query(
        "CALL db.index.fulltext.queryNodes('node_text', 'crashproof') YIELD node RETURN count(node) AS n"
    )
    assert raw[0]["n"] > 0  # the index holds the half-loaded texts: the search must leave them out
    hits = BrowseService(driver, "neo4j", 10.0).search("crashproof")
    assert hits.items == []
    with pytest.raises(CorpusIncompleteError, match="crash-drill is half-loaded"):
        export_rdf(Graph(neo4j_settings, driver=driver), tmp_path / "whole.nt", load=False)

    # The next start undoes the leftovers (its recovery runs in the background).
    started = time.perf_counter()
    api = _serve(env, port, tmp_path / "api-2.log")
    try:
        wait_for(lambda: store.incomplete() == [], 120, "the API's start to recover crash-drill")
        recovered_s = time.perf_counter() - started
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/aif/crash-drill:big", timeout=30).status_code == 404
        assert httpx.get(f"{base}/search", params={"q": "crashproof"}, timeout=30).json()["items"] == []
        # Finding 14: an API key in the address is refused, and written to no log.
        refused = httpx.get(f"{base}/stats", params={"api_key": SECRET_IN_ADDRESS}, timeout=30)
        assert refused.status_code == 400 and "X-API-Key header" in refused.json()["detail"]
        again = httpx.post(
            f"{base}/aif",
            params={"corpus": "crash-drill", "name": "small"},
            json=_small_map(),
            timeout=60,
            headers={"X-API-Key": API_KEY},
        )
        assert again.status_code == 201, again.text
    finally:
        api.terminate()
        api.wait(timeout=60)
    logs = "".join((tmp_path / f"api-{k}.log").read_text(errors="replace") for k in (1, 2))
    assert "GET /stats?api_key=REDACTED" in logs
    assert SECRET_IN_ADDRESS not in logs and API_KEY not in logs
    store.delete_corpus("crash-drill")
    assert graph_dump(driver) == before
    export_rdf(Graph(neo4j_settings, driver=driver), tmp_path / "whole.nt", load=False)
    record(
        "integrity_api_killed_during_post_aif",
        nodes_left_loading=left,
        served_while_loading=0,
        recovered_at_start_s=round(recovered_s, 1),
        key_in_address_logged=False,
    )


# -- Finding 13: a changed AIF edge id -------------------------------------------------------------


def test_a_changed_edge_id_replaces_the_edge_instead_of_adding_one(
    store: GraphStore, driver: Driver, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Issue 35, finding 13: re-ingesting a map whose edge got another edgeID added a second edge between
    the same two nodes. An edge is now one per type and ends: the id is updated in place."""
    path = tmp_path / "map.json"
    path.write_text(json.dumps(_small_map()), encoding="utf-8")
    assert cli(["ingest", "aif", str(path)], cli_env)[0] == 0

    def edges() -> list[tuple[str, str, str]]:
        rows, _, _ = driver.execute_query(
            "MATCH (a:Node {corpus: 'qt30'})-[r:AIF_EDGE]->(b) RETURN a.id AS a, b.id AS b, r.id AS id ORDER BY a"
        )
        return [(r["a"], r["b"], r["id"]) for r in rows]

    first = edges()
    changed = _small_map()
    changed["edges"][1]["edgeID"] = "99"
    path.write_text(json.dumps(changed), encoding="utf-8")
    assert cli(["ingest", "aif", str(path)], cli_env)[0] == 0
    second = edges()
    assert len(second) == len(first) == 2
    assert second[1][2] == "qt30:map:e:99" and second[0] == first[0]


# -- Finding 15: the smaller ones ------------------------------------------------------------------


def test_a_full_disk_says_no_space(store: GraphStore, cli_env: dict[str, str]) -> None:
    """Issue 35, finding 15: a full disk never said "no space". Writing to /dev/full fails with ENOSPC
    for real (no privileges needed, unlike a tiny tmpfs): the command names the file and says so,
    exit 1; the error mapping gives any ENOSPC, however deep its cause, 507 / exit 1."""
    store.ingest(_molweni())
    dialogue = store.read("MATCH (d:Dialogue) RETURN d.id AS id LIMIT 1")[0]["id"]
    code, out = cli(["export", "aif", "--dialogue", dialogue, "/dev/full"], cli_env)
    assert code == 1, out
    assert "/dev/full: cannot write the AIF map: No space left on device" in out, out
    assert "free some disk space" in out and "Traceback" not in out
    wrapped = GraphStoreError("ingest failed")
    wrapped.__cause__ = OSError(errno.ENOSPC, "No space left on device")
    for error in (OSError(errno.ENOSPC, "disk full"), wrapped):
        result = outcome(error)
        assert (result.http_status, result.exit_code) == (507, 1)
        assert "no space left on device" in result.message.lower()


def test_links_are_followed_or_reported(store: GraphStore, cli_env: dict[str, str], tmp_path: Path) -> None:
    """Issue 35, finding 15: symbolic links to subdirectories were skipped, dangling ones dropped, without a
    word. A linked subdirectory is now read; a dangling link is refused, named."""
    real = tmp_path / "elsewhere" / "DP"
    shutil.copytree(SAMPLES / "molweni" / "DP", real)
    folder = tmp_path / "molweni"
    folder.mkdir()
    (folder / "linked").symlink_to(real.parent)
    code, out = cli(["ingest", "molweni", str(folder)], cli_env)
    assert code == 0, out
    assert store.graph_counts("molweni") == _molweni().counts()
    (folder / "gone.json").symlink_to(tmp_path / "nowhere.json")
    code, out = cli(["ingest", "molweni", str(folder)], cli_env)
    assert code == 2 and f"{folder / 'gone.json'}: a symbolic link to" in out and "does not exist" in out, out


def test_a_byte_order_mark_is_read_the_same_in_json_as_in_csv(
    store: GraphStore, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Issue 35, finding 15: a UTF-8 BOM was refused in JSON, accepted in CSV/TSV. JSON takes it now."""
    dev = CORPORA["molweni"].find(SAMPLES)[0]
    bom = tmp_path / dev.name
    bom.write_bytes(b"\xef\xbb\xbf" + dev.read_bytes())
    code, out = cli(["ingest", "molweni", str(bom)], cli_env)
    assert code == 0, out
    assert store.graph_counts("molweni") == _molweni().counts()


def test_the_api_and_the_cli_agree_that_locutions_are_optional(
    store: GraphStore, neo4j_server: EmbeddedNeo4j, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Issue 35, finding 15: ``POST /aif`` required ``locutions``, ``argweb ingest aif`` did not."""
    bare = _small_map()
    del bare["locutions"]
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(bare), encoding="utf-8")
    assert cli(["ingest", "aif", str(path)], cli_env)[0] == 0
    with TestClient(create_app(served_settings(neo4j_server, tmp_path, API_KEY))) as client:
        answer = client.post("/aif", params={"name": "bare"}, json=bare, headers={"X-API-Key": API_KEY})
    assert answer.status_code == 201, answer.text
    assert store.graph_counts("aif-import") == store.graph_counts("qt30")


def test_a_unicode_line_separator_does_not_start_a_turn(tmp_path: Path) -> None:
    """Issue 35, finding 15: U+2028 split a transcript line into two turns (``str.splitlines`` breaks at
    it). A turn is a line of LF, CRLF or CR; U+2028, U+2029 and U+0085 inside it are its text."""
    path = tmp_path / "t.txt"
    path.write_text("Anna: We agree\u2028Ben: on nothing.\r\nBen: Right\u2029 then\x85 fine.\rCy: Ok.\n", "utf-8")
    utterances = read_utterances(path)
    assert [(u.speaker, u.turn, u.line) for u in utterances] == [("Anna", 0, 1), ("Ben", 1, 2), ("Cy", 2, 3)]
    assert utterances[0].text == "We agree\u2028Ben: on nothing."
