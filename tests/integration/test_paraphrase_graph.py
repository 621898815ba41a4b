"""``predict paraphrase --corpus contextdep``: predicted rephrase edges written beside the gold ones, through
the one graph path (:func:`api.services.predictions.predict_scope`): one for each pair the model calls a
paraphrase, none for a pair it is not sure of, with the run id of its model, version and decision rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neo4j import Driver

from api.notebook import Argweb
from api.services.graph import Graph
from api.services.predictions import ScopeOutcome, predict_scope
from api.settings import Settings
from gnn.modelcard import read_card
from gnn.paraphrase import load_highlighter, pairs_from_file
from graphstore.store import GraphStore
from ontology.errors import NotFoundError
from ontology.formats.registry import CORPORA
from ontology.records import content_run_id, make_id, prediction_score
from tests.conftest import SAMPLES

pytestmark = pytest.mark.integration
MODEL = Path(__file__).resolve().parent.parent.parent / "gnn" / "models" / "paraphrase"
# The rows the paraphrase service (api/services/paraphrase.predict_graph) gave the sample before the port
# (model version 2, the 0.5 rule).
BEFORE = Path(__file__).resolve().parents[1] / "data" / "paraphrase" / "sample_graph_predictions.json"


def _gold(store: GraphStore) -> list[dict]:
    return store.run(
        "MATCH (a)-[:AIF_EDGE]->(r:Relation)-[:AIF_EDGE]->(b) WHERE coalesce(r.origin, 'gold') = 'gold' "
        "RETURN a.id AS a, labels(r) AS labels, b.id AS b ORDER BY a"
    )


def _run_id(corpus: str, qids: list[str]) -> str:
    """The run id's parts: as the paraphrase service gave them, the decision rule's two cuts for its 0.5."""
    card = read_card(MODEL, task="paraphrase")
    cuts = card.hyperparameters["cut"], card.hyperparameters["low"]
    return content_run_id("paraphrase", "paraphrase", card.model, card.version, MODEL.resolve(), *cuts, corpus, *qids)


def test_write_rephrase_predictions(
    store: GraphStore, driver: Driver, neo4j_settings: Settings, tmp_path: Path
) -> None:
    spec = CORPORA["contextdep"]
    store.ingest(spec.load(spec.find(SAMPLES)))
    gold_before = _gold(store)
    files = sorted((SAMPLES / "contextdep").glob("*_TOKEN-annotations.tsv"))
    qids = sorted((p.qid for f in files for p in pairs_from_file(f)), key=lambda q: make_id("contextdep", q))
    before = json.loads(BEFORE.read_text(encoding="utf-8"))
    # What the model answers on these pairs: only the pairs it calls paraphrases become relations.
    model = load_highlighter(MODEL, read_card(MODEL, task="paraphrase"))
    answers = model.predict([p for f in files for p in pairs_from_file(f)])
    called = [p for p in answers if p.paraphrase]
    assert len(called) < len(before["relations"])  # the 0.5 rule called more of them a paraphrase
    expected = sorted(
        (
            {
                "source": make_id("contextdep", p.qid, "guest"),
                "target": make_id("contextdep", p.qid, "host"),
                "score": prediction_score(p.score),
                "source_tokens": sorted(p.highlights("guest")),
                "target_tokens": sorted(p.highlights("host")),
            }
            for p in called
        ),
        key=lambda r: str(r["source"]),
    )
    cut, low = model.config.cut, model.config.low
    settings = neo4j_settings.model_copy(update={"cache_dir": tmp_path / "cache"})
    with Graph(settings, driver=driver) as graph:
        dry = predict_scope(graph, "paraphrase", corpus="contextdep", model=MODEL)
        assert dry.dialogues == before["pairs"] == 10 and dry.written == 0 and dry.predicted == len(called)
        assert dry.run_id == _run_id("contextdep", qids) and not dry.already_present
        assert dry.parameters == {"corpus": "contextdep", "threshold": cut, "low": low, "model_dir": str(MODEL)}
        assert store.run("MATCH (r:Relation {origin: 'predicted'}) RETURN count(r) AS n")[0]["n"] == 0
        done = predict_scope(graph, "paraphrase", corpus="contextdep", model=MODEL, write=True)
        again = predict_scope(graph, "paraphrase", corpus="contextdep", model=MODEL, write=True)
        one = predict_scope(graph, "paraphrase", dialogue=qids[0], model=MODEL)
    with Argweb(settings) as notebook:  # a notebook goes the same way
        noted = notebook.predict("paraphrase", "contextdep", model=MODEL)
    assert isinstance(noted, ScopeOutcome) and noted.run_id == dry.run_id and noted.already_present
    assert done.run_id == dry.run_id and done.written == done.predicted == len(called)
    assert done.by_label == ({"rephrase": done.predicted} if called else {})
    assert again.already_present and again.written == 0 and again.predicted == done.written
    assert one.dialogues == 1 and one.run_id == _run_id("contextdep", qids[:1])
    rows = store.run(
        "MATCH (g:Locution)-[:AIF_EDGE]->(r:Rephrase {origin: 'predicted'})-[:AIF_EDGE]->(h:Locution) "
        "RETURN g.id AS source, h.id AS target, r.model AS model, r.model_version AS version, r.score AS score, "
        "r.run_id AS run, r.source_tokens AS source_tokens, r.target_tokens AS target_tokens ORDER BY g.id"
    )
    # One relation per called pair: its ends, score and the highlighted tokens of each side.
    assert [{k: r[k] for k in ("source", "target", "score", "source_tokens", "target_tokens")} for r in rows] == (
        expected
    )
    for row in rows:
        assert row["source"].endswith(":guest") and row["target"].endswith(":host")
        assert row["model"] == "contextdep-highlighter" and row["version"] == "3"
        assert cut <= row["score"] <= 1.0 and row["run"] == done.run_id
    assert _gold(store) == gold_before


def test_unknown_corpus(store: GraphStore, driver: Driver, neo4j_settings: Settings) -> None:
    with Graph(neo4j_settings, driver=driver) as graph, pytest.raises(NotFoundError):
        predict_scope(graph, "paraphrase", corpus="nope", model=MODEL)
