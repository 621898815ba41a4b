"""Rows returned by the Cypher builders turned into the read model (:mod:`ontology.views`).

Every reader of the graph (exports, audio units, agreement, datasets, API) gets views built here,
so the shape of a row is known in one place next to the queries in :mod:`graphstore.cypher`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ontology.terms import Label, Prop
from ontology.views import EdgeView, JudgementView, NodeView, RelationView, UnitView

Row = Mapping[str, Any]
# Keys the export query maps to null (see graphstore.cypher.unexported_props).
_UNEXPORTED = frozenset((Prop.EMBEDDING.value, Prop.EMBEDDING_MODEL.value, Prop.EMBEDDING_KEY.value))


def node_view(row: Row) -> NodeView:
    """A node from a row with ``id``, ``labels`` and ``props``."""
    return NodeView(id=row["id"], labels=tuple(sorted(row["labels"])), props=row["props"])


def exported_node(row: Row) -> NodeView | RelationView:
    """A node of an export page; reified relations come with their premises and conclusions, sorted."""
    props = {k: v for k, v in row["props"].items() if k not in _UNEXPORTED}
    node = NodeView(id=row["id"], labels=tuple(sorted(row["labels"])), props=props)
    if not node.has(Label.Relation):
        return node
    return RelationView(node, sources=tuple(sorted(row["premises"])), targets=tuple(sorted(row["conclusions"])))


def edge_view(row: Row, rel_type: str | None = None) -> EdgeView:
    """A relationship from a row with ``source``, ``target`` and optionally ``type``, ``corpus``, ``id``."""
    return EdgeView(
        source=row["source"],
        type=rel_type or row["type"],
        target=row["target"],
        corpus=row.get("corpus"),
        id=row.get("id"),
    )


def unit_view(row: Row) -> UnitView:
    """A unit from a row shaped like :func:`graphstore.cypher.discourse_units`."""
    return UnitView(
        node=node_view(row),
        speaker_id=row.get("speaker_id"),
        speaker=row.get("speaker_name"),
        discourse=row.get("discourse"),
    )


def judgement_view(row: Row) -> JudgementView:
    """A judgement from a row shaped like :func:`graphstore.cypher.judgement_rows`."""
    props = dict(row["props"])
    return JudgementView(
        relation=row["relation"],
        annotator=row["annotator"],
        label=props.get(Prop.LABEL.value),
        trust=props.get(Prop.TRUST.value),
        confidence=props.get(Prop.CONFIDENCE.value),
        props=props,
    )
