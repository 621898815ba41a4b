"""Prediction runs against the real Neo4j: written beside gold, read back in Cypher and SPARQL, idempotent,
all-or-nothing, deleted by model and with their corpus."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphstore import cypher
from graphstore.export import GraphReader
from graphstore.predictions import PredictionStore
from graphstore.store import GraphStore
from ontology.errors import GraphStoreError, PredictionError
from ontology.formats.registry import CORPORA
from ontology.labels import RelationLabel
from ontology.rdf import write_export
from ontology.records import PredictedRelation, PredictionRun, scheme_term
from ontology.sparql import SparqlStore
from tests.conftest import SAMPLES

ARG_RUN = PredictionRun(
    run_id="arg-run-1",
    model="rgcn-link",
    model_version="0.3.1",
    task="relations",
    parameters={"threshold": 0.5, "layers": [64, 64]},
    created_at="2026-01-02T03:04:05Z",
)
DISC_RUN = PredictionRun(run_id="disc-run-1", model="deep-seq", model_version="2", task="discourse")


def _load(store: GraphStore, *names: str) -> None:
    for name in names:
        spec = CORPORA[name]
        store.ingest(spec.load(spec.find(SAMPLES)))


def _ids(store: GraphStore, query: str, **params: Any) -> list[str]:
    return [row["id"] for row in store.run(query, **params)]


def _gold_fingerprint(store: GraphStore) -> tuple[int, int, str]:
    """Count and content hash of every gold node and every relationship between gold nodes."""
    nodes = store.run(
        "MATCH (n:Node) WHERE NOT n:PredictionRun AND coalesce(n.origin, 'gold') = 'gold' "
        "RETURN n.id AS id, labels(n) AS labels, properties(n) AS props ORDER BY id"
    )
    edges = store.run(
        "MATCH (a:Node)-[e]->(b:Node) WHERE coalesce(a.origin, 'gold') = 'gold' "
        "AND coalesce(b.origin, 'gold') = 'gold' AND NOT a:PredictionRun "
        "RETURN a.id AS a, type(e) AS t, b.id AS b, properties(e) AS p ORDER BY a, t, b"
    )
    text = json.dumps([nodes, edges], sort_keys=True, default=str)
    return len(nodes), len(edges), hashlib.sha256(text.encode()).hexdigest()


def _argument_predictions(store: GraphStore) -> list[PredictedRelation]:
    props = _ids(store, "MATCH (p:Proposition {corpus: 'qt30'}) RETURN p.id AS id ORDER BY id LIMIT 4")
    assert len(props) == 4
    return [
        PredictedRelation(source=props[1], target=props[0], label=RelationLabel.SUPPORT, score=0.91),
        PredictedRelation(source=props[2], target=props[0], label=RelationLabel.SUPPORT, score=0.62),
        PredictedRelation(source=props[3], target=props[1], label=RelationLabel.ATTACK, score=0.85, scheme_label="CA"),
        PredictedRelation(source=props[3], target=props[2], label=RelationLabel.NONE, score=0.7, scheme_label="none"),
    ]


def _discourse_predictions(store: GraphStore) -> list[PredictedRelation]:
    dialogue = store.run(
        "MATCH (l:Locution {corpus: 'molweni'})-[:PART_OF]->(d:Dialogue) WITH d, collect(l.id) AS ids "
        "WHERE size(ids) >= 3 RETURN d.id AS id, ids ORDER BY id LIMIT 1"
    )[0]
    edus = sorted(dialogue["ids"])
    return [
        PredictedRelation(source=edus[0], target=edus[1], label=RelationLabel.QuestionAnswerPair, score=0.88),
        PredictedRelation(source=edus[1], target=edus[2], label=RelationLabel.Elaboration, score=0.55),
    ]


def test_prediction_run_beside_gold_in_cypher_and_sparql(store: GraphStore, tmp_path: Path) -> None:
    _load(store, "qt30", "molweni")
    gold_before = _gold_fingerprint(store)
    stats_before = store.stats()
    preds = PredictionStore(store.driver, batch_size=3)

    report = preds.write(ARG_RUN, _argument_predictions(store))
    assert (report.relations, report.written, report.already_complete) == (4, 4, False)
    assert report.counts == {"Attack": 1, "NonRelation": 1, "Support": 2}
    disc = preds.write(DISC_RUN, _discourse_predictions(store))
    assert disc.counts == {"DiscourseRelation:Elaboration": 1, "DiscourseRelation:QuestionAnswerPair": 1}

    # Cypher: reified relation nodes of the ontology classes, provenance on every one.
    rows = store.run(
        "MATCH (s:Node)-[:AIF_EDGE]->(r:Relation)-[:AIF_EDGE]->(t:Node) WHERE r.origin = 'predicted' "
        "RETURN r.id AS id, labels(r) AS labels, properties(r) AS p, s.id AS s, t.id AS t ORDER BY id"
    )
    assert [r["id"] for r in rows] == [
        *(f"pred:arg-run-1:{i}" for i in range(4)),
        "pred:disc-run-1:0",
        "pred:disc-run-1:1",
    ]
    support = rows[0]
    assert set(support["labels"]) == {"Support", "SchemeNode", "Relation", "Node"}
    assert {
        k: support["p"][k] for k in ("origin", "model", "model_version", "score", "run_id", "created_at", "corpus")
    } == {
        "origin": "predicted",
        "model": "rgcn-link",
        "model_version": "0.3.1",
        "score": 0.91,
        "run_id": "arg-run-1",
        "created_at": "2026-01-02T03:04:05Z",
        "corpus": "qt30",
    }
    assert "confidence" not in support["p"]
    # Named in the corpus' scheme, a prediction carries the scheme class a gold relation of that label has.
    gold_ca = store.run("MATCH (r:Relation {corpus: 'qt30', origin: 'gold', aif_type: 'CA'}) RETURN r LIMIT 1")
    assert rows[2]["p"]["scheme_class"] == gold_ca[0]["r"]["scheme_class"] == scheme_term("qt30", "CA").iri
    assert "scheme_class" not in support["p"] and "scheme_class" not in rows[3]["p"]
    assert set(rows[3]["labels"]) == {"NonRelation", "Relation", "Node"} and rows[3]["p"]["scheme_label"] == "none"
    qap = rows[4]
    assert set(qap["labels"]) == {"DiscourseRelation", "Transition", "SchemeNode", "Relation", "Node"}
    assert (qap["p"]["sense"], qap["p"]["corpus"]) == ("QuestionAnswerPair", "molweni")
    # Both ends lie in one dialogue, so the relation is PART_OF it like a gold one.
    assert _ids(store, "MATCH (:Relation {id: 'pred:disc-run-1:0'})-[:PART_OF]->(d:Dialogue) RETURN d.id AS id")
    # Gold untouched, and still told apart: gold nodes, edges and properties are byte for byte the same.
    assert _gold_fingerprint(store) == gold_before
    # `stats` counts the corpora's own content; predictions show only when asked for.
    assert store.stats() == stats_before
    with_predicted = store.stats(include_predicted=True)
    assert with_predicted["corpora"]["(none)"]["labels"] == {"Node": 2, "PredictionRun": 2}
    qt30_relations = with_predicted["corpora"]["qt30"]["labels"]["Relation"]
    assert qt30_relations == stats_before["corpora"]["qt30"]["labels"]["Relation"] + 4
    molweni_edges = with_predicted["corpora"]["molweni"]["relationships"]["AIF_EDGE"]
    assert molweni_edges == stats_before["corpora"]["molweni"]["relationships"]["AIF_EDGE"] + 4
    runs = {r.run.run_id: r for r in preds.runs()}
    assert set(runs) == {"arg-run-1", "disc-run-1"}
    assert runs["arg-run-1"].run == ARG_RUN and runs["arg-run-1"].status == "complete"
    assert runs["arg-run-1"].relations == 4 and runs["arg-run-1"].counts["relations"] == 4

    # SPARQL on the RDF export: origin predicted with score, model, version and run id.
    reader = GraphReader(store.driver, page_size=200)
    out = tmp_path / "graph.nt"
    write_export(out, reader.nodes(), reader.relationships())
    sparql = SparqlStore()
    sparql.add_file(out)
    _, found = sparql.select(
        """PREFIX aw: <https://w3id.org/argweb/ontology#>
        SELECT ?id ?score ?model ?version ?run ?src ?dst WHERE {
          ?r a aw:Relation ; aw:origin "predicted" ; aw:id ?id ; aw:score ?score ; aw:model ?model ;
             aw:modelVersion ?version ; aw:runId ?run ; aw:premise/aw:id ?src ; aw:conclusion/aw:id ?dst .
        } ORDER BY ?id"""
    )
    assert [(r["id"], r["score"], r["model"], r["version"], r["run"]) for r in found[:2]] == [
        ("pred:arg-run-1:0", 0.91, "rgcn-link", "0.3.1", "arg-run-1"),
        ("pred:arg-run-1:1", 0.62, "rgcn-link", "0.3.1", "arg-run-1"),
    ]
    assert [(r["src"], r["dst"]) for r in found] == [(r["s"], r["t"]) for r in rows]
    _, gold = sparql.select(
        """PREFIX aw: <https://w3id.org/argweb/ontology#>
        SELECT (COUNT(?r) AS ?n) WHERE { ?r a aw:Relation ; aw:origin "gold" }"""
    )
    gold_cypher = store.run("MATCH (r:Relation) WHERE r.origin = 'gold' RETURN count(r) AS n")[0]["n"]
    assert gold[0]["n"] == gold_cypher > 0
    _, run_rows = sparql.select(
        """PREFIX aw: <https://w3id.org/argweb/ontology#>
        SELECT ?task ?params WHERE {
          ?p a aw:PredictionRun ; aw:runId "arg-run-1" ; aw:task ?task ; aw:parameters ?params
        }"""
    )
    assert [(r["task"], json.loads(r["params"])) for r in run_rows] == [("relations", ARG_RUN.parameters)]

    # Re-running the same run writes nothing new.
    nodes_before = store.run("MATCH (n) RETURN count(n) AS n")[0]["n"]
    again = preds.write(ARG_RUN.model_copy(update={"created_at": "2026-02-02T00:00:00Z"}), _argument_predictions(store))
    assert (again.written, again.already_complete, again.relations) == (0, True, 4)
    assert store.run("MATCH (n) RETURN count(n) AS n")[0]["n"] == nodes_before
    # The same run id with other content is refused.
    changed = _argument_predictions(store)
    changed[0] = changed[0].model_copy(update={"score": 0.1})
    with pytest.raises(PredictionError, match="run arg-run-1 is already stored with other relations"):
        preds.write(ARG_RUN, changed)

    # Deleting the model's predictions leaves gold exactly as it was.
    assert preds.delete("rgcn-link", version="9.9") == 0
    assert preds.delete("rgcn-link", run="no-such-run") == 0
    assert [r.run.run_id for r in preds.runs("rgcn-link")] == ["arg-run-1"]
    assert preds.delete("rgcn-link") == 4
    assert [r.run.run_id for r in preds.runs()] == ["disc-run-1"]
    assert preds.delete("deep-seq", version="2") == 2
    assert preds.runs() == []
    assert _gold_fingerprint(store) == gold_before
    assert store.stats() == stats_before


def test_bad_predictions_write_nothing(store: GraphStore) -> None:
    _load(store, "molweni")
    preds = PredictionStore(store.driver)
    edus = _discourse_predictions(store)
    before = store.run("MATCH (n) RETURN count(n) AS n")[0]["n"]
    missing = [
        *edus,
        PredictedRelation(source=edus[0].source, target="molweni:nope", label=RelationLabel.Result, score=0.5),
    ]
    with pytest.raises(PredictionError, match=r"node 'molweni:nope' \(relation #2\) does not exist"):
        preds.write(DISC_RUN, missing)
    dialogue = _ids(store, "MATCH (d:Dialogue) RETURN d.id AS id LIMIT 1")[0]
    not_a_unit = [PredictedRelation(source=edus[0].source, target=dialogue, label=RelationLabel.Result, score=0.5)]
    with pytest.raises(PredictionError, match=rf"node '{dialogue}' is a .*Dialogue.* node"):
        preds.write(DISC_RUN, not_a_unit)
    loop = [PredictedRelation(source=edus[0].source, target=edus[0].source, label=RelationLabel.Result, score=0.5)]
    with pytest.raises(PredictionError, match=r"links .* to itself"):
        preds.write(DISC_RUN, loop)
    with pytest.raises(PredictionError, match=r"relation #2 repeats #0"):
        preds.write(DISC_RUN, [*edus, edus[0].model_copy(update={"score": 0.2})])
    assert store.run("MATCH (n) RETURN count(n) AS n")[0]["n"] == before
    assert preds.runs() == []


def test_a_failed_run_leaves_nothing_and_an_interrupted_one_is_redone(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _load(store, "qt30")
    before = _gold_fingerprint(store)
    preds = PredictionStore(store.driver, batch_size=1)
    rows = _argument_predictions(store)
    committed: list[int] = []

    def crash(n: int) -> None:
        committed.append(n)
        if len(committed) == 2:
            raise ConnectionResetError("connection dropped")

    with pytest.raises(GraphStoreError, match="prediction run arg-run-1 failed, nothing kept: connection dropped"):
        preds.write(ARG_RUN, rows, progress=crash)
    assert committed == [1, 1]
    assert store.run("MATCH (n:Node) WHERE n.id STARTS WITH 'pred:' RETURN count(n) AS n")[0]["n"] == 0
    assert _gold_fingerprint(store) == before

    # The clean-up fails too (database gone): the run stays "loading" with what was committed...
    def no_cleanup(batch: str) -> None:
        raise GraphStoreError("database unavailable")

    committed.clear()
    monkeypatch.setattr(preds, "_delete_batch", no_cleanup)
    with pytest.raises(GraphStoreError):
        preds.write(ARG_RUN, rows, progress=crash)
    monkeypatch.undo()
    (stored,) = preds.runs()
    assert (stored.status, stored.relations) == ("loading", 2)
    # ...and writing the run again removes the leftovers and writes it whole, without duplicates.
    report = preds.write(ARG_RUN, rows)
    assert (report.written, report.already_complete) == (4, False)
    (stored,) = preds.runs()
    assert (stored.status, stored.relations) == ("complete", 4)
    ids = _ids(store, "MATCH (r:Relation {run_id: 'arg-run-1'}) RETURN r.id AS id ORDER BY id")
    assert ids == [f"pred:arg-run-1:{i}" for i in range(4)]
    assert store.run("MATCH (:Relation {run_id: 'arg-run-1'})-[e:AIF_EDGE]-() RETURN count(e) AS n")[0]["n"] == 8


def test_deleting_a_corpus_removes_the_predictions_that_touch_it(store: GraphStore) -> None:
    _load(store, "qt30", "molweni")
    preds = PredictionStore(store.driver)
    preds.write(ARG_RUN, _argument_predictions(store))
    disc = _discourse_predictions(store)
    # One relation across corpora: filed under the target's corpus (qt30), removed with either.
    qt30_prop = _ids(store, "MATCH (p:Proposition {corpus: 'qt30'}) RETURN p.id AS id ORDER BY id LIMIT 1")[0]
    cross = PredictedRelation(source=disc[0].source, target=qt30_prop, label=RelationLabel.REPHRASE, score=0.6)
    preds.write(DISC_RUN, [*disc, cross])
    assert store.run("MATCH (r:Relation {id: 'pred:disc-run-1:2'}) RETURN r.corpus AS c")[0]["c"] == "qt30"
    store.delete_corpus("molweni")
    assert _ids(store, "MATCH (r:Relation {run_id: 'disc-run-1'}) RETURN r.id AS id") == []
    assert [r.run.run_id for r in preds.runs()] == ["arg-run-1"]
    (arg,) = preds.runs()
    assert arg.relations == 4
    store.delete_corpus("qt30")
    assert preds.runs() == []
    assert store.run(cypher.label_counts()) == []


def test_cli_lists_and_deletes_predictions(cli_env: dict[str, str], store: GraphStore) -> None:
    from api.cli.main import app

    _load(store, "qt30")
    preds = PredictionStore(store.driver)
    preds.write(ARG_RUN, _argument_predictions(store))
    runner = CliRunner()
    result = runner.invoke(app, ["predictions", "runs", "--json"], env=cli_env)
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)
    assert (row["run_id"], row["model"], row["status"], row["relations"]) == ("arg-run-1", "rgcn-link", "complete", 4)
    result = runner.invoke(app, ["delete", "predictions"], env=cli_env)
    assert result.exit_code == 2 and "needs --model" in " ".join(result.output.split())
    result = runner.invoke(app, ["delete", "qt30", "--model", "rgcn-link"], env=cli_env)
    assert result.exit_code == 2 and "go with 'argweb delete predictions'" in " ".join(result.output.split())
    result = runner.invoke(app, ["delete", "qt30", "--run", "arg-run-1"], env=cli_env)
    assert result.exit_code == 2 and "go with 'argweb delete predictions'" in " ".join(result.output.split())
    # A second run of the same model version: --run deletes one run and leaves the other.
    second = ARG_RUN.model_copy(update={"run_id": "arg-run-2"})
    preds.write(second, _argument_predictions(store)[:2])
    args = ["delete", "predictions", "--model", "rgcn-link", "--version", "0.3.1", "--run", "arg-run-2"]
    result = runner.invoke(app, args, env=cli_env)
    assert result.exit_code == 0, result.output
    assert "deleted 2 predicted relations of rgcn-link 0.3.1 (run arg-run-2)" in result.output
    assert [(r.run.run_id, r.relations) for r in preds.runs()] == [("arg-run-1", 4)]
    result = runner.invoke(app, ["delete", "predictions", "--model", "rgcn-link", "--version", "0.3.1"], env=cli_env)
    assert result.exit_code == 0, result.output
    assert "deleted 4 predicted relations of rgcn-link 0.3.1" in result.output
    assert preds.runs() == []
    assert store.run("MATCH (r:Relation) WHERE r.origin = 'gold' RETURN count(r) AS n")[0]["n"] > 0
