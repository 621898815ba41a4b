"""The README's example questions answer, as printed, on the shipped samples: its Cypher through
``POST /cypher``, its SPARQL through ``POST /sparql``, its REST request as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

README = Path(__file__).resolve().parents[3] / "README.md"


def _blocks(language: str) -> list[str]:
    """The README's fenced code blocks of ``language``."""
    return re.findall(rf"^```{language}\n(.*?)^```", README.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_the_readme_holds_one_example_per_query_language() -> None:
    assert [len(_blocks(lang)) for lang in ("cypher", "sparql", "http")] == [1, 1, 1]
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150


def test_the_cypher_example_counts_the_predicted_qt30_relations(client: TestClient) -> None:
    (query,) = _blocks("cypher")
    answer = client.post("/cypher", json={"query": query})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["columns"] == ["type", "relations", "mean_score"]
    # The API tests' graph holds one predicted QT30 support (score 0.87).
    assert body["rows"] == [["Support", 1, 0.87]]


def test_the_sparql_example_finds_attacks_in_every_corpus_that_has_them(client: TestClient) -> None:
    (query,) = _blocks("sparql")
    answer = client.post(
        "/sparql",
        content=query.encode(),
        headers={"Content-Type": "application/sparql-query", "Accept": "application/sparql-results+json"},
    )
    assert answer.status_code == 200, answer.text
    rows = {b["corpus"]["value"]: int(b["attacks"]["value"]) for b in answer.json()["results"]["bindings"]}
    # Sci-Arg contradicts, M-Arg Attack and QT30 CA are all aw:Attack through the ontology.
    assert {"sciarg", "m-arg", "qt30"} <= set(rows) and min(rows.values()) > 0


@pytest.mark.parametrize("line", [line for block in _blocks("http") for line in block.splitlines() if line])
def test_the_rest_example_answers_with_question_answer_pairs(client: TestClient, line: str) -> None:
    method, path = line.split()
    answer = client.request(method, path)
    assert answer.status_code == 200, answer.text
    items = answer.json()["items"]
    assert 0 < len(items) <= 5
    assert all(item["sense"] == "QuestionAnswerPair" and item["corpus"] == "molweni" for item in items)
