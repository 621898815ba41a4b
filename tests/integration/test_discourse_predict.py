"""``predict discourse`` against the real Neo4j: dialogues read from the graph (the ``dialogues`` reader of
graphstore.scopes), predicted edges written through the one prediction job (predict_scope), gold untouched;
the run ids are those the discourse service gave before the task moved onto the contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neo4j import Driver

from api.services import discourse
from api.services.graph import Graph
from api.services.predictions import predict_scope
from api.settings import Settings
from gnn.discourse.data import dialogues_from_bundle
from gnn.registry import resolve_model
from graphstore import cypher
from graphstore.store import GraphStore
from ontology.formats.dialogue_json import load_dialogue_json
from ontology.formats.registry import CORPORA
from ontology.records import content_run_id
from tests.conftest import SAMPLES
from tests.integration.test_predictions import _gold_fingerprint

pytestmark = pytest.mark.integration


def _old_run_id(store: GraphStore, scheme: str | None, corpus: str | None, dialogue: str | None, ids: list[str]) -> str:
    """The run id as the discourse service computed it before the contract (its formula, written out).

    The shipped parser was versioned 20261201-full-s13 then; renumbered 1 with the same weights, it
    writes its runs under that label still.
    """
    resolved = resolve_model("discourse")
    parts = (resolved.card.model, "20261201-full-s13", resolved.path.resolve(), scheme, corpus, dialogue, *ids)
    return content_run_id("discourse", "discourse", *parts)


def test_predict_discourse_dry_run_then_write(
    store: GraphStore, driver: Driver, neo4j_settings: Settings, tmp_path: Path
) -> None:
    for name in ("stac", "molweni"):
        spec = CORPORA[name]
        store.ingest(spec.load(spec.find(SAMPLES)))
    before = _gold_fingerprint(store)
    settings = neo4j_settings.with_overrides(cache_dir=tmp_path / "cache")
    graph = Graph(settings, driver=driver)
    ids = [str(r["id"]) for r in store.read(cypher.corpus_discourses(), corpus="stac")]
    dry = predict_scope(graph, "discourse", corpus="stac")
    assert dry.written == 0 and dry.dialogues == 8 and dry.predicted
    assert dry.run_id == _old_run_id(store, None, "stac", None, ids)
    spelled = predict_scope(graph, "discourse", corpus="stac", options={"scheme": "stac"})
    assert spelled.run_id == _old_run_id(store, "stac", "stac", None, ids) != dry.run_id
    # The graph read gives the same dialogues as the file: the same relations as `parse`.
    stac_file = SAMPLES / "stac" / "train.json"
    parsed = discourse.parse(settings, stac_file, tmp_path / "pred.json")
    assert dry.predicted == parsed.relations and dry.gold == 41
    assert dry.scores_against_gold is not None and dry.scores_against_gold["link_f1"] > 50
    assert store.run("MATCH (r:DiscourseRelation {origin: 'predicted'}) RETURN count(r) AS n")[0]["n"] == 0
    done = predict_scope(graph, "discourse", corpus="stac", write=True)
    assert done.run_id == dry.run_id and done.written == dry.predicted
    rows = store.run(
        "MATCH (a)-[:AIF_EDGE]->(r:DiscourseRelation {origin: 'predicted'})-[:AIF_EDGE]->(b) "
        "RETURN r.model AS model, r.model_version AS version, r.score AS score, r.run_id AS run, "
        "r.sense AS sense, r.scheme_label AS label, a.corpus AS corpus, a.id AS source, b.id AS target"
    )
    assert len(rows) == done.predicted
    assert {(r["model"], r["run"], r["corpus"]) for r in rows} == {("argweb-discourse-rgcn", done.run_id, "stac")}
    assert all(0 <= r["score"] <= 1 and r["sense"] for r in rows)
    # Edge for edge, what the file parse wrote (EDU positions mapped to the graph ids of the same file).
    file_dialogues = dialogues_from_bundle(load_dialogue_json([stac_file], "stac"), domain="stac")
    written = json.loads((tmp_path / "pred.json").read_text(encoding="utf-8"))
    expected = set()
    for d, raw in zip(file_dialogues, written, strict=True):
        assert d.unit_ids is not None
        expected |= {(d.unit_ids[r["x"]], d.unit_ids[r["y"]], r["type"]) for r in raw["relations"]}
    assert {(r["source"], r["target"], r["label"]) for r in rows} == expected
    assert _gold_fingerprint(store) == before
    again = predict_scope(graph, "discourse", corpus="stac", write=True)
    assert again.already_present and again.written == 0 and again.run_id == done.run_id
    one = predict_scope(graph, "discourse", dialogue="stac:pilot01")
    assert one.dialogues == 1 and one.run_id == _old_run_id(store, None, None, "stac:pilot01", ["stac:pilot01"])
