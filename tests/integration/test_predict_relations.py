"""``argweb predict relations`` against the real Neo4j: QT30 maps and Sci-Arg papers read from the graph,
predicted argument relations written through the prediction write path beside unchanged gold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neo4j import Driver
from typer.testing import CliRunner

from api.cli.main import app
from api.services import mainjob, predictions, relations
from api.services.graph import Graph
from api.settings import Settings
from gnn.registry import shipped_model
from gnn.relations.task import GRAPH_OBJECTIVE
from graphstore.export import GraphReader
from graphstore.store import GraphStore
from ontology.errors import ApiError
from ontology.formats.registry import CORPORA
from ontology.rdf import write_export
from ontology.sparql import SparqlStore
from tests.api.test_relations_graph import _file_relations, ann_relations
from tests.conftest import SAMPLES
from tests.integration.test_predictions import _gold_fingerprint

pytestmark = pytest.mark.integration

AIF_DIR = SAMPLES / "dialam-2024" / "my_train"
SCIARG_DIR = SAMPLES / "sciarg" / "compiled_corpus"


def _load(store: GraphStore, *names: str) -> None:
    for name in names:
        spec = CORPORA[name]
        store.ingest(spec.load(spec.find(SAMPLES)))


def _invoke(env: dict[str, str], *args: str) -> tuple[int, str]:
    """Exit code and all output (progress lines too), whitespace collapsed."""
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, " ".join(result.output.split())


def _json(env: dict[str, str], *args: str) -> dict:
    """The JSON a successful command prints on stdout."""
    result = CliRunner().invoke(app, [*args, "--json"], env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _predicted(store: GraphStore, where: str = "true") -> list[dict]:
    return store.run(
        "MATCH (a:Proposition)-[:AIF_EDGE]->(r:Relation)-[:AIF_EDGE]->(b:Proposition) "
        f"WHERE r.origin = 'predicted' AND {where} "
        "OPTIONAL MATCH (r)-[:PART_OF]->(d:Discourse) "
        "RETURN a.id AS source, b.id AS target, labels(r) AS labels, r.scheme_label AS scheme, r.score AS score, "
        "r.model AS model, r.model_version AS version, r.run_id AS run, d.id AS discourse ORDER BY source, target"
    )


def test_predict_relations_writes_once_beside_gold_and_is_deleted(
    cli_env: dict[str, str], store: GraphStore, tmp_path: Path
) -> None:
    _load(store, "qt30", "sciarg", "m-arg")
    env = {**cli_env, "ARGWEB_CACHE_DIR": str(tmp_path / "cache")}  # the shipped model, not one in a user cache
    stats_before, gold_before = _json(env, "stats"), _gold_fingerprint(store)

    dry = _json(env, "predict", "relations", "--corpus", "qt30", "--dry-run")
    assert (dry["written"], dry["family"], dry["dialogues"]) == (False, "aif", 3)
    assert dry["predicted"] > 10 and dry["gold"] > 0
    assert dry["scores_against_gold"]["official_style"]["general"]["f1"] > 0
    assert _predicted(store) == []

    done = _json(env, "predict", "relations", "--corpus", "qt30", "--write")
    assert done["written"] and done["run_id"] == dry["run_id"] and done["predicted"] == dry["predicted"]
    rows = _predicted(store, "r.model = 'relation-gnn'")
    assert len(rows) == done["predicted"] and done["report"]["written"] == done["predicted"]
    assert {(r["model"], r["version"], r["run"]) for r in rows} == {
        ("relation-gnn", done["model_version"], done["run_id"])
    }
    kinds = {"RA": "Support", "CA": "Attack", "MA": "Rephrase"}
    assert all(kinds[r["scheme"]] in r["labels"] and 0 <= r["score"] <= 1 for r in rows)
    # Both ends in one map: the relation is PART_OF it, and filterable by score.
    assert all(r["discourse"] and r["source"].startswith(r["discourse"] + ":") for r in rows)
    strong = _predicted(store, "r.model = 'relation-gnn' AND r.score >= 0.5")
    assert strong == [r for r in rows if r["score"] >= 0.5] and 0 < len(strong) <= len(rows)
    # The same maps read from their files give the same relations (with the same decoding: the graph's).
    objective = GRAPH_OBJECTIVE
    relations.predict_aif(Settings(cache_dir=tmp_path / "cache"), AIF_DIR, tmp_path / "pred", objective=objective)
    local = {
        (r["source"].split(":")[1], r["source"].split(":")[2], r["target"].split(":")[2], r["scheme"]) for r in rows
    }
    assert local == _file_relations(tmp_path / "pred")

    # Gold untouched: same stats (gold counts), same gold nodes and edges.
    assert _json(env, "stats") == stats_before
    assert _gold_fingerprint(store) == gold_before

    # Writing again writes nothing.
    code, out = _invoke(env, "predict", "relations", "--corpus", "qt30", "--write")
    assert code == 0 and "already in the graph, nothing written" in out, out
    again = _json(env, "predict", "relations", "--corpus", "qt30", "--dry-run")
    assert again["already_present"] and not again["written"] and again["predicted"] == len(rows)
    assert len(_predicted(store)) == len(rows)

    # One dialogue: the same relations as in the corpus run, under its own run id.
    one = _json(env, "predict", "relations", "--dialogue", "nodeset21318")
    assert one["dialogues"] == 1 and one["run_id"] != done["run_id"]
    assert one["predicted"] == sum(1 for r in rows if r["discourse"] == "qt30:nodeset21318")

    # Sci-Arg: supports/contradicts/semantically_same/parts_of_same between gold components.
    sci = _json(env, "predict", "relations", "--corpus", "sciarg", "--write")
    assert sci["family"] == "sciarg" and sci["written"] and sci["predicted"] > 10
    assert sci["scores_against_gold"]["R"]["micro"]["f1"] > 0
    sci_rows = _predicted(store, f"r.run_id = '{sci['run_id']}'")
    assert len(sci_rows) == sci["predicted"]
    assert {r["scheme"] for r in sci_rows if "SameUnit" in r["labels"]} == {"parts_of_same"}
    assert {r["scheme"] for r in sci_rows if "Support" in r["labels"]} == {"supports"}
    assert _gold_fingerprint(store) == gold_before
    # The same papers read from their files give the same relations (the sentences stored in the
    # graph carry the words between components that the model reads).
    relations.predict_sciarg(Settings(cache_dir=tmp_path / "cache"), SCIARG_DIR, tmp_path / "sci")
    from_files = ann_relations(tmp_path / "sci")
    from_graph = {
        (r["source"].split(":")[1], r["source"].split(":")[2], r["target"].split(":")[2], r["scheme"]) for r in sci_rows
    }
    assert from_graph == from_files

    # M-Arg: support/attack between debate sentences by the QT30 network, scored on the gold pairs.
    marg = _json(env, "predict", "relations", "--corpus", "m-arg", "--write")
    assert marg["family"] == "marg" and marg["written"] and marg["predicted"] > 10
    assert marg["scores_against_gold"]["pairs"] == 15 and marg["gold"] == 6
    marg_rows = _predicted(store, f"r.run_id = '{marg['run_id']}'")
    assert len(marg_rows) == marg["predicted"]
    assert all(r["scheme"] in r["labels"] and r["scheme"] in ("Support", "Attack") for r in marg_rows)
    assert all(r["discourse"] and r["source"].startswith("m-arg:") for r in marg_rows)
    code, out = _invoke(env, "predict", "relations", "--corpus", "m-arg", "--dry-run")
    assert code == 0 and f"{len(marg_rows)} predicted / 6 gold argument relations in 3 debates of m-arg" in out, out
    assert "against gold: 15 annotated pairs: macro-F1" in out, out
    part = _json(env, "predict", "relations", "--dialogue", "m-arg:part:12")
    assert part["dialogues"] == 1 and part["family"] == "marg"
    assert part["predicted"] == sum(1 for r in marg_rows if r["discourse"] == "m-arg:part:12") > 0
    assert _gold_fingerprint(store) == gold_before

    # SPARQL on the RDF export filters them by origin, model and score like Cypher.
    reader = GraphReader(store.driver, page_size=500)
    write_export(tmp_path / "graph.nt", reader.nodes(), reader.relationships())
    sparql = SparqlStore()
    sparql.add_file(tmp_path / "graph.nt")
    _, found = sparql.select(
        """PREFIX aw: <https://w3id.org/argweb/ontology#>
        SELECT ?src ?dst ?run WHERE {
          ?r a aw:Relation ; aw:origin "predicted" ; aw:model "relation-gnn" ; aw:score ?score ; aw:runId ?run ;
             aw:premise/aw:id ?src ; aw:conclusion/aw:id ?dst . FILTER(?score >= 0.5)
        }"""
    )
    strong_all = _predicted(store, "r.model = 'relation-gnn' AND r.score >= 0.5")
    assert sorted((r["src"], r["dst"], r["run"]) for r in found) == sorted(
        (r["source"], r["target"], r["run"]) for r in strong_all
    )
    _, same = sparql.select(
        """PREFIX aw: <https://w3id.org/argweb/ontology#>
        SELECT (COUNT(?r) AS ?n) WHERE { ?r a aw:SameUnit ; aw:origin "predicted" }"""
    )
    assert same[0]["n"] == sum(1 for r in sci_rows if "SameUnit" in r["labels"]) > 0

    code, out = _invoke(env, "delete", "predictions", "--model", "relation-gnn")
    assert code == 0 and f"deleted {len(rows) + len(sci_rows) + len(marg_rows)} predicted relations" in out, out
    assert _predicted(store) == []
    assert _gold_fingerprint(store) == gold_before


def test_predict_relations_refuses_bad_arguments(cli_env: dict[str, str], store: GraphStore, tmp_path: Path) -> None:
    _load(store, "qt30", "m-arg", "stac")
    env = {**cli_env, "ARGWEB_CACHE_DIR": str(tmp_path / "cache")}
    cases = [
        (("predict", "relations"), "exactly one of --corpus and --dialogue"),
        (("predict", "relations", "--corpus", "qt30", "--dialogue", "nodeset21318"), "exactly one of"),
        (("predict", "relations", "--corpus", "nosuch"), "no dialogues or documents of corpus 'nosuch'"),
        (("predict", "relations", "--dialogue", "nosuch"), "no dialogue or document 'nosuch'"),
        (("predict", "relations", "--corpus", "stac"), "no propositions (I-nodes)"),
        (("predict", "relations", "--corpus", "qt30", "--objective", "best"), "unknown objective 'best'"),
        (("predict", "relations", "--corpus", "qt30", "--model", str(tmp_path)), "not a model directory"),
    ]
    for args, message in cases:
        code, out = _invoke(env, *args, "--write")
        assert code == 2 and message in out, (args, code, out)
    assert store.run("MATCH (r:Relation {origin: 'predicted'}) RETURN count(r) AS n")[0]["n"] == 0
    assert store.run("MATCH (r:PredictionRun) RETURN count(r) AS n")[0]["n"] == 0


def test_service_needs_exactly_one_scope(driver: Driver, neo4j_settings: Settings, store: GraphStore) -> None:
    _load(store, "qt30")
    graph = Graph(neo4j_settings, driver=driver)
    with pytest.raises(ApiError, match="exactly one of --corpus and --dialogue"):
        predictions.predict_scope(graph, "relations")
    with pytest.raises(ApiError, match="exactly one of --corpus and --dialogue"):
        predictions.predict_scope(graph, "relations", corpus="qt30", dialogue="nodeset21318")


# Written by the graph prediction of the shipped relation model 9 (the fixture of model 8, written
# before the relations task moved onto the task contract, held that port to the same runs): per scope
# and objective, the run id, its parameters and every relation.
BEFORE = Path(__file__).resolve().parents[1] / "data" / "relations" / "graph_predictions.json"


def test_graph_predictions_keep_their_run_ids_and_relations(
    driver: Driver, neo4j_settings: Settings, store: GraphStore
) -> None:
    _load(store, "qt30", "sciarg", "m-arg")
    graph = Graph(neo4j_settings, driver=driver)
    cases = json.loads(BEFORE.read_text(encoding="utf-8"))
    assert {(c["corpus"] or c["dialogue"], c["objective"]) for c in cases} >= {
        ("qt30", "shares"),
        ("qt30", "general"),
        ("sciarg", "shares"),
        ("m-arg", "shares"),
    }

    for case in cases:
        found = predictions.predict_scope(
            graph,
            "relations",
            corpus=case["corpus"],
            dialogue=case["dialogue"],
            options={"objective": case["objective"]},
        )
        assert found.run_id == case["run_id"], case["corpus"] or case["dialogue"]
        assert found.model_version == "9"
        assert dict(found.parameters) == {**case["parameters"], "model_dir": str(shipped_model("relations"))}
        assert found.gold == case["gold"]
        got = sorted([r.source, r.target, r.label.value, r.scheme_label, r.score] for r in found.relations)
        assert got == case["relations"] and found.predicted == len(got) > 0
    # The same run id as before is what the main job and --write store.
    done = predictions.predict_scope(graph, "relations", corpus="qt30", write=True)
    assert done.run_id == cases[0]["run_id"] and done.written == len(cases[0]["relations"])
    stored = predictions.runs(graph, "relation-gnn", "9")
    assert [r.run.run_id for r in stored] == [done.run_id]
    # The main job asks for runs of the same label, so it finds this run instead of writing another.
    (relations,) = [m for m in mainjob.default_models() if m.task == "relations"]
    assert relations.identity() == ("relation-gnn", "9")
    assert predictions.prediction_store(graph).complete_run("relations", "relation-gnn", "9", "qt30") == done.run_id
