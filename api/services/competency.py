"""The competency questions answered on the graph: Cypher on Neo4j and SPARQL on the SPARQL store.

The questions ship with the package (:mod:`ontology.competency`); the main job leaves both stores
holding the same graph, so each question's two answers must be equal. SPARQL runs as every query
of ``argweb sparql`` does (:func:`api.services.query.run_sparql`: the embedded store under its time
and memory limits, or the configured SPARQL server).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from api.services.graph import Graph
from api.services.query import run_sparql, sparql_store
from ontology.competency import CompetencyQuestion, normalise, questions
from ontology.sparql import solutions_from_json


@dataclass(frozen=True)
class Answer:
    """One question's answers.

    Attributes:
        question: The question.
        columns: The columns both versions return.
        cypher: The Cypher answer, normalised (:func:`ontology.competency.normalise`).
        sparql: The SPARQL answer, normalised.
    """

    question: CompetencyQuestion
    columns: list[str]
    cypher: list[tuple[Any, ...]]
    sparql: list[tuple[Any, ...]]

    @property
    def agree(self) -> bool:
        """Whether Cypher and SPARQL gave the same rows."""
        return self.cypher == self.sparql


def answer(graph: Graph, names: Sequence[str] = ()) -> list[Answer]:
    """Run the competency questions (all, or those named) in Cypher and in SPARQL.

    Raises:
        NotFoundError: An unknown question name.
        DatabaseUnavailableError: Neo4j cannot be reached, or there is no SPARQL store (``argweb run``
            fills it) or server.
        QueryLimitError: A question ran past the SPARQL time limit.
    """
    chosen = questions(names)  # before connecting: an unknown name is the caller's mistake
    settings = graph.settings
    store, sparql = graph.store(), sparql_store(settings)
    answers = []
    for q in chosen:
        run = run_sparql(
            sparql,
            q.sparql,
            fmt="json",
            timeout=settings.sparql_timeout,
            memory_mb=settings.sparql_memory_mb,
            max_workers=settings.sparql_max_workers,
        )
        columns, sparql_rows = solutions_from_json(run.collect(settings.sparql_result_limit))
        cypher_rows = store.read(q.cypher)
        answers.append(Answer(q, columns, normalise(cypher_rows, columns), normalise(sparql_rows, columns)))
    return answers
