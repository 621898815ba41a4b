"""QT30 / DialAM-2024 argument maps as model inputs (task A: RA / CA / MA between I-nodes).

An :class:`ArgMap` is built from the records the AIF loader produces (Locution, Proposition and
Relation records plus AIF edges), never from the graph store. It keeps what the official test
input has — L-nodes, I-nodes and the TA transitions between locutions — and, when the map is
annotated, the gold RA/CA/MA relations and the gold L -> YA -> I anchoring (used only to measure
how well :func:`anchor_propositions` recovers it).

In the test form the I-nodes are unconnected, so each proposition's locution is recovered from
the texts alone (:func:`anchor_propositions`). AIF gives node order, ids and spacing no meaning
and ARG-tech's tools write maps in other orders and forms than AIFdb's exports, so every map is
put in an order read from its content (:func:`canonical`) before a model sees it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from ontology.aiftext import duplicates, normal_text, speaker_of, split_speaker
from ontology.records import EdgeRecord, LocutionRecord, NodeRecord, PropositionRecord, RelationRecord

RELATION_TYPES = ("RA", "CA", "MA")
_WORD = re.compile(r"[a-z0-9']+")


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
        anchors: Each I-node's locution as :func:`canonical` recovered it (``None``: not yet).
    """

    id: str
    name: str
    locutions: list[Loc] = field(default_factory=list)
    props: list[Prop] = field(default_factory=list)
    transitions: list[tuple[int, int]] = field(default_factory=list)
    gold: dict[tuple[int, int], str] = field(default_factory=dict)
    gold_anchor: dict[int, set[int]] = field(default_factory=dict)
    anchors: list[int] | None = None


def without_locutions(amap: ArgMap) -> ArgMap:
    """The map as a propositions-only map: its I-nodes and gold relations, no L-nodes or TA.

    Argument maps made without a dialogue (monological AIFdb maps, hand-drawn ones) look like this;
    the QT30 model tunes a decoding for them on such copies of its development maps.
    """
    return canonical(replace(amap, locutions=[], transitions=[], gold_anchor={}, anchors=None))


def edge_lists(edges: Iterable[EdgeRecord]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Per node id, the sources of the edges into it and the targets of the edges out of it."""
    into: dict[str, list[str]] = defaultdict(list)
    out: dict[str, list[str]] = defaultdict(list)
    for edge in edges:
        out[edge.source].append(edge.target)
        into[edge.target].append(edge.source)
    return into, out


def maps_from_records(nodes: Iterable[NodeRecord], edges: Iterable[EdgeRecord]) -> list[ArgMap]:
    """Group AIF loader records into :class:`ArgMap` objects, one per discourse, in input order.

    Relation nodes other than TA/RA/CA/MA (YA) only contribute the gold anchoring; RA/CA/MA nodes
    with several premises give one gold pair per premise, as the official scorer counts them.
    Each map is put in :func:`canonical` order, so that nothing downstream depends on the order,
    ids or spacing in which the file happened to be written.
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
                speaker = node.speaker or split_speaker(text)[0]
                amap.locutions.append(Loc(node.id, node.local_id or node.id, position, text, speaker, False))
            elif isinstance(node, PropositionRecord):
                kind[node.id] = (amap.id, "I", len(amap.props))
                amap.props.append(Prop(node.id, node.local_id or node.id, position, node.text or ""))
            else:
                kind[node.id] = (amap.id, node.aif_type or "", -1)
                rel_nodes.append(node)
    into, out = edge_lists(e for e in edges if e.source in kind and e.target in kind)
    for rel in rel_nodes:
        amap = maps[kind[rel.id][0]]
        sources = [kind[s] for s in into[rel.id]]
        targets = [kind[t] for t in out[rel.id]]
        if rel.aif_type == "TA":
            for _, st, si in sources:
                for _, tt, ti in targets:
                    if st == tt == "L" and si != ti:
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
    return [canonical(m) for m in maps.values()]


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two word lists."""
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


# Text anchoring: the share of the proposition's words the utterance says in order (LCS) plus the
# share of the utterance's words the proposition uses, minus 0.4 per proposition the locution
# already anchors (most locutions anchor one) and 0.5 for a copy without its original. Weights
# chosen against the YA anchoring of my_train's first 300 maps (by name); on the next 300 it
# finds a gold locution for 96.9% of 3,753 anchored I-nodes, without reading the file order (the
# former rule, word overlap plus closeness before the I-node in the file: 95.4%).
_PRECISION_WEIGHT = 1.0
_TAKEN_PENALTY = 0.4
_ORPHAN_PENALTY = 0.5
# LCS is computed for the locutions with the best bag-of-words score only (it is quadratic).
_LCS_CANDIDATES = 6


def anchor_propositions(amap: ArgMap) -> list[int]:
    """Recover each I-node's locution (index into ``amap.locutions``; -1 when the map has none).

    By text alone: propositions are taken from the most to the least certain, each into the
    locution that scores best (see the weights above); copies of other locutions (annotators'
    duplicates) are never chosen while an original exists. Ties go to the lower locution index,
    which :func:`canonical` makes independent of the file.
    """
    if amap.anchors is not None and len(amap.anchors) == len(amap.props):
        return list(amap.anchors)
    if not amap.locutions:
        return [-1] * len(amap.props)
    said = [split_speaker(loc.text)[1] for loc in amap.locutions]
    loc_words = [words(t) for t in said]
    loc_sets = [set(w) for w in loc_words]
    allowed = [k for k, loc in enumerate(amap.locutions) if not loc.duplicate] or list(range(len(amap.locutions)))
    # A copy whose original is not in the map ("Anna: Fiona Bruce : ..." alone) still carries its
    # words, but the annotators anchored propositions in it less often than in plain locutions.
    voices = {loc.speaker for loc in amap.locutions if loc.speaker}
    orphan = [split_speaker(t)[0] in voices for t in said]
    scores: list[dict[int, float]] = []
    for prop in amap.props:
        pw = words(prop.text)
        ps = set(pw)

        def rough(k: int, ps: set[str] = ps) -> float:
            inter = len(ps & loc_sets[k])
            return inter / max(len(ps), 1) + _PRECISION_WEIGHT * inter / max(len(loc_sets[k]), 1)

        best = sorted(allowed, key=lambda k: (-rough(k), k))[:_LCS_CANDIDATES]
        scores.append(
            {
                k: _lcs(pw, loc_words[k]) / max(len(pw), 1)
                + _PRECISION_WEIGHT * len(ps & loc_sets[k]) / max(len(loc_sets[k]), 1)
                - _ORPHAN_PENALTY * orphan[k]
                for k in best
            }
        )
    taken: dict[int, int] = defaultdict(int)
    out = [-1] * len(amap.props)
    order = sorted(range(len(amap.props)), key=lambda i: (-max(scores[i].values()), normal_text(amap.props[i].text), i))
    for i in order:
        k = max(scores[i], key=lambda k: (scores[i][k] - _TAKEN_PENALTY * taken[k], -k))
        out[i] = k
        taken[k] += 1
    return out


def _dialogue_order(n: int, succ: dict[int, set[int]], key: Sequence[str]) -> list[int]:
    """An order of ``n`` locutions from their transitions and texts alone.

    Each connected part of the transition graph is laid out in topological order (after a
    locution, its own successors first; among equals the smaller ``key``; a cycle is broken at the
    locution with the fewest pending predecessors), and the parts follow each other by the key of
    their first locution.
    """
    pred: dict[int, set[int]] = defaultdict(set)
    for a, bs in succ.items():
        for b in bs:
            pred[b].add(a)
    seen: set[int] = set()
    parts: list[list[int]] = []
    for start in sorted(range(n), key=lambda k: (key[k], k)):
        if start in seen:
            continue
        part: list[int] = []
        stack = [start]
        while stack:
            x = stack.pop()
            if x in seen:
                continue
            seen.add(x)
            part.append(x)
            stack.extend(succ.get(x, ()))
            stack.extend(pred.get(x, ()))
        pending = {x: len(pred.get(x, ())) for x in part}
        laid: list[int] = []
        left = set(part)
        while left:
            ready = [x for x in left if pending[x] == 0]
            follow = [x for x in ready if laid and x in succ.get(laid[-1], ())]
            pool = follow or ready or [min(left, key=lambda x: (pending[x], key[x], x))]
            x = min(pool, key=lambda x: (key[x], x))
            laid.append(x)
            left.discard(x)
            for y in succ.get(x, ()):
                if y in left:
                    pending[y] -= 1
            pending[x] = -1
        parts.append(laid)
    parts.sort(key=lambda p: ([key[x] for x in p], p[0]))
    return [x for p in parts for x in p]


def canonical(amap: ArgMap) -> ArgMap:
    """``amap`` with locutions and propositions in an order read from its content, not its file.

    Locutions: annotators' copies are marked (:func:`ontology.aiftext.duplicates`); the originals
    go in dialogue order (:func:`_dialogue_order` over the TA transitions), each followed by its
    copies. Propositions: by their text-anchored locution (:func:`anchor_propositions`), then by
    where their words fall in its utterance, then by text. Positions are renumbered in that
    order (locutions 0, 2, 4..., each proposition just after its locution; propositions 0, 1, 2...
    in a map without locutions), and transitions, gold relations and gold anchoring follow the new
    indices. Two files that differ only in node or
    edge order, ids, colon spacing, timestamps or schemes give the same map up to ids.
    """
    texts = [loc.text for loc in amap.locutions]
    dup = duplicates(texts)
    speakers = speaker_of(texts)
    key = [normal_text(t) for t in texts]
    # A copy of a text said twice ("No.") goes with the saying whose transitions' texts sort first,
    # not with whichever the file listed first.
    raw_next: dict[int, list[str]] = defaultdict(list)
    for a, b in amap.transitions:
        raw_next[a].append("<" + key[b])
        raw_next[b].append(">" + key[a])
    same_text: dict[str, list[int]] = defaultdict(list)
    for k in range(len(texts)):
        if dup[k] < 0:
            same_text[key[k]].append(k)
    for k in range(len(texts)):
        if dup[k] >= 0 and len(same_text[key[dup[k]]]) > 1:
            dup[k] = min(same_text[key[dup[k]]], key=lambda o: (sorted(raw_next[o]), o))
    succ: dict[int, set[int]] = defaultdict(set)
    pred: dict[int, set[int]] = defaultdict(set)
    for a, b in amap.transitions:
        a2, b2 = (dup[a] if dup[a] >= 0 else a), (dup[b] if dup[b] >= 0 else b)
        if a2 != b2:
            succ[a2].add(b2)
            pred[b2].add(a2)
    originals = [k for k in range(len(texts)) if dup[k] < 0]
    local = {k: r for r, k in enumerate(originals)}
    # Equal texts (a repeated "No.") are told apart by the texts around them, not by their index.
    sep = "\x00"
    context = [
        sep.join([key[k], *sorted(key[j] for j in succ.get(k, ())), sep, *sorted(key[j] for j in pred.get(k, ()))])
        for k in range(len(texts))
    ]
    laid = _dialogue_order(
        len(originals),
        {local[a]: {local[b] for b in bs} for a, bs in succ.items()},
        [context[k] for k in originals],
    )
    copies: dict[int, list[int]] = defaultdict(list)
    for k in range(len(texts)):
        if dup[k] >= 0:
            copies[dup[k]].append(k)
    loc_order: list[int] = []
    for r in laid:
        k = originals[r]
        loc_order.append(k)
        loc_order.extend(sorted(copies[k], key=lambda c: (key[c], c)))
    new_loc = {old: i for i, old in enumerate(loc_order)}
    locutions = [
        replace(
            amap.locutions[old],
            position=2 * i,
            speaker=speakers[old] or amap.locutions[old].speaker,
            duplicate=dup[old] >= 0,
        )
        for i, old in enumerate(loc_order)
    ]
    staged = replace(amap, locutions=locutions, props=list(amap.props), transitions=[], anchors=None)
    anchors = anchor_propositions(staged)

    def offset(i: int) -> float:
        if anchors[i] < 0:
            return 0.0
        uw = words(split_speaker(locutions[anchors[i]].text)[1])
        pw = set(words(amap.props[i].text))
        hits = [j for j, w in enumerate(uw) if w in pw]
        return sum(hits) / len(hits) if hits else float(len(uw))

    prop_order = sorted(
        range(len(amap.props)), key=lambda i: (anchors[i], offset(i), normal_text(amap.props[i].text), i)
    )
    new_prop = {old: i for i, old in enumerate(prop_order)}
    props = [
        replace(amap.props[old], position=2 * max(anchors[old], 0) + 1 if locutions else i)
        for i, old in enumerate(prop_order)
    ]
    transitions = sorted({(new_loc[a], new_loc[b]) for a, b in amap.transitions})
    return replace(
        amap,
        locutions=locutions,
        props=props,
        transitions=transitions,
        gold={(new_prop[a], new_prop[b]): lab for (a, b), lab in sorted(amap.gold.items())},
        # A YA from an annotator's copy anchors in the copied locution.
        gold_anchor={
            new_prop[i]: {new_loc[dup[k] if dup[k] >= 0 else k] for k in ks}
            for i, ks in sorted(amap.gold_anchor.items())
        },
        anchors=[anchors[old] for old in prop_order],
    )


def anchor_accuracy(maps: Sequence[ArgMap]) -> tuple[int, int]:
    """(right, total) over I-nodes with a gold anchor: recovered locution among the gold ones."""
    right = total = 0
    for amap in maps:
        anchors = anchor_propositions(amap)
        for i, gold in amap.gold_anchor.items():
            total += 1
            right += anchors[i] in gold
    return right, total
