"""The pieces of client queries that need no store: size checks, the bounded pools, the competency
question files and the RDF export format."""

from __future__ import annotations

from pathlib import Path

import pytest

from ontology.client_query import WorkerPool, check_query_size
from ontology.competency import load_questions, questions
from ontology.errors import ApiError, BusyError, NotFoundError
from ontology.rdf import export_format


def test_a_pool_admits_up_to_the_callers_cap_and_gives_each_place_back_once() -> None:
    pool = WorkerPool("SPARQL")
    first, second = pool.take(2), pool.take(2)
    with pytest.raises(BusyError, match="2 SPARQL queries are running"):
        pool.take(2)
    assert pool.take(3) is not None  # a caller with a higher cap still gets in
    first.release()
    first.release()  # a second release gives nothing back twice
    state = pool.state()
    assert (state.running, state.peak, state.refused) == (2, 3, 1)
    second.release()
    assert pool.state().running == 1


def test_an_empty_or_oversized_query_is_refused() -> None:
    with pytest.raises(ApiError, match="the Cypher query is empty"):
        check_query_size("  ", "Cypher")
    with pytest.raises(ApiError, match="longer than"):
        check_query_size("x" * 100_001, "SPARQL")


def test_questions_are_all_or_those_named_in_order(tmp_path: Path) -> None:
    every = load_questions()
    assert questions() == every
    names = [every[-1].name, every[0].name]
    assert [q.name for q in questions(names)] == names
    with pytest.raises(NotFoundError, match="no competency question nope; there are: "):
        questions(["nope"])
    with pytest.raises(NotFoundError, match="is missing \\(reinstall argweb\\)"):
        questions(directory=tmp_path / "cq")


def test_the_export_format_is_the_one_given_else_the_extension_else_n_triples() -> None:
    assert export_format(Path("out.ttl"), None) == "ttl"
    assert export_format(Path("out.rdf"), None) == "nt"
    assert export_format(Path("out.ttl"), "nq") == "nq"
    with pytest.raises(ApiError, match="--format must be one of nt, ttl, nq, not 'xml'"):
        export_format(Path("out.nt"), "xml")
