"""``POST /predict`` with the shipped models: a text pair, stored dialogues (QT30 and Molweni), a new
transcript, writes through the prediction path (API key), 4xx for bad requests, 503 only without
the database."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from pydantic import SecretStr

from api.app import create_app
from api.services import corpora, predictions
from api.services.graph import Graph
from graphstore.runtime import free_port
from graphstore.store import GraphStore
from tests.integration.api.conftest import API_KEY, ApiGraph, graph_counts
from tests.integration.test_predictions import _gold_fingerprint

KEY = {"X-API-Key": API_KEY}
DEBATE = [
    {"speaker": "Anna", "text": "We should adopt a four-day week. Trials showed productivity stayed the same."},
    {"speaker": "Tom", "text": "That is not true for hospitals. You cannot run a ward with fewer shifts."},
    {"speaker": "Anna", "text": "Rested staff are less likely to quit, which saves money."},
]


def _edges_ok(body: dict[str, Any]) -> None:
    for e in body["edges"]:
        assert 0 <= e["score"] <= 1 and e["model"] and e["model_version"]
        assert e["kind"] in ("discourse", "argument")


def test_pair(client: TestClient) -> None:
    r = client.post("/predict", json={"task": "pair", "texts": ["We should act now.", "Because it is urgent."]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["model"] == "pair-mlp" and body["written"] is False and body["run_id"] is None
    (edge,) = body["edges"]
    assert (edge["source"], edge["target"]) == ("text:0", "text:1")
    assert edge["label"] in ("support", "attack", "rephrase", "none")
    probs = body["probabilities"]
    assert set(probs) == {"support", "attack", "rephrase", "none"} and abs(sum(probs.values()) - 1) < 1e-3
    assert edge["score"] == probs[edge["label"]]


def test_dialogue_dry_run_then_write(client: TestClient, api_graph: ApiGraph) -> None:
    store = GraphStore(api_graph.driver)
    before = _gold_fingerprint(store)
    r = client.post("/predict", json={"task": "dialogue", "dialogue_id": "qt30:nodeset21318"})
    assert r.status_code == 200, r.text
    dry = r.json()
    assert dry["dialogue_id"] == "qt30:nodeset21318" and dry["written"] is False
    _edges_ok(dry)
    props = {
        row["id"]
        for row in store.run(
            "MATCH (p:Proposition)-[:PART_OF]->(:Dialogue {id: 'qt30:nodeset21318'}) RETURN p.id AS id"
        )
    }
    arguments = [e for e in dry["edges"] if e["kind"] == "argument"]
    discourse = [e for e in dry["edges"] if e["kind"] == "discourse"]
    assert discourse
    # Argument links join the map's propositions (the model finds none in this small map: a real
    # output, not a failure); discourse links join its locutions.
    assert all(e["source"] in props and e["target"] in props for e in arguments)
    assert all(e["source"] not in props for e in discourse)
    assert (
        client.post(
            "/predict", json={"task": "dialogue", "dialogue_id": "qt30:nodeset21318", "write": True}
        ).status_code
        == 401
    )
    done = client.post(
        "/predict", json={"task": "dialogue", "dialogue_id": "qt30:nodeset21318", "write": True}, headers=KEY
    ).json()
    assert done["written"] is True and done["edges"] == dry["edges"]
    run_ids = {r["run_id"] for r in done["runs"]}
    stored = store.run(
        "MATCH (r:Relation {origin: 'predicted'}) WHERE r.run_id IN $runs RETURN r.run_id AS run, count(r) AS n",
        runs=list(run_ids),
    )
    assert sum(row["n"] for row in stored) == len(done["edges"])
    counts = graph_counts(api_graph.driver)
    again = client.post(
        "/predict", json={"task": "dialogue", "dialogue_id": "qt30:nodeset21318", "write": True}, headers=KEY
    )
    assert again.status_code == 200 and graph_counts(api_graph.driver) == counts
    assert _gold_fingerprint(store) == before
    # A Molweni dialogue has no propositions: its locutions are argued over.
    molweni = client.post("/predict", json={"task": "dialogue", "dialogue_id": "molweni:1056"}).json()
    graph = Graph(api_graph.settings, driver=api_graph.driver)
    for model in {r["model"] for r in done["runs"]}:
        predictions.delete_predictions(graph, model)
    assert _gold_fingerprint(store) == before
    assert molweni["summary"]["counts"]["utterances"] > 1
    assert all(e["source"].startswith("molweni:") for e in molweni["edges"])


def test_transcript_dry_run_and_write(client: TestClient, api_graph: ApiGraph) -> None:
    store = GraphStore(api_graph.driver)
    body = {"task": "transcript", "utterances": DEBATE, "corpus": "api-mined", "name": "four-day week"}
    r = client.post("/predict", json=body)
    assert r.status_code == 200, r.text
    dry = r.json()
    summary = dry["summary"]
    assert summary["counts"]["utterances"] == 5 and summary["counts"]["speakers"] == 2
    assert dry["dialogue_id"].startswith("api-mined:four-day-week-") and dry["written"] is False
    assert len(dry["edges"]) == summary["counts"]["discourse_links"] + len(summary["argument_relations"])
    _edges_ok(dry)
    assert store.run("MATCH (n:Node {corpus: 'api-mined'}) RETURN count(n) AS n") == [{"n": 0}]
    done = client.post("/predict", json={**body, "write": True}, headers=KEY)
    assert done.status_code == 200, done.text
    assert done.json()["edges"] == dry["edges"]
    # The stored dialogue, read back from the graph, gets the same predictions as the transcript.
    stored = client.post("/predict", json={"task": "dialogue", "dialogue_id": dry["dialogue_id"]}).json()
    assert [e for e in stored["edges"] if e["kind"] == "argument"] == [
        e for e in dry["edges"] if e["kind"] == "argument"
    ]
    assert [e for e in stored["edges"] if e["kind"] == "discourse"] == [
        e for e in dry["edges"] if e["kind"] == "discourse"
    ]
    assert any(e["kind"] == "argument" for e in dry["edges"])
    locs = store.run("MATCH (l:Locution {corpus: 'api-mined'}) RETURN count(l) AS n")
    assert locs == [{"n": 5}]
    predicted = store.run(
        "MATCH (r:Relation {origin: 'predicted'})-[:PART_OF]->(:Dialogue {id: $d}) RETURN count(r) AS n",
        d=dry["dialogue_id"],
    )
    assert predicted == [{"n": len(dry["edges"])}]
    graph = Graph(api_graph.settings, driver=api_graph.driver)
    corpora.delete_corpus(graph, "api-mined")
    assert store.run(
        "MATCH (r:Relation {origin: 'predicted', run_id: $r}) RETURN count(r) AS n", r=done.json()["run_id"]
    ) == [{"n": 0}]


def test_bad_requests_are_4xx(client: TestClient) -> None:
    def status(body: dict[str, Any], **kw: Any) -> int:
        return client.post("/predict", json=body, **kw).status_code

    assert status({"task": "pair"}) == 400
    assert status({"task": "pair", "texts": ["", "b"]}) == 400
    assert status({"task": "pair", "texts": ["a", "b"], "write": True}) == 401
    assert status({"task": "pair", "texts": ["a", "b"], "write": True}, headers=KEY) == 400
    assert status({"task": "pair", "texts": ["a", "b"], "model": "other"}) == 400
    assert status({"task": "nope"}) == 400  # an unknown task: the registry names the ones there are
    assert status({"task": "dialogue"}) == 400
    assert status({"task": "dialogue", "dialogue_id": "no-such-dialogue"}) == 404
    assert status({"task": "transcript"}) == 400
    assert status({"task": "transcript", "utterances": [{"speaker": " ", "text": "hi"}]}) == 400
    assert status({"task": "transcript", "utterances": DEBATE, "corpus": "molweni"}) == 400
    assert status({"task": "transcript", "utterances": DEBATE, "k": 0}) == 422


def test_503_only_when_the_database_is_away(api_graph: ApiGraph) -> None:
    away = api_graph.settings.model_copy(
        update={"neo4j_uri": f"bolt://127.0.0.1:{free_port()}", "neo4j_password": SecretStr("x")}
    )
    with TestClient(create_app(away)) as c:
        r = c.post("/predict", json={"task": "dialogue", "dialogue_id": "qt30:nodeset21318"})
        assert r.status_code == 503 and r.headers["content-type"].startswith("application/problem+json")
        assert c.post("/predict", json={"task": "transcript", "utterances": DEBATE}).status_code == 503
        # A pair needs no database.
        assert c.post("/predict", json={"task": "pair", "texts": ["a claim", "a reply"]}).status_code == 200


def test_a_transcript_mined_again_after_its_corpus_went_is_written_again(
    client: TestClient, api_graph: ApiGraph
) -> None:
    # Mined runs go through the one prediction job (pick, rounded scores): deleting the corpus takes
    # its runs along, and mining the same transcript again writes the same runs again.
    store = GraphStore(api_graph.driver)
    graph = Graph(api_graph.settings, driver=api_graph.driver)
    body = {"task": "transcript", "utterances": DEBATE, "corpus": "api-remined", "name": "again", "write": True}
    first = client.post("/predict", json=body, headers=KEY)
    assert first.status_code == 200, first.text
    done = first.json()

    def stored() -> list[dict[str, Any]]:
        return store.run(
            "MATCH (r:Relation {origin: 'predicted'})-[:PART_OF]->(:Dialogue {id: $d}) "
            "RETURN r.run_id AS run, r.score AS score ORDER BY run, score",
            d=done["dialogue_id"],
        )

    assert len(stored()) == len(done["edges"]) > 0
    assert all(round(r["score"], 4) == r["score"] for r in stored())
    corpora.delete_corpus(graph, "api-remined")
    assert stored() == []
    again = client.post("/predict", json=body, headers=KEY).json()
    assert again["dialogue_id"] == done["dialogue_id"]
    assert again["runs"] == done["runs"] and again["edges"] == done["edges"]
    assert len(stored()) == len(done["edges"])
    assert {r["run"] for r in stored()} <= {r["run_id"] for r in done["runs"]}
    corpora.delete_corpus(graph, "api-remined")


def test_a_registered_task_answers_as_its_command_line(
    client: TestClient, api_graph: ApiGraph, cli_env: dict[str, str]
) -> None:
    """``POST /predict {task: discourse}`` and ``argweb predict discourse --dialogue`` are one path:
    the same run id, the same edges, and a write by either is found by the other."""
    import json

    from typer.testing import CliRunner

    from api.cli.main import app as cli_app

    store = GraphStore(api_graph.driver)
    ref = store.run("MATCH (d:Dialogue {corpus: 'molweni'}) RETURN d.id AS id ORDER BY id LIMIT 1")[0]["id"]
    r = client.post("/predict", json={"task": "discourse", "dialogue_id": ref})
    assert r.status_code == 200, r.text
    dry = r.json()
    assert dry["task"] == "discourse" and dry["written"] is False and dry["dialogue_id"] == ref
    assert dry["edges"] and all(e["kind"] == "discourse" and e["run_id"] == dry["run_id"] for e in dry["edges"])
    _edges_ok(dry)
    shell = CliRunner().invoke(cli_app, ["predict", "discourse", "--dialogue", ref, "--json"], env=cli_env)
    assert shell.exit_code == 0, shell.output
    assert json.loads(shell.stdout)["run_id"] == dry["run_id"]
    written = client.post("/predict", json={"task": "discourse", "dialogue_id": ref, "write": True}, headers=KEY)
    assert written.status_code == 200, written.text
    body = written.json()
    assert body["run_id"] == dry["run_id"] and body["written"] is True
    assert sorted(map(str, body["edges"])) == sorted(map(str, dry["edges"]))
    stored = store.run(
        "MATCH (s)-[:AIF_EDGE]->(r:Relation {run_id: $run})-[:AIF_EDGE]->(t) RETURN s.id AS s, t.id AS t, r.score AS p",
        run=dry["run_id"],
    )
    assert sorted((row["s"], row["t"], row["p"]) for row in stored) == sorted(
        (e["source"], e["target"], e["score"]) for e in dry["edges"]
    )
    again = CliRunner().invoke(cli_app, ["predict", "discourse", "--dialogue", ref, "--write", "--json"], env=cli_env)
    assert again.exit_code == 0, again.output
    found = json.loads(again.stdout)
    assert found["run_id"] == dry["run_id"] and found["already_present"] is True and found["written"] == 0
    assert client.post("/predict", json={"task": "nosuch", "dialogue_id": ref}).status_code == 400
    assert predictions.delete_predictions(
        Graph(api_graph.settings, driver=api_graph.driver), body["model"], run=body["run_id"]
    ) == len(stored)
