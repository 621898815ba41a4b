"""Competency questions: Cypher on Neo4j and SPARQL on the RDF export give the same answers."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import cast

import pytest
from neo4j import Driver
from rdflib import Graph
from rdflib.query import ResultRow

from graphstore.export import GraphReader
from graphstore.store import GraphStore
from ontology.competency import CompetencyQuestion, load_questions, normalise
from ontology.errors import OntologyError
from ontology.rdf import write_export
from ontology.sparql import SparqlStore, python_value
from tests.rdf_support import ingest_samples, loader_exists

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = load_questions()
# Questions whose answer on the samples must not be empty, given the corpora the samples hold.
NON_EMPTY_WHEN = {
    "02-sciarg-claims-with-two-data": {"sciarg"},
    "03-molweni-qap-per-dialogue": {"molweni"},
    "04-contextdep-host-rephrases": {"contextdep"},
    "05-support-attack-by-type": {"qt30"},
    "06-predicted-edges": {"qt30"},
    "07-discourse-senses": {"molweni"},
    "08-aligned-question-answer-pairs": {"molweni", "stac"},
    "09-intermediate-conclusions": {"qt30"},
    "10-cross-speaker-discourse": {"molweni"},
    "11-marg-crowd-agreement": {"m-arg"},
}


@pytest.fixture(scope="module")
def graph(driver: Driver, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, int], SparqlStore, Path]:
    loaded = ingest_samples(driver)
    reader = GraphReader(driver, page_size=100)
    out = tmp_path_factory.mktemp("cq") / "sample.nt"
    write_export(out, reader.nodes(), reader.relationships())
    store = SparqlStore()
    store.add_file(out)
    return loaded, store, out


def test_there_are_at_least_eight_documented_questions() -> None:
    assert len(QUESTIONS) >= 8
    doc = (ROOT / "docs" / "competency-questions.md").read_text(encoding="utf-8")
    for q in QUESTIONS:
        assert q.title and q.cypher.strip() and q.sparql.strip()
        assert f"cq/{q.name}.rq" in doc and f"cq/{q.name}.cypher" in doc, q.name
    issue_questions = {
        "01-attacks-between-speakers",
        "02-sciarg-claims-with-two-data",
        "03-molweni-qap-per-dialogue",
        "04-contextdep-host-rephrases",
        "05-support-attack-by-type",
        "06-predicted-edges",
    }
    assert issue_questions <= {q.name for q in QUESTIONS}


def test_a_question_without_its_other_half_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "01-x.rq").write_text("# title: x\nSELECT * {}\n")
    with pytest.raises(OntologyError, match="needs both"):
        load_questions(tmp_path)
    (tmp_path / "01-x.cypher").write_text("RETURN 1\n")
    with pytest.raises(OntologyError, match="title"):
        load_questions(tmp_path)


def test_normalise_makes_engines_comparable() -> None:
    rows_a: list[dict[str, object]] = [{"n": 2, "x": 0.1 + 0.2, "s": None}, {"n": 1, "x": 1.0, "s": "a"}]
    rows_b: list[dict[str, object]] = [{"n": 1.0, "x": 1, "s": "a"}, {"n": 2, "x": 0.3, "s": None}]
    assert normalise(rows_a, ["n", "x", "s"]) == normalise(rows_b, ["n", "x", "s"])


@pytest.mark.parametrize("q", QUESTIONS, ids=[q.name for q in QUESTIONS])
def test_cypher_and_sparql_agree(
    q: CompetencyQuestion, driver: Driver, graph: tuple[dict[str, int], SparqlStore, Path]
) -> None:
    missing = [c for c in q.requires if not loader_exists(c)]
    if missing:
        pytest.skip(f"loader for {', '.join(missing)} not written yet")
    loaded, sparql, _ = graph
    columns, sparql_rows = sparql.select(q.sparql)
    cypher_rows = GraphStore(driver).run(q.cypher)
    if cypher_rows:
        assert set(cypher_rows[0]) == set(columns), "both versions must name the same columns"
    assert normalise(cypher_rows, columns) == normalise(sparql_rows, columns)
    if NON_EMPTY_WHEN.get(q.name, {"-"}) <= set(loaded):
        assert sparql_rows, f"{q.name} has no answer on the samples"


@pytest.mark.parametrize("q", QUESTIONS, ids=[q.name for q in QUESTIONS])
def test_rdflib_gives_the_same_answers_as_oxigraph(
    q: CompetencyQuestion, graph: tuple[dict[str, int], SparqlStore, Path]
) -> None:
    """The benchmark compares the two engines, so they must agree on every question."""
    _, sparql, export = graph
    g = rdflib_graph(export)
    columns, ox_rows = sparql.select(q.sparql)
    result = g.query(q.sparql)
    # Iterate the rows: result.bindings holds one empty binding for an aggregate over nothing.
    rows = [{c: _rdflib_value(row.asdict().get(c)) for c in columns} for row in cast(Iterable[ResultRow], result)]
    assert normalise(rows, columns) == normalise(ox_rows, columns)


_RDFLIB: dict[Path, Graph] = {}


def rdflib_graph(path: Path) -> Graph:
    if path not in _RDFLIB:
        g = Graph()
        g.parse(path, format="nt")
        _RDFLIB[path] = g
    return _RDFLIB[path]


def _rdflib_value(term: object) -> object:
    import pyoxigraph as ox
    from rdflib import BNode, Literal, URIRef

    if term is None:
        return None
    if isinstance(term, Literal):
        dt = ox.NamedNode(str(term.datatype)) if term.datatype else None
        return python_value(ox.Literal(str(term), datatype=dt) if dt else ox.Literal(str(term)))
    if isinstance(term, URIRef):
        return str(term)
    if isinstance(term, BNode):
        return f"_:{term}"
    return json.dumps(str(term))
