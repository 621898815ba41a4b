"""REST graph endpoints against the real Neo4j with the shipped samples loaded."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.gnn.test_agreement import marg_expected
from tests.integration.api.conftest import ApiGraph


def test_health_reports_both_backends(client: TestClient) -> None:
    body = client.get("/health").json()
    assert body == {"status": "ok", "neo4j": "ok", "sparql": "ok"}


def test_corpora_and_detail(client: TestClient) -> None:
    ids = [c["id"] for c in client.get("/corpora").json()]
    assert {"molweni", "qt30", "m-arg", "sciarg"} <= set(ids)
    detail = client.get("/corpora/molweni").json()
    assert detail["status"] == "complete"
    assert detail["labels"]["Locution"] > 0
    assert any(key.startswith("DiscourseRelation:") for key in detail["relations"])
    missing = client.get("/corpora/no-such-corpus")
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    assert missing.json()["status"] == 404


def test_dialogues_paginate_without_gaps_or_repeats(client: TestClient) -> None:
    everything = client.get("/dialogues", params={"corpus": "molweni", "limit": 500}).json()["items"]
    assert len(everything) > 3
    seen: list[str] = []
    cursor = None
    while True:
        params = {"corpus": "molweni", "limit": 2, **({"cursor": cursor} if cursor else {})}
        page = client.get("/dialogues", params=params).json()
        seen += [d["id"] for d in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [d["id"] for d in everything]
    assert client.get("/dialogues", params={"cursor": "garbage!"}).status_code == 400


def test_dialogue_has_ordered_units_and_relations(client: TestClient) -> None:
    first = client.get("/dialogues", params={"corpus": "molweni", "limit": 1}).json()["items"][0]
    body = client.get(f"/dialogues/{first['id']}").json()
    positions = [u["position"] for u in body["units"]]
    assert positions == sorted(positions)
    assert len(body["units"]) == first["units"]
    assert body["relations"] and all(r["origin"] == "gold" for r in body["relations"])
    unit_ids = {u["id"] for u in body["units"]}
    assert all(set(r["sources"]) | set(r["targets"]) <= unit_ids for r in body["relations"])
    speaker = body["units"][0]["speaker"]
    by_speaker = client.get("/dialogues", params={"corpus": "molweni", "speaker": speaker, "limit": 500}).json()
    assert first["id"] in [d["id"] for d in by_speaker["items"]]
    word = body["units"][0]["text"].split()[0]
    by_text = client.get("/dialogues", params={"corpus": "molweni", "q": word, "limit": 500}).json()
    assert first["id"] in [d["id"] for d in by_text["items"]]


def test_qt30_speakers_are_found_by_name_and_person_id(client: TestClient, api_graph: ApiGraph) -> None:
    units = client.get("/dialogues/qt30:nodeset21318").json()["units"]
    named = next(u for u in units if u["speaker"] == "Lisa Nandy")
    assert named["speaker_id"] == "qt30:speaker:Lisa Nandy"
    records, _, _ = api_graph.driver.execute_query(
        "MATCH (s:Speaker {id: 'qt30:speaker:Lisa Nandy'}) RETURN s.name AS name, s.person_ids AS persons"
    )
    assert records[0]["name"] == "Lisa Nandy" and records[0]["persons"]
    for speaker in ("Lisa Nandy", records[0]["persons"][0], "qt30:speaker:Lisa Nandy"):
        found = client.get("/dialogues", params={"corpus": "qt30", "speaker": speaker}).json()["items"]
        assert "qt30:nodeset21318" in [d["id"] for d in found], speaker
    assert client.get("/dialogues", params={"corpus": "qt30", "speaker": "Nobody Here"}).json()["items"] == []


def test_documents_and_kind_mismatch(client: TestClient) -> None:
    docs = client.get("/documents", params={"corpus": "sciarg"}).json()["items"]
    assert docs and all(d["kind"] == "Document" for d in docs)
    body = client.get(f"/documents/{docs[0]['id']}").json()
    assert body["units"] and body["relations"]
    # The paper's sentences come with its components: the text the components' spans lie on.
    sentences = [u for u in body["units"] if u["kind"] == "Sentence"]
    assert sentences and all(u["properties"]["char_start"] < u["properties"]["char_end"] for u in sentences)
    for c in (u for u in body["units"] if u["kind"] != "Sentence"):
        assert any(
            s["properties"]["char_start"] <= c["properties"]["char_start"] < s["properties"]["char_end"]
            for s in sentences
        ), c["id"]
    assert client.get(f"/dialogues/{docs[0]['id']}").status_code == 404


def test_nodes_and_neighbors(client: TestClient, api_graph: ApiGraph) -> None:
    dlg = client.get("/dialogues/qt30:nodeset21318").json()
    unit = dlg["units"][0]
    node = client.get(f"/nodes/{unit['id']}").json()
    assert node["id"] == unit["id"] and node["text"] == unit["text"]
    assert node["discourses"] == ["qt30:nodeset21318"]
    one = client.get(f"/nodes/{unit['id']}/neighbors", params={"rel": "AIF_EDGE", "depth": 1}).json()
    records, _, _ = api_graph.driver.execute_query(
        "MATCH (n:Node {id: $id})-[:AIF_EDGE]-(m:Node) RETURN collect(DISTINCT m.id) AS ids", id=unit["id"]
    )
    assert {n["id"] for n in one["nodes"]} - {unit["id"]} == set(records[0]["ids"])
    assert all(e["type"] == "AIF_EDGE" for e in one["edges"])
    two = client.get(f"/nodes/{unit['id']}/neighbors", params={"rel": "AIF_EDGE", "depth": 2}).json()
    assert len(two["nodes"]) >= len(one["nodes"])
    assert client.get(f"/nodes/{unit['id']}/neighbors", params={"depth": 4}).status_code == 422
    assert client.get(f"/nodes/{unit['id']}/neighbors", params={"rel": "DROP"}).status_code == 400
    assert client.get("/nodes/qt30:nope/neighbors").status_code == 404
    assert client.get("/nodes/qt30:nope").status_code == 404


def test_relations_filters(client: TestClient, api_graph: ApiGraph) -> None:
    support = client.get("/relations", params={"type": "Support", "corpus": "m-arg", "limit": 500}).json()["items"]
    assert support and all(r["kind"] == "Support" and r["corpus"] == "m-arg" for r in support)
    qap = client.get("/relations", params={"sense": "QuestionAnswerPair", "limit": 5}).json()["items"]
    assert qap and all(r["sense"] == "QuestionAnswerPair" for r in qap)
    predicted = client.get("/relations", params={"origin": "predicted"}).json()["items"]
    assert [r["id"] for r in predicted] == [api_graph.predicted]
    assert predicted[0]["score"] == 0.87 and predicted[0]["model"] == "test-relations"
    assert client.get("/relations", params={"origin": "predicted", "min_score": 0.9}).json()["items"] == []
    assert client.get("/relations", params={"model": "test-relations", "type": "Support"}).json()["items"] == predicted
    dialogue = client.get("/dialogues/qt30:nodeset21318").json()
    assert api_graph.predicted in [r["id"] for r in dialogue["relations"] if r["origin"] == "predicted"]
    assert client.get("/relations", params={"type": "Nonsense"}).status_code == 400
    assert client.get("/relations", params={"min_score": 2}).status_code == 422


def test_search_uses_the_fulltext_index(client: TestClient) -> None:
    unit = client.get("/dialogues/qt30:nodeset21318").json()["units"][0]
    word = max(unit["text"].split(), key=len).strip(".,?!:;\"'")
    hits = client.get("/search", params={"q": word}).json()["items"]
    assert unit["id"] in [h["node"]["id"] for h in hits] or len(hits) == 20
    for hostile in ['"', "AND OR (", "text:*", "\\", "x" * 500]:
        assert client.get("/search", params={"q": hostile}).status_code in (200, 400)


def test_agreement_with_thresholds(client: TestClient) -> None:
    body = client.get("/agreement/m-arg").json()
    assert body["overall"]["annotations"] > 0
    strict = client.get("/agreement/m-arg", params={"min_trust": 0.9}).json()
    assert strict["filtered"]["annotations"] <= body["overall"]["annotations"]
    # Self-confidence is rated 1-5: a threshold above 1 is a valid filter, not a 422.
    confident = client.get("/agreement/m-arg", params={"min_trust": 0.85, "min_confidence": 4})
    assert confident.status_code == 200, confident.text
    assert confident.json()["filtered"]["alpha"] == pytest.approx(marg_expected(0.85, 4)["alpha"])
    assert client.get("/agreement/m-arg", params={"min_confidence": -1}).status_code == 422
    assert client.get("/agreement/molweni").status_code == 404


def test_stats_read_only(client: TestClient) -> None:
    assert client.get("/stats").json()["corpora"]["qt30"]["status"] == "complete"
