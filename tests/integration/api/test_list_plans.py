"""The list queries behind /relations, /dialogues, /search and /nodes/{id}/neighbors seek an index.

Each statement the builders make for a combination of filters is planned by the real Neo4j
(``EXPLAIN``, with the parameters a route sends) and its plan must start from an index (a seek,
or the full-text procedure for /search), never from a label or all-nodes scan. The listings'
answers under these statements are checked against plain Cypher over the same graph.
"""

from __future__ import annotations

from itertools import product
from typing import Any

import pytest
from fastapi.testclient import TestClient
from neo4j import Driver

from graphstore import browse
from graphstore.browsing import RelationFilter
from ontology.terms import Label, RelType
from tests.integration.api.conftest import ApiGraph

SCANS = ("AllNodesScan", "NodeByLabelScan", "UnionNodeByLabelsScan", "IntersectionNodeByLabelsScan")


def operators(plan: Any) -> list[str]:
    """Every operator of a plan tree, its ``@neo4j`` suffix removed."""
    found = [str(plan.get("operatorType", "")).split("@")[0]]
    for child in plan.get("children", []):
        found += operators(child)
    return found


def plan_of(driver: Driver, query: str, **params: Any) -> list[str]:
    _, summary, _ = driver.execute_query("EXPLAIN " + query, params, routing_="r")
    assert summary.plan is not None
    return operators(summary.plan)


def assert_seeks(ops: list[str], query: str) -> None:
    """An index seek, and no scan except one of a relation kind's label joined to that seek.

    For a rare kind with several filters the planner may scan the kind's label and hash-join it
    to the seek; the rows still come from the index, so that plan is allowed.
    """
    assert any("IndexSeek" in op for op in ops), f"no index seek in {ops} for {query}"
    scans = [op for op in ops if op in SCANS]
    assert scans in ([], ["NodeByLabelScan"]), f"a scan in {ops} for {query}"
    if scans:
        assert "NodeHashJoin" in ops, f"a label scan that is not joined to the seek in {ops} for {query}"


FILTERS = [
    dict(zip(("corpus", "origin", "model", "min_score", "sense"), values, strict=True))
    for values in product((None, "qt30"), (None, "gold", "predicted"), (None, "m"), (None, 0.5), (None, "Result"))
]


@pytest.mark.parametrize("kind", [None, "Support", "DiscourseRelation"])
def test_every_relations_query_seeks_an_index(api_graph: ApiGraph, kind: str | None) -> None:
    for given in FILTERS:
        f = RelationFilter(kind, **given)  # type: ignore[arg-type]
        query = f.query()
        for name, value in given.items():
            assert (f"${name}" in query) == (value is not None), (name, query)
        assert "IS NULL OR" not in query
        ops = plan_of(api_graph.driver, query, **f.params(), after="", limit=101)
        assert_seeks(ops, query)
        if kind is None:
            assert not any(op in SCANS for op in ops), (ops, query)


def test_relations_without_filter_read_the_id_index_in_order(api_graph: ApiGraph) -> None:
    query = RelationFilter().query()
    assert "USING INDEX r:`Relation`(id)" in query
    ops = plan_of(api_graph.driver, query, after="", limit=101)
    # The relations' own id index (relation_id), not the unique index of every node's id.
    assert ops.count("NodeIndexSeekByRange") == 1 and "NodeUniqueIndexSeekByRange" not in ops, ops
    # The page is read in index order and cut at $limit: nothing is sorted before the cut.
    assert "Sort" not in ops and "PartialSort" not in ops, ops


@pytest.mark.parametrize(
    "given",
    [
        {"kind": "Support"},
        {"kind": "DiscourseRelation"},
        {"corpus": "qt30"},
        {"origin": "predicted"},
        {"model": "m"},
        {"min_score": 0.5},
        {"sense": "Result"},
        {"corpus": "qt30", "kind": "Attack", "origin": "predicted"},
    ],
)
def test_each_filtered_page_is_read_in_index_order(api_graph: ApiGraph, given: dict[str, Any]) -> None:
    """Every filter reads its page from an index in id order and stops at ``$limit``: no operator
    sorts all the rows that match (``Top``); only the page itself is put in order at the end."""
    f = RelationFilter(**given)
    ops = plan_of(api_graph.driver, f.query(), **f.params(), after="", limit=101)
    assert_seeks(ops, f.query())
    assert "Top" not in ops and "PartialTop" not in ops, ops
    assert ops.count("Sort") <= 1 and not any(op in SCANS for op in ops), ops


def test_every_discourses_query_seeks_an_index(api_graph: ApiGraph) -> None:
    for kind, speaker, text, corpus in product((None, Label.Dialogue, Label.Document), *([(False, True)] * 3)):
        query = browse.discourses(kind, speaker, text, corpus)
        params = {"after": "", "limit": 51, "corpus": "qt30", "speaker": "x", "q": "tax"}
        assert "IS NULL OR" not in query
        assert_seeks(plan_of(api_graph.driver, query, **params), query)


def test_search_and_neighbors_start_from_an_index(api_graph: ApiGraph) -> None:
    for corpus in (False, True):
        query = browse.search(corpus)
        ops = plan_of(api_graph.driver, query, q="tax", corpus="qt30", skip=0, limit=21)
        assert "ProcedureCall" in ops and not any(op in SCANS for op in ops), ops
        assert "IS NULL OR" not in query
    for types, direction, depth in product(([], [RelType.AIF_EDGE]), ("out", "in", "both"), (1, 2, 3)):
        query = browse.neighbors(types, direction, depth)
        ops = plan_of(api_graph.driver, query, id="qt30:x", limit=200)
        assert "NodeUniqueIndexSeek" in ops and not any(op in SCANS for op in ops), (ops, query)


def _ids(driver: Driver, where: str, **params: Any) -> list[str]:
    records, _, _ = driver.execute_query(
        f"MATCH (r:Relation) WHERE {where} RETURN r.id AS id ORDER BY id", params, routing_="r"
    )
    return [r["id"] for r in records]


def _all_pages(client: TestClient, **params: Any) -> list[str]:
    ids: list[str] = []
    cursor = None
    while True:
        body = client.get("/relations", params={**params, "limit": 100, **({"cursor": cursor} if cursor else {})})
        assert body.status_code == 200, body.text
        ids += [r["id"] for r in body.json()["items"]]
        cursor = body.json()["next_cursor"]
        if cursor is None:
            return ids


def test_relations_pages_match_plain_cypher(client: TestClient, api_graph: ApiGraph) -> None:
    driver = api_graph.driver
    assert _all_pages(client, corpus="qt30") == _ids(driver, "r.corpus = 'qt30'")
    assert _all_pages(client, origin="gold", corpus="m-arg") == _ids(
        driver, "r.corpus = 'm-arg' AND coalesce(r.origin, 'gold') = 'gold'"
    )
    assert _all_pages(client, origin="predicted") == [api_graph.predicted]
    assert _all_pages(client, sense="QuestionAnswerPair") == _ids(driver, "r.sense = 'QuestionAnswerPair'")
    every = _all_pages(client)
    assert every == _ids(driver, "true") and len(every) > 100


def test_discourse_listing_by_corpus_and_unknown_corpus(client: TestClient, api_graph: ApiGraph) -> None:
    records, _, _ = api_graph.driver.execute_query(
        "MATCH (d:Dialogue {corpus: 'qt30'}) RETURN d.id AS id ORDER BY id", routing_="r"
    )
    listed = client.get("/dialogues", params={"corpus": "qt30", "limit": 500}).json()["items"]
    assert [d["id"] for d in listed] == [r["id"] for r in records]
    for path in ("/dialogues", "/documents", "/relations", "/search"):
        answer = client.get(path, params={"corpus": "nope", "q": "tax"})
        assert answer.status_code == 404, (path, answer.text)
        assert "nope" in answer.json()["detail"]


def test_search_operator_words_and_prefixes(client: TestClient) -> None:
    for q in ("AND", "OR NOT", "x AND"):
        answer = client.get("/search", params={"q": q})
        assert answer.status_code == 200, answer.text
    unit = client.get("/dialogues/qt30:nodeset21318").json()["units"][0]
    word = max(unit["text"].split(), key=len).strip(".,?!:;\"'")
    prefix = word[: max(3, len(word) - 3)]
    hits = client.get("/search", params={"q": prefix.upper() + "*", "corpus": "qt30", "limit": 100}).json()["items"]
    assert hits and all(prefix.lower() in (h["node"]["text"] or "").lower() for h in hits if h["node"]["text"])
    exact = client.get("/search", params={"q": word, "corpus": "qt30", "limit": 100}).json()["items"]
    assert {h["node"]["id"] for h in exact} <= {h["node"]["id"] for h in hits} or len(hits) == 100
    assert client.get("/search", params={"q": "*"}).status_code == 400


def test_neighbors_say_when_they_were_cut(client: TestClient, api_graph: ApiGraph) -> None:
    unit = client.get("/dialogues/qt30:nodeset21318").json()["units"][0]["id"]
    records, _, _ = api_graph.driver.execute_query(
        "MATCH (n:Node {id: $id})--(m:Node) RETURN count(DISTINCT m) AS n", id=unit, routing_="r"
    )
    near = records[0]["n"]
    assert near >= 1
    full = client.get(f"/nodes/{unit}/neighbors", params={"depth": 1, "limit": 500}).json()
    assert not full["truncated"] and len(full["nodes"]) == near + 1
    cut = client.get(f"/nodes/{unit}/neighbors", params={"depth": 3, "limit": near}).json()
    assert cut["truncated"]
    # Shorter paths come first: the cut keeps every depth-1 neighbour.
    assert {n["id"] for n in full["nodes"]} <= {n["id"] for n in cut["nodes"]}
