"""``predict paraphrase --corpus contextdep``: predicted rephrase edges written beside the gold ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from neo4j import Driver

from api.services import paraphrase as service
from api.services.graph import Graph
from api.settings import Settings
from graphstore.store import GraphStore
from ontology.errors import NotFoundError
from ontology.formats.registry import CORPORA
from tests.conftest import SAMPLES

pytestmark = pytest.mark.integration
MODEL = Path(__file__).resolve().parent.parent.parent / "gnn" / "models" / "paraphrase"


def _gold(store: GraphStore) -> list[dict]:
    return store.run(
        "MATCH (a)-[:AIF_EDGE]->(r:Relation)-[:AIF_EDGE]->(b) WHERE coalesce(r.origin, 'gold') = 'gold' "
        "RETURN a.id AS a, labels(r) AS labels, b.id AS b ORDER BY a"
    )


def test_write_rephrase_predictions(
    store: GraphStore, driver: Driver, neo4j_settings: Settings, tmp_path: Path
) -> None:
    spec = CORPORA["contextdep"]
    store.ingest(spec.load(spec.find(SAMPLES)))
    gold_before = _gold(store)
    with Graph(neo4j_settings, driver=driver) as graph:
        dry = service.predict_graph(graph, "contextdep", MODEL, write=False, cache_dir=tmp_path)
        assert dry["pairs"] == 10 and dry["written"] == 0
        assert store.run("MATCH (r:Relation {origin: 'predicted'}) RETURN count(r) AS n")[0]["n"] == 0
        done = service.predict_graph(graph, "contextdep", MODEL, write=True, cache_dir=tmp_path)
    assert done["written"] == done["paraphrases"] > 0
    rows = store.run(
        "MATCH (g:Locution)-[:AIF_EDGE]->(r:Rephrase {origin: 'predicted'})-[:AIF_EDGE]->(h:Locution) "
        "RETURN g.id AS g, h.id AS h, r.model AS model, r.model_version AS version, r.score AS score, "
        "r.run_id AS run, r.source_tokens AS guest_tokens, r.target_tokens AS host_tokens, "
        "size(g.tokens) AS guest_size, size(h.tokens) AS host_size ORDER BY g"
    )
    assert len(rows) == done["paraphrases"]
    for row in rows:
        assert row["g"].endswith(":guest") and row["h"].endswith(":host")
        # A predicted paraphrase highlights at least one token on each side (its score is the
        # weaker side's strongest token), and only tokens of that side.
        for side in ("guest", "host"):
            tokens = row[f"{side}_tokens"]
            assert tokens and all(0 <= t < row[f"{side}_size"] for t in tokens) and tokens == sorted(tokens)
        assert row["model"] == "contextdep-highlighter" and row["version"] == "2"
        assert 0.5 <= row["score"] <= 1.0 and row["run"] == done["run_id"]
    assert _gold(store) == gold_before


def test_unknown_corpus(store: GraphStore, driver: Driver, neo4j_settings: Settings) -> None:
    with Graph(neo4j_settings, driver=driver) as graph, pytest.raises(NotFoundError):
        service.predict_graph(graph, "nope", MODEL)
