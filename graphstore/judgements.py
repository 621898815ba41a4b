"""Read the stored per-annotator judgements of a corpus (input of the agreement measures)."""

from __future__ import annotations

from graphstore import cypher
from graphstore.reads import judgement_view
from graphstore.store import GraphStore
from ontology.views import JudgementView


def judgements(store: GraphStore, corpus: str) -> list[JudgementView]:
    """Every judgement of ``corpus``, ordered by judged relation, annotator and judgement id.

    Raises:
        GraphStoreError: Neo4j failed.
    """
    return [judgement_view(row) for row in store.read(cypher.judgement_rows(), corpus=corpus)]
