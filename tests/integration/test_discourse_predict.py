"""``predict discourse`` against the real Neo4j: dialogues read from the graph, predicted edges written
through the prediction write path, gold untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from neo4j import Driver

from api.services import discourse
from api.services.graph import Graph
from api.settings import Settings
from graphstore.store import GraphStore
from ontology.formats.registry import CORPORA
from tests.conftest import SAMPLES
from tests.integration.test_predictions import _gold_fingerprint

pytestmark = pytest.mark.integration


def test_predict_discourse_dry_run_then_write(
    store: GraphStore, driver: Driver, neo4j_settings: Settings, tmp_path: Path
) -> None:
    for name in ("stac", "molweni"):
        spec = CORPORA[name]
        store.ingest(spec.load(spec.find(SAMPLES)))
    before = _gold_fingerprint(store)
    settings = neo4j_settings.with_overrides(cache_dir=tmp_path / "cache")
    graph = Graph(settings, driver=driver)
    dry = discourse.predict(graph, corpus="stac")
    assert dry["written"] is False and dry["dialogues"] == 8
    # The graph read gives the same dialogues as the file: same predictions as `parse`.
    stac_file = SAMPLES / "stac" / "train.json"
    parsed = discourse.parse(settings, stac_file, tmp_path / "pred.json")
    assert dry["predicted"] == parsed["relations"] and dry["gold"] == 41
    assert dry["scores_against_gold"]["link_f1"] > 50
    assert store.run("MATCH (r:DiscourseRelation {origin: 'predicted'}) RETURN count(r) AS n")[0]["n"] == 0
    done = discourse.predict(graph, corpus="stac", write=True)
    rows = store.run(
        "MATCH (a)-[:AIF_EDGE]->(r:DiscourseRelation {origin: 'predicted'})-[:AIF_EDGE]->(b) "
        "RETURN r.model AS model, r.model_version AS version, r.score AS score, r.run_id AS run, "
        "r.sense AS sense, a.corpus AS corpus"
    )
    assert len(rows) == done["predicted"]
    assert {(r["model"], r["run"], r["corpus"]) for r in rows} == {("argweb-discourse-rgcn", done["run_id"], "stac")}
    assert all(0 <= r["score"] <= 1 and r["sense"] for r in rows)
    assert _gold_fingerprint(store) == before
    one = discourse.predict(graph, dialogue="stac:pilot01")
    assert one["dialogues"] == 1
