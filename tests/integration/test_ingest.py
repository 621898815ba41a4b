"""GraphStore ingest against the real embedded Neo4j: counts, idempotence, all-or-nothing.

Connection failures are simulated with a proxy around the real driver that raises
``ServiceUnavailable`` from the N-th write transaction (and, in "keeps failing" mode, from every
call after it, so that even the clean-up cannot run). Neo4j itself is never mocked.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any, cast

import pytest
from neo4j import Driver
from neo4j.exceptions import ServiceUnavailable
from typer.testing import CliRunner

from graphstore import cypher
from graphstore.store import GraphStore, edge_groups, node_groups
from ontology.errors import GraphStoreError, LoaderError
from ontology.formats.registry import CORPORA
from ontology.formats.registry import SAMPLES as PACKAGED_SAMPLES
from ontology.records import CorpusBundle, CorpusRecord, LocutionRecord

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLES = PACKAGED_SAMPLES
BAD = DATA / "bad"
NAMES = ("molweni", "stac", "qt30")


def sample(name: str) -> CorpusBundle:
    spec = CORPORA[name]
    return spec.load(spec.find(SAMPLES))


def expected(bundle: CorpusBundle) -> dict[str, dict[str, int]]:
    """Per-label node counts (every label, not only the most specific) and per-type edge counts."""
    labels = Counter(label.value for n in bundle.nodes for label in n.labels())
    rels = Counter(e.type.value for e in bundle.edges)
    return {"labels": dict(labels), "relationships": dict(rels)}


def snapshot(store: GraphStore) -> dict[str, Any]:
    """Everything stats() counts, without the marker status."""
    stats = store.stats()
    corpora = {
        name: {k: v for k, v in entry.items() if k not in ("status", "source")}
        for name, entry in stats["corpora"].items()
    }
    return {"labels": stats["labels"], "relationships": stats["relationships"], "corpora": corpora}


def corpus_entry(store: GraphStore, name: str) -> dict[str, Any] | None:
    entry: dict[str, Any] | None = store.stats()["corpora"].get(name)
    return entry


def marker(store: GraphStore, name: str) -> dict[str, Any] | None:
    rows = [r for r in store.run(cypher.corpora()) if r["id"] == name]
    return rows[0] if rows else None


def n_writes(bundle: CorpusBundle, batch_size: int) -> int:
    """How many write transactions GraphStore.ingest sends for ``bundle``."""
    groups = list(node_groups(bundle.nodes).values()) + list(edge_groups(bundle.edges).values())
    return sum(math.ceil(len(rows) / batch_size) for rows in groups)


class FlakyDriver:
    """Real driver whose ``fail_at``-th write transaction raises ServiceUnavailable.

    With ``keep_failing`` the connection stays "down" afterwards: every query, session and
    transaction raises, so the store cannot clean up either.
    """

    def __init__(self, real: Driver, fail_at: int, keep_failing: bool = False) -> None:
        self.real = real
        self.fail_at = fail_at
        self.keep_failing = keep_failing
        self.writes = 0
        self.down = False

    def check(self) -> None:
        if self.down:
            raise ServiceUnavailable("simulated: connection to Neo4j lost")

    def execute_query(self, *args: Any, **kwargs: Any) -> Any:
        self.check()
        return self.real.execute_query(*args, **kwargs)

    def session(self, **kwargs: Any) -> FlakySession:
        self.check()
        return FlakySession(self, self.real.session(**kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class FlakySession:
    def __init__(self, owner: FlakyDriver, inner: Any) -> None:
        self.owner = owner
        self.inner = inner

    def __enter__(self) -> FlakySession:
        self.inner.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.inner.__exit__(*exc)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        self.owner.check()
        return self.inner.run(*args, **kwargs)

    def execute_write(self, work: Any, *args: Any, **kwargs: Any) -> Any:
        self.owner.check()
        self.owner.writes += 1
        if self.owner.writes == self.owner.fail_at:
            self.owner.down = self.owner.keep_failing
            raise ServiceUnavailable(f"simulated: connection dropped in write transaction {self.owner.writes}")
        return self.inner.execute_write(work, *args, **kwargs)


def flaky_store(store: GraphStore, bundle: CorpusBundle, keep_failing: bool = False) -> tuple[GraphStore, FlakyDriver]:
    """A store over a flaky driver failing half-way through ingesting ``bundle``."""
    total = n_writes(bundle, store.batch_size)
    assert total >= 4, "the bundle must need several write transactions"
    proxy = FlakyDriver(store.driver, fail_at=total // 2 + 1, keep_failing=keep_failing)
    return GraphStore(cast(Driver, proxy), batch_size=store.batch_size), proxy


# -- counts -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_ingest_counts_match_bundle(store: GraphStore, name: str) -> None:
    bundle = sample(name)
    report = store.ingest(bundle)
    assert (report.nodes, report.edges) == (len(bundle.nodes), len(bundle.edges))
    entry = corpus_entry(store, name)
    assert entry is not None and entry["status"] == "complete"
    want = expected(bundle)
    assert entry["labels"] == want["labels"]
    assert entry["relationships"] == want["relationships"]
    assert json.loads(marker(store, name)["counts"]) == bundle.counts()  # type: ignore[index]
    assert set(store.stats()["corpora"]) == {name}


def test_sample_numbers_in_the_graph(store: GraphStore) -> None:
    """Graph counts against numbers read straight from the sample files."""
    for name in NAMES:
        store.ingest(sample(name))
    corpora = store.stats()["corpora"]
    for name, path in (("molweni", SAMPLES / "molweni/DP/dev.json"), ("stac", SAMPLES / "stac/train.json")):
        dialogues = json.loads(path.read_text(encoding="utf-8"))
        summary = corpora[name]["summary"]
        assert summary["dialogues"] == len(dialogues)
        assert summary["locutions"] == sum(len(d["edus"]) for d in dialogues)
        assert summary["relations"] == sum(len(d["relations"]) for d in dialogues)
        qap = sum(r["type"] in ("QAP", "Question-answer_pair") for d in dialogues for r in d["relations"])
        assert qap > 0 and corpora[name]["relations"]["DiscourseRelation:QuestionAnswerPair"] == qap
    maps = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((SAMPLES / "dialam-2024").rglob("*.json"))]
    types = Counter(n["type"] for m in maps for n in m["nodes"])
    qt30 = corpora["qt30"]
    assert qt30["summary"]["dialogues"] == len(maps)
    assert qt30["labels"]["Locution"] == types["L"]
    assert qt30["labels"]["Proposition"] == types["I"]
    assert qt30["labels"]["Relation"] == sum(types[t] for t in ("RA", "CA", "MA", "TA", "YA"))
    assert qt30["labels"]["Attack"] == types["CA"]
    assert qt30["relationships"]["AIF_EDGE"] == sum(len(m["edges"]) for m in maps)


def test_ingest_twice_gives_identical_counts(store: GraphStore) -> None:
    for name in NAMES:
        store.ingest(sample(name))
    first = snapshot(store)
    for name in NAMES:
        store.ingest(sample(name))
    assert snapshot(store) == first
    assert {e["status"] for e in store.stats()["corpora"].values()} == {"complete"}


# -- bad input ----------------------------------------------------------------------------------


BAD_CASES = [
    ("molweni", "truncated.json", r"line \d+, column \d+"),
    ("molweni", "relation_out_of_range.json", r"dialogue #1 \(id 7084\), relation 2"),
    ("stac", "unknown_relation_label.json", r"dialogue #1 \(id pilot01\), relation 1: unknown stac label 'Banter'"),
    ("qt30", "aif_edge_missing_node.json", r"edge 913057: refers to missing node"),
    ("qt30", "aif_unknown_node_type.json", r"node 707853: unknown AIF node type 'XA'"),
]


@pytest.mark.parametrize(("name", "file", "record"), BAD_CASES)
def test_bad_input_writes_nothing(store: GraphStore, name: str, file: str, record: str) -> None:
    path = BAD / file
    with pytest.raises(LoaderError, match=record) as err:
        store.ingest(CORPORA[name].load([path]))
    assert str(path) in str(err.value)
    assert store.stats()["corpora"] == {}


@pytest.mark.parametrize(("name", "file", "record"), BAD_CASES)
def test_bad_input_leaves_other_corpus_intact(store: GraphStore, name: str, file: str, record: str) -> None:
    other = "molweni" if name != "molweni" else "stac"
    store.ingest(sample(other))
    before = snapshot(store)
    with pytest.raises(LoaderError, match=record):
        store.ingest(CORPORA[name].load([BAD / file]))
    assert snapshot(store) == before
    assert set(store.stats()["corpora"]) == {other}


def test_inconsistent_bundle_is_rejected_before_any_write(store: GraphStore) -> None:
    store.ingest(sample("stac"))
    before = snapshot(store)
    corpus = CorpusRecord(id="molweni", corpus="molweni", name="broken")
    orphan = LocutionRecord(id="molweni:d:edu:0", corpus="molweni", text="hi", speaker_id="molweni:speaker:ghost")
    bundle = CorpusBundle(corpus, [orphan], origin="hand-made bundle")
    with pytest.raises(LoaderError, match=r"hand-made bundle: SPOKEN_BY edge .* missing node 'molweni:speaker:ghost'"):
        store.ingest(bundle)
    assert snapshot(store) == before


def test_cli_reports_bad_input(tmp_path: Path) -> None:
    from api.cli.main import app

    result = CliRunner().invoke(app, ["ingest", "stac", str(BAD / "unknown_relation_label.json")])
    assert result.exit_code == 2  # the input's fault: usage-class exit code
    assert "unknown_relation_label.json" in result.output
    assert "relation 1" in result.output


# -- failures in the middle of the write --------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_dropped_connection_midway_leaves_nothing(store: GraphStore, name: str) -> None:
    store.ingest(sample("molweni" if name != "molweni" else "stac"))
    before = snapshot(store)
    bundle = sample(name)
    flaky, proxy = flaky_store(store, bundle)
    with pytest.raises(GraphStoreError, match=f"ingest of {name} .* failed, nothing kept") as err:
        flaky.ingest(bundle)
    assert isinstance(err.value.__cause__, ServiceUnavailable)
    assert proxy.writes == proxy.fail_at > 1  # some batches had committed before the drop
    assert snapshot(store) == before
    assert name not in store.stats()["corpora"]


def test_failed_cleanup_leaves_loading_marker_then_recovers(store: GraphStore) -> None:
    store.ingest(sample("stac"))
    other = snapshot(store)["corpora"]["stac"]
    bundle = sample("molweni")
    flaky, proxy = flaky_store(store, bundle, keep_failing=True)
    with pytest.raises(GraphStoreError):
        flaky.ingest(bundle)
    assert proxy.down
    entry = corpus_entry(store, "molweni")
    assert entry is not None and entry["status"] == "loading"
    assert sum(entry["labels"].values()) > 0  # leftovers of the committed batches
    # A normal ingest with the real driver removes the leftovers and loads exactly the clean data.
    store.ingest(bundle)
    entry = corpus_entry(store, "molweni")
    assert entry is not None and entry["status"] == "complete"
    want = expected(bundle)
    assert (entry["labels"], entry["relationships"]) == (want["labels"], want["relationships"])
    assert snapshot(store)["corpora"]["stac"] == other


def test_recover_removes_a_first_load_completely(store: GraphStore) -> None:
    bundle = sample("qt30")
    flaky, _ = flaky_store(store, bundle, keep_failing=True)
    with pytest.raises(GraphStoreError):
        flaky.ingest(bundle)
    assert corpus_entry(store, "qt30") is not None
    assert store.recover("qt30") is True
    # The marker was created by the interrupted run, so nothing of the corpus may remain.
    assert store.stats()["corpora"] == {}
    assert store.recover("qt30") is False


@pytest.mark.parametrize("keep_failing", [False, True])
def test_failed_reingest_keeps_previous_complete_corpus(store: GraphStore, keep_failing: bool) -> None:
    bundle = sample("molweni")
    store.ingest(bundle)
    before = snapshot(store)
    previous = marker(store, "molweni")
    assert previous is not None
    flaky, _ = flaky_store(store, bundle, keep_failing=keep_failing)
    with pytest.raises(GraphStoreError):
        flaky.ingest(bundle)
    if keep_failing:
        assert corpus_entry(store, "molweni")["status"] == "loading"  # type: ignore[index]
        assert store.recover("molweni") is True
    assert snapshot(store) == before
    after = marker(store, "molweni")
    assert after is not None and after["status"] == "complete"
    assert json.loads(after["counts"]) == json.loads(previous["counts"]) == bundle.counts()


def test_delete_corpus_removes_only_that_corpus(store: GraphStore) -> None:
    store.ingest(sample("molweni"))
    store.ingest(sample("stac"))
    stac_before = corpus_entry(store, "stac")
    store.delete_corpus("molweni")
    assert corpus_entry(store, "molweni") is None
    assert corpus_entry(store, "stac") == stac_before
