"""Read the stored per-annotator judgements of a corpus (input of the agreement measures)."""

from __future__ import annotations

from typing import Any

from graphstore import cypher
from graphstore.store import GraphStore

# Judgement properties the agreement measures use.
FIELDS = ("label", "trust", "confidence", "tainted", "golden")


def judgement_rows(store: GraphStore, corpus: str) -> list[dict[str, Any]]:
    """Every judgement of ``corpus`` as a plain row.

    Each row has ``id``, ``unit`` (id of the judged relation node), ``unit_local_id``,
    ``annotator``, ``label``, ``trust``, ``confidence``, ``tainted`` and ``golden`` (``None`` where
    the corpus does not record it), ordered by unit and annotator.

    Raises:
        GraphStoreError: Neo4j failed.
    """
    rows = store.read(cypher.judgement_rows(), corpus=corpus)
    out = []
    for row in rows:
        props = row.pop("props")
        out.append({**row, **{key: props.get(key) for key in FIELDS}})
    return out
