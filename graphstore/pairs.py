"""Reads of utterance pairs: dialogues made of exactly two locutions (ContextDeP guest -> host)."""

from __future__ import annotations

from collections import defaultdict

from graphstore import cypher
from graphstore.reads import unit_view
from graphstore.store import GraphStore
from ontology.terms import Label, Prop
from ontology.views import UnitView

CHUNK = 500


def utterance_pairs(store: GraphStore, corpus: str) -> list[tuple[str, UnitView, UnitView]]:
    """(dialogue local id, first locution, second locution) of every two-locution dialogue of ``corpus``.

    Locutions are ordered by ``position``; dialogues are in id order. Dialogues with another
    number of locutions are skipped.
    """
    discourses = store.read(cypher.corpus_discourses(), corpus=corpus)
    local = {row["id"]: row["local_id"] for row in discourses}
    units: dict[str, list[UnitView]] = defaultdict(list)
    ids = list(local)
    for start in range(0, len(ids), CHUNK):
        for row in store.read(cypher.discourse_units(), ids=ids[start : start + CHUNK]):
            if Label.Locution.value in row["labels"]:
                units[row["discourse"]].append(unit_view(row))
    out = []
    for did in ids:
        found = sorted(units.get(did, []), key=lambda u: u.node.get(Prop.POSITION) or 0)
        if len(found) == 2:
            out.append((local[did] or did, found[0], found[1]))
    return out
