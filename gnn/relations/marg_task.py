"""M-Arg gold pairs and debates, and the QT30 relation network read on them.

:class:`Pair` is one of M-Arg's 102 expert gold pairs (support / attack / neither), grouped by event
(a debate or town hall with all its parts). No M-Arg model ships: the logistic-regression
cross-validation measured on these pairs is ``experiments/marg_cv.py`` (figures in
``docs/models/relations.md``).

M-Arg debates are also read by the QT30 relation network, which never saw an M-Arg label
(:func:`predict_debates`): each debate part is cut into overlapping transcript windows the size of
a QT30 map, each window given to the network in the DialAM task-A form live mining uses (an L- and
an I-node per sentence, a transition between consecutive sentences), and every pair is decided in
the one window where it sits in the middle. Its RA / CA become M-Arg ``Support`` / ``Attack``; MA
(rephrase) has no M-Arg label and is left out. :func:`score_transfer` scores that on the gold pairs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gnn.relations.argmap import edge_lists
from gnn.relations.metrics import macro_f1
from ontology.labels import scheme_label, scheme_raw
from ontology.records import (
    DiscourseRecord,
    EdgeRecord,
    LocutionRecord,
    NodeRecord,
    PropositionRecord,
    RelationRecord,
)

if TYPE_CHECKING:
    from gnn.relations.qt30_run import Qt30Model

LABELS = ("Neither", "Support", "Attack")
# QT30 supports and attacks as M-Arg writes them; rephrase has no M-Arg relation and is left out.
FROM_QT30 = {t: scheme_raw("m-arg", scheme_label("qt30", t)) for t in ("RA", "CA")}
"""QT30 relation types with an M-Arg counterpart (MA, rephrase, has none)."""
WINDOW = 16
"""Sentences per window given to the QT30 network: its training maps have 14 I-nodes at the median."""


@dataclass(frozen=True)
class Pair:
    """An annotated pair: ids and texts of the two sentences, speakers, gold label, and its event
    (the cross-validation group; empty when unknown)."""

    pair_id: str
    source_id: str
    target_id: str
    source: str
    target: str
    same_speaker: bool
    label: str
    group: str = ""


_PART_SUFFIX = re.compile(r"_(?:part)?\d+$")


def event_of(part_name: str) -> str:
    """The event a debate part belongs to: its name without the part suffix
    (``us_election_2020_1st_presidential_debate_part2`` -> ``us_election_2020_1st_presidential_debate``)."""
    return _PART_SUFFIX.sub("", part_name)


def pairs_from_records(nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> list[Pair]:
    """The annotated pairs of an M-Arg bundle, in input order (sentence ids are the local ids); a
    pair's group is the event of its source sentence's debate part."""
    props = {n.id: n for n in nodes if isinstance(n, PropositionRecord)}
    events = {n.id: event_of(n.name or n.local_id or n.id) for n in nodes if isinstance(n, DiscourseRecord)}
    speakers = {n.local_id: n.speaker for n in nodes if isinstance(n, LocutionRecord)}
    into, out = edge_lists(edges)
    pairs = []
    for node in nodes:
        if isinstance(node, RelationRecord) and node.scheme_label in LABELS:
            src = [props[s] for s in into.get(node.id, []) if s in props]
            tgt = [props[t] for t in out.get(node.id, []) if t in props]
            if len(src) == 1 and len(tgt) == 1:
                a, b = src[0], tgt[0]
                sa, sb = speakers.get(a.local_id), speakers.get(b.local_id)
                pairs.append(
                    Pair(
                        node.local_id or node.id,
                        a.local_id or a.id,
                        b.local_id or b.id,
                        a.text or "",
                        b.text or "",
                        sa is not None and sa == sb,
                        node.scheme_label,
                        events.get(a.discourse or "", ""),
                    )
                )
    return pairs


@dataclass(frozen=True)
class Debate:
    """One M-Arg debate part in transcript order: its sentences' local ids, texts, speakers and node ids."""

    id: str
    sentences: tuple[str, ...]
    texts: tuple[str, ...]
    speakers: tuple[str, ...]
    node_ids: tuple[str, ...]


def debates_from_records(nodes: Sequence[NodeRecord]) -> list[Debate]:
    """The debate parts of M-Arg loader records (or the graph's), sentences in position order.

    A sentence is a proposition; its speaker is that of the locution with the same local id. A
    sentence without one (the corpus could not attribute two) gets a speaker of its own, so that the
    network does not read such sentences as said by one person.
    """
    speakers = {(n.discourse, n.local_id): n.speaker for n in nodes if isinstance(n, LocutionRecord)}
    parts: dict[str, list[tuple[int, str, str, str]]] = {}
    for n in nodes:
        if isinstance(n, PropositionRecord) and n.discourse is not None:
            parts.setdefault(n.discourse, []).append((n.position or 0, n.local_id or n.id, n.text or "", n.id))
    out = []
    for did, rows in parts.items():
        rows.sort()
        out.append(
            Debate(
                did,
                tuple(r[1] for r in rows),
                tuple(r[2] for r in rows),
                tuple(speakers.get((did, r[1])) or f"unknown speaker {r[1]}" for r in rows),
                tuple(r[3] for r in rows),
            )
        )
    return out


def window_starts(n: int, size: int = WINDOW) -> list[int]:
    """Start of each window of ``size`` sentences over ``n``, every ``size // 2`` (the last one ends at ``n``)."""
    stride = max(1, size // 2)
    if n <= size:
        return [0]
    starts = list(range(0, n - size, stride))
    return [*starts, n - size]


def owner(i: int, j: int, starts: Sequence[int], size: int = WINDOW) -> int:
    """Index of the window that decides the pair of sentences ``i``, ``j``: the one whose middle is nearest theirs."""
    mid = (i + j) / 2
    return min(range(len(starts)), key=lambda k: (abs(starts[k] + (size - 1) / 2 - mid), k))


def predict_debates(
    qt: Qt30Model, debates: Sequence[Debate], objective: str = "general", size: int = WINDOW
) -> list[list[tuple[str, str, str, float]]]:
    """Support / attack between the sentences of each debate, by the QT30 network.

    Returns:
        Per debate: ``(source sentence id, target sentence id, Support|Attack, probability)``,
        ordered by source then target.
    """
    from gnn.relations.live import dialogue_map

    maps, where = [], []
    for d, debate in enumerate(debates):
        starts = window_starts(len(debate.sentences), size)
        for k, s in enumerate(starts):
            e = min(len(debate.sentences), s + size)
            if e - s < 2:
                continue
            consecutive = [(t, t + 1) for t in range(e - s - 1)]
            maps.append(dialogue_map(f"{debate.id}@{s}", debate.texts[s:e], debate.speakers[s:e], consecutive))
            where.append((d, k, starts))
    out: list[list[tuple[str, str, str, float]]] = [[] for _ in debates]
    for (d, k, starts), rels in zip(where, qt.predict(maps, objective) if maps else [], strict=True):
        s, ids = starts[k], debates[d].sentences
        for a, b, lab, p in rels:
            i, j = s + int(a), s + int(b)
            if lab in FROM_QT30 and owner(i, j, starts, size) == k:
                out[d].append((ids[i], ids[j], FROM_QT30[lab], p))
    return [sorted(rows) for rows in out]


def score_transfer(pairs: Sequence[Pair], predicted: Sequence[Sequence[tuple[str, str, str, float]]]) -> dict[str, Any]:
    """Score predicted relations on the annotated pairs, the way the pairs are annotated (undirected).

    A pair is ``Attack`` when an attack is predicted between its sentences in either direction,
    else ``Support`` when a support is, else ``Neither``.

    Returns:
        ``pairs``, ``macro_f1`` (three classes), ``support_attack_f1`` (neither excluded, as
        MAMKit reports) and ``predicted`` (count per label on the pairs).
    """
    found: dict[frozenset[str], set[str]] = {}
    for rows in predicted:
        for a, b, lab, _ in rows:
            found.setdefault(frozenset((a, b)), set()).add(lab)
    gold, pred = [], []
    for p in pairs:
        labs = found.get(frozenset((p.source_id, p.target_id)), set())
        gold.append(LABELS.index(p.label))
        pred.append(2 if "Attack" in labs else 1 if "Support" in labs else 0)
    return {
        "pairs": len(pairs),
        "macro_f1": round(macro_f1(gold, pred, range(len(LABELS))), 4),
        "support_attack_f1": round(macro_f1(gold, pred, (1, 2)), 4),
        "predicted": {lab: pred.count(k) for k, lab in enumerate(LABELS)},
    }
