"""``argweb mine`` against the real Neo4j: dry run, write, idempotence, delete, refusals, the CLI, and a
Molweni dialogue of ``../shared/corpora`` turned into a plain transcript."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from api.cli.mine import print_summary
from api.services import corpora, mine, semantic
from api.services.graph import Graph
from api.settings import Settings
from gnn.relations.mining import MiningSummary
from graphstore.store import GraphStore
from ontology.errors import ApiError, LoaderError
from ontology.formats.registry import CORPORA
from tests.conftest import DATA, PASSWORD, SAMPLES, graph_snapshot, shared_corpora
from tests.integration.cli_support import run_argweb
from tests.integration.test_predictions import _gold_fingerprint

DEBATE = DATA / "mine" / "debate.txt"
ARGUMENT = ("Support", "Attack", "Rephrase")


def _count(store: GraphStore, query: str, **params: Any) -> int:
    return int(store.run(query, **params)[0]["n"])


def _predicted(store: GraphStore, dialogue: str) -> list[dict[str, Any]]:
    return store.run(
        "MATCH (a)-[:AIF_EDGE]->(r:Relation {origin: 'predicted'})-[:AIF_EDGE]->(b) "
        "WHERE a.id STARTS WITH $d + ':' "
        "RETURN r.id AS id, labels(r) AS labels, r.model AS model, r.model_version AS version, r.score AS score, "
        "r.run_id AS run, r.sense AS sense, a.id AS source, b.id AS target ORDER BY id",
        d=dialogue,
    )


@pytest.fixture
def graph(store: GraphStore, driver: Driver, neo4j_settings: Settings, tmp_path: Path) -> Graph:
    spec = CORPORA["qt30"]
    store.ingest(spec.load(spec.find(SAMPLES)))
    graph = Graph(neo4j_settings.with_overrides(cache_dir=tmp_path / "cache"), driver=driver)
    semantic.embed_graph(graph, graph.settings, corpus="qt30")
    return graph


def test_mine_dry_run_write_rerun_delete(graph: Graph, store: GraphStore) -> None:
    gold_before = _gold_fingerprint(store)
    dry: dict[str, Any] = mine.mine_file(graph, DEBATE).as_dict()
    counts = dry["counts"]
    assert dry["written"] is False and dry["corpus"] == "mined"
    assert counts["utterances"] == 11 and counts["speakers"] == 4
    # Every utterance but the first is attached to an earlier one by the parser.
    attached = {link["target_index"] for link in dry["discourse_links"]}
    assert attached == set(range(1, 11)) and counts["discourse_links"] == len(dry["discourse_links"])
    assert all(link["source_index"] < link["target_index"] for link in dry["discourse_links"])
    assert counts["support"] + counts["attack"] + counts["rephrase"] == len(dry["argument_relations"]) > 0
    for kind in ("support", "attack"):
        mine_kind = [r for r in dry["argument_relations"] if r["label"] == kind]
        best = dry["strongest"][kind]
        assert best == (max(mine_kind, key=lambda r: r["score"]) if mine_kind else None)
    assert [r["task"] for r in dry["runs"]] == ["discourse", "relations"]
    # Every proposition has its nearest propositions elsewhere: QT30 ones, best first.
    assert dry["nearest_note"] is None and len(dry["nearest"]) == 11
    for row in dry["nearest"]:
        scores = [h["score"] for h in row["hits"]]
        assert len(scores) == 3 and scores == sorted(scores, reverse=True)
        assert {h["corpus"] for h in row["hits"]} == {"qt30"} and all(h["id"].startswith("qt30:") for h in row["hits"])
    assert _gold_fingerprint(store) == gold_before
    assert _count(store, "MATCH (n:Node {corpus: 'mined'}) RETURN count(n) AS n") == 0

    done: dict[str, Any] = mine.mine_file(graph, DEBATE, write=True).as_dict()
    did = done["dialogue_id"]
    assert {k: v for k, v in done.items() if k != "written"} == {k: v for k, v in dry.items() if k != "written"}
    assert _count(store, "MATCH (d:Dialogue {id: $d, corpus: 'mined'}) RETURN count(d) AS n", d=did) == 1
    for label in ("Locution", "Proposition", "Illocution"):
        n = _count(store, f"MATCH (u:{label})-[:PART_OF]->(:Dialogue {{id: $d}}) RETURN count(u) AS n", d=did)
        assert n == 11, label
    ids = [u["id"] for u in done["utterances"]]
    spoken = store.run(
        "MATCH (l:Locution)-[:SPOKEN_BY]->(s:Speaker) WHERE l.id IN $ids RETURN l.id AS id, s.name AS name", ids=ids
    )
    assert {r["id"]: r["name"] for r in spoken} == {u["id"]: u["speaker"] for u in done["utterances"]}
    marker = store.run("MATCH (c:Corpus {id: 'mined'}) RETURN c.status AS status")
    assert marker == [{"status": "complete"}]

    rows = _predicted(store, did)
    runs = {r["run_id"]: r for r in done["runs"]}
    assert len(rows) == counts["discourse_links"] + len(done["argument_relations"])
    assert {r["run"] for r in rows} == set(runs)
    for r in rows:
        run = runs[r["run"]]
        assert (r["model"], r["version"]) == (run["model"], run["model_version"]) and 0 <= r["score"] <= 1
        if "DiscourseRelation" in r["labels"]:
            assert run["task"] == "discourse" and r["sense"] and ":L:" in r["source"] and ":L:" in r["target"]
        else:
            assert run["task"] == "relations" and ":I:" in r["source"] and ":I:" in r["target"]
            assert any(k in r["labels"] for k in ARGUMENT)
    # The transcript's own structure is gold; nothing gold outside it changed.
    assert _count(store, "MATCH (r:Relation {corpus: 'mined', origin: 'gold'}) RETURN count(r) AS n") == 11

    embedded = store.run("MATCH (p:Proposition {corpus: 'mined'}) WHERE p.embedding IS NOT NULL RETURN count(p) AS n")
    assert embedded == [{"n": 11}]
    # The corpus marker's counts are recounted by every load (now with the predictions); every other
    # node, property and relationship stays as it was.
    snapshot = [n for n in graph_snapshot(store, "mined") if n["id"] != "mined"]
    again: dict[str, Any] = mine.mine_file(graph, DEBATE, write=True).as_dict()
    assert again["runs"] == done["runs"]
    assert [n for n in graph_snapshot(store, "mined") if n["id"] != "mined"] == snapshot
    assert _predicted(store, did) == rows

    corpora.delete_corpus(graph, "mined")
    assert _count(store, "MATCH (n:Node {corpus: 'mined'}) RETURN count(n) AS n") == 0
    assert _predicted(store, did) == []
    assert _gold_fingerprint(store) == gold_before


def test_mine_refusals_write_nothing(graph: Graph, store: GraphStore, tmp_path: Path) -> None:
    before = _count(store, "MATCH (n) RETURN count(n) AS n")
    with pytest.raises(ApiError, match="gold annotation"):
        mine.mine_file(graph, DEBATE, corpus="molweni", write=True)
    with pytest.raises(LoaderError, match=r"bad-latin1\.txt: line 2: not UTF-8"):
        mine.mine_file(graph, DATA / "mine" / "bad-latin1.txt", write=True)
    with pytest.raises(ApiError, match="k must lie"):
        mine.mine_file(graph, DEBATE, k=0, write=True)
    assert _count(store, "MATCH (n) RETURN count(n) AS n") == before


def _flat(text: str) -> str:
    """Console output with its line wrapping undone."""
    return " ".join(text.split())


def _cli_env(graph: Graph) -> dict[str, str]:
    from tests.integration.cli_support import cli_env

    uri = graph.driver().get_server_info().address
    return cli_env(
        graph.settings.data_dir,
        graph.settings.neo4j_port,
        PASSWORD,
        ARGWEB_NEO4J_URI=f"bolt://{uri[0]}:{uri[1]}",
        ARGWEB_CACHE_DIR=str(graph.settings.cache_dir),
    )


def test_cli_mine_json_and_exit_codes(graph: Graph, store: GraphStore, capsys: pytest.CaptureFixture[str]) -> None:
    env = _cli_env(graph)
    bad = run_argweb(env, "mine", str(DATA / "mine" / "bad-nospeaker.txt"), "--write")
    assert bad.returncode == 2 and "bad-nospeaker.txt: line 1: text before the first speaker" in _flat(bad.stderr)
    gold = run_argweb(env, "mine", str(DEBATE), "--corpus", "stac", "--write")
    assert gold.returncode == 2 and "gold annotation" in _flat(gold.stderr)
    assert _count(store, "MATCH (n:Node) WHERE n.corpus IN ['mined', 'stac'] RETURN count(n) AS n") == 0
    done = run_argweb(env, "mine", str(DEBATE), "--corpus", "debates", "--write", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["written"] is True and summary["corpus"] == "debates" and summary["counts"]["utterances"] == 11
    assert _count(store, "MATCH (l:Locution {corpus: 'debates'}) RETURN count(l) AS n") == 11
    print_summary(replace(MiningSummary.from_dict(summary), written=False))
    table = capsys.readouterr().out
    assert "(dry run, nothing written): 11 utterances by 4 speakers" in _flat(table)
    assert "predicted links" in table and "strongest support" in table


@pytest.mark.corpora
def test_mine_a_molweni_dialogue_as_plain_text(graph: Graph, store: GraphStore, tmp_path: Path) -> None:
    root = shared_corpora()
    if root is None:
        pytest.skip("../shared/corpora is absent")
    dialogues = json.loads((root / "molweni" / "DP" / "dev.json").read_text(encoding="utf-8"))
    dialogue = next(d for d in dialogues if len(d["edus"]) >= 8)
    transcript = tmp_path / "molweni-dev.txt"
    transcript.write_text("".join(f"{e['speaker']}: {e['text']}\n" for e in dialogue["edus"]), encoding="utf-8")
    summary: dict[str, Any] = mine.mine_file(graph, transcript, write=True).as_dict()
    units = summary["utterances"]
    # Segmentation only splits EDUs: every word is kept, in order, with its speaker.
    assert " ".join(u["text"] for u in units).split() == " ".join(e["text"] for e in dialogue["edus"]).split()
    assert len(units) >= len(dialogue["edus"])
    assert {u["speaker"] for u in units} == {e["speaker"] for e in dialogue["edus"]}
    did = summary["dialogue_id"]
    n = _count(store, "MATCH (l:Locution)-[:PART_OF]->(:Dialogue {id: $d}) RETURN count(l) AS n", d=did)
    assert n == len(units)
    assert len(_predicted(store, did)) == summary["counts"]["discourse_links"] + len(summary["argument_relations"])
    assert summary["counts"]["discourse_links"] >= len(units) - 1
