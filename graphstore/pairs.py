"""Reads of utterance pairs: dialogues made of exactly two locutions (ContextDeP guest -> host)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from graphstore import cypher
from graphstore.reads import unit_view
from graphstore.store import GraphStore
from ontology.terms import Label, Prop
from ontology.views import UnitView

CHUNK = 500


def discourse_pairs(store: GraphStore, ids: Sequence[str]) -> list[tuple[str, UnitView, UnitView]]:
    """(dialogue id, first locution, second locution) of each dialogue of ``ids`` made of exactly two locutions.

    Locutions are ordered by ``position``; dialogues keep the order of ``ids``.
    """
    units: dict[str, list[UnitView]] = defaultdict(list)
    for start in range(0, len(ids), CHUNK):
        for row in store.read(cypher.discourse_units(), ids=list(ids[start : start + CHUNK])):
            if Label.Locution.value in row["labels"]:
                units[row["discourse"]].append(unit_view(row))
    out = []
    for did in ids:
        found = sorted(units.get(did, []), key=lambda u: u.node.get(Prop.POSITION) or 0)
        if len(found) == 2:
            out.append((did, found[0], found[1]))
    return out
