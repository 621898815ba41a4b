"""Reads of utterance units for feature extraction (start/end times and the recording part they sit in)."""

from __future__ import annotations

import re

from graphstore import cypher
from graphstore.reads import unit_view
from graphstore.store import GraphStore
from ontology.terms import Prop
from ontology.views import NodeView, UnitView

_MARG_SENTENCE = re.compile(r"^n(\d{2})\d{4}$")


def normalise_part(raw: object) -> str | None:
    """Two-digit part id (``"0"``, ``0`` and ``"00"`` all give ``"00"``); other strings unchanged."""
    if raw is None or raw == "":
        return None
    text = str(raw).strip()
    return f"{int(text):02d}" if text.isdigit() else text


def recording_part(unit: UnitView, discourse_part: object = None) -> str | None:
    """The recording part an utterance's times refer to.

    The part comes from the locution, else from its discourse, else (M-Arg) from the sentence id
    ``nDDXXXX`` whose ``DD`` is the debate part.
    """
    part = normalise_part(unit.node.get(Prop.PART)) or normalise_part(discourse_part)
    local_id = unit.node.get(Prop.LOCAL_ID)
    if part is None and local_id:
        match = _MARG_SENTENCE.match(str(local_id))
        part = match.group(1) if match else None
    return part


def timed_utterances(store: GraphStore, corpus: str) -> list[UnitView]:
    """Every locution of ``corpus`` with start and end times, ordered by id.

    The ``part`` property of each view is the resolved :func:`recording_part` (a locution that
    does not record its own gets the one of its discourse or sentence id).
    """
    out = []
    for row in store.read(cypher.timed_locutions(), corpus=corpus):
        unit = unit_view(row)
        part = recording_part(unit, row["discourse_part"])
        if part != unit.node.get(Prop.PART):
            node = NodeView(unit.node.id, unit.node.labels, {**unit.node.props, Prop.PART.value: part})
            unit = UnitView(node, unit.speaker_id, unit.speaker, unit.discourse)
        out.append(unit)
    return out
