"""Features and graphs of QT30 / DialAM-2024 task A.

For each map: candidate ordered I-node pairs (within ``window`` I-nodes of each other, or whose
anchoring locutions are linked by a TA transition in either direction), structural pair features,
and a typed graph over I- and L-nodes for the relational GNN (I anchored in L, L -TA-> L, and the
file order of I- and L-nodes, each relation in both directions).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gnn.relations.argmap import ArgMap, anchor_propositions, words
from gnn.relations.family import PairTensors
from ontology.aiftext import split_speaker

LABELS = ("none", "RA", "CA", "MA")
# Edge types of the map graph (each a direction of one relation).
EDGE_TYPES = ("anchor", "anchored", "ta_out", "ta_in", "next_i", "prev_i", "next_l", "prev_l")
N_PAIR_FEATURES = 27
N_LOC_FEATURES = 5
N_PROP_FEATURES = 4
# Conflict cues appended to the pair features when a recipe asks for them (``cues``).
N_CUE_FEATURES = 9
NEGATIONS = frozenset(("not", "no", "never", "nobody", "nothing", "none", "neither", "nor", "cannot"))
# Markers of contrast or disagreement at the start of a turn ("but ...", "no, ...").
CONTRAST_OPENERS = ("but", "however", "no", "yet", "although", "though", "well", "actually", "except")
DISAGREEMENT = (
    "i disagree",
    "not true",
    "that's wrong",
    "that is wrong",
    "you're wrong",
    "not the case",
    "nonsense",
    "rubbish",
    "absolutely not",
    "of course not",
    "actually",
    "on the contrary",
)


@dataclass
class MapTensors(PairTensors):
    """One map as arrays: its I-nodes (``texts``, ``prop_feats`` with ``N_PROP_FEATURES`` columns, pair
    features with ``N_PAIR_FEATURES``) and its L-nodes; graph node ids are I-nodes first, then locutions.

    Attributes:
        n_props: Number of I-nodes.
        n_locs: Number of L-nodes.
        loc_feats: ``(n_locs, N_LOC_FEATURES)``.
    """

    n_props: int
    n_locs: int
    loc_feats: np.ndarray


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _utterance(text: str) -> str:
    """A locution's words after its ``Speaker : `` prefix, lower-cased, with typographic apostrophes plain."""
    return split_speaker(text)[1].lower().replace("\u2019", "'")


def _negated(tokens: Sequence[str]) -> bool:
    return any(w in NEGATIONS or w.endswith("n't") for w in tokens)


def _opens_with_contrast(utterance: str) -> bool:
    first = words(utterance)[:1]
    return bool(first) and first[0] in CONTRAST_OPENERS


def conflict_cues(amap: ArgMap, anchors: Sequence[int], pairs: np.ndarray) -> np.ndarray:
    """``(len(pairs), N_CUE_FEATURES)`` lexical and turn cues of conflict for source -> target pairs.

    Per side: negation in the proposition or its locution, a contrast opener ("but", "no", ...) at
    the start of the locution, a phrase of disagreement in it; for the pair: one side negated and
    the other not, times the word overlap (a polarity flip of the same content), and whether the
    source answers the target's speaker (different speakers, the target's locution is in that
    speaker's last turn before the source's).
    """
    utter = [_utterance(loc.text) for loc in amap.locutions]
    negated_loc = [_negated(words(u)) for u in utter]
    opens = [_opens_with_contrast(u) for u in utter]
    disagrees = [any(p in u for p in DISAGREEMENT) for u in utter]
    pwords = [words(p.text.replace("\u2019", "'")) for p in amap.props]
    negated_prop = [_negated(w) for w in pwords]
    sets = [set(w) - NEGATIONS for w in pwords]
    speakers = [loc.speaker for loc in amap.locutions]
    # Turns: runs of consecutive locutions by one speaker; for each turn, each speaker's latest earlier turn.
    turn: list[int] = []
    for k, spk in enumerate(speakers):
        turn.append(0 if k == 0 else turn[-1] + (spk != speakers[k - 1]))
    last_of: dict[int, dict[str | None, int]] = {}
    seen: dict[str | None, int] = {}
    for k, spk in enumerate(speakers):
        last_of.setdefault(turn[k], dict(seen))
        seen[spk] = turn[k]

    def side(i: int) -> tuple[float, float, float]:
        a = anchors[i]
        if a < 0:
            return float(negated_prop[i]), 0.0, 0.0
        return float(negated_prop[i] or negated_loc[a]), float(opens[a]), float(disagrees[a])

    out = np.zeros((len(pairs), N_CUE_FEATURES), dtype=np.float32)
    for k, (i, j) in enumerate(pairs.tolist()):
        si, sj = side(i), side(j)
        ai, aj = anchors[i], anchors[j]
        overlap = _jaccard(sets[i], sets[j])
        flip = si[0] != sj[0]
        other = ai >= 0 and aj >= 0 and speakers[ai] is not None and speakers[aj] is not None
        other = other and speakers[ai] != speakers[aj]
        answers = other and turn[aj] < turn[ai] and last_of[turn[ai]].get(speakers[aj]) == turn[aj]
        out[k] = (*si, *sj, flip * overlap, float(other), float(answers))
    return out


def map_tensors(amap: ArgMap, window: int = 8, cues: bool = False) -> MapTensors:
    """Candidate pairs, features and typed graph of one map (gold anchoring is never used).

    ``cues`` appends the :func:`conflict_cues` columns to the pair features.
    """
    n, m = len(amap.props), len(amap.locutions)
    anchors = anchor_propositions(amap)
    ta = set(amap.transitions)
    ta_out: dict[int, set[int]] = {}
    ta_in: dict[int, set[int]] = {}
    for a, b in ta:
        ta_out.setdefault(a, set()).add(b)
        ta_in.setdefault(b, set()).add(a)
    speakers = [loc.speaker for loc in amap.locutions]
    question = [("?" in loc.text) for loc in amap.locutions]
    pwords = [set(words(p.text)) for p in amap.props]

    def two_hop(a: int, b: int) -> bool:
        return any(b in ta_out.get(x, ()) for x in ta_out.get(a, ()))

    # Candidate pairs: near in I-node order, or anchored in TA-linked locutions.
    cand: set[tuple[int, int]] = set()
    for i in range(n):
        for j in range(max(0, i - window), min(n, i + window + 1)):
            if i != j:
                cand.add((i, j))
    by_loc: dict[int, list[int]] = {}
    for i, a in enumerate(anchors):
        by_loc.setdefault(a, []).append(i)
    for a, b in ta:
        for i in by_loc.get(a, ()):
            for j in by_loc.get(b, ()):
                if i != j:
                    cand.add((i, j))
                    cand.add((j, i))
    pairs = np.array(sorted(cand), dtype=np.int64).reshape(-1, 2)
    feats = np.zeros((len(pairs), N_PAIR_FEATURES), dtype=np.float32)
    labels = np.zeros(len(pairs), dtype=np.int64)
    logn = np.log1p(n) / 5.0
    for k, (i, j) in enumerate(pairs.tolist()):
        ai, aj = anchors[i], anchors[j]
        d = j - i
        fw = aj in ta_out.get(ai, ())
        bw = ai in ta_out.get(aj, ())
        same_spk = ai >= 0 and aj >= 0 and speakers[ai] is not None and speakers[ai] == speakers[aj]
        inter = pwords[i] & pwords[j]
        feats[k] = (
            fw,
            bw,
            two_hop(ai, aj),
            two_hop(aj, ai),
            ai == aj,
            np.clip(d, -10, 10) / 10.0,
            abs(d) == 1,
            abs(d) == 2,
            d > 0,
            np.clip(aj - ai, -20, 20) / 20.0,
            same_spk,
            fw and not same_spk,
            bw and not same_spk,
            _jaccard(pwords[i], pwords[j]),
            len(inter) / max(len(pwords[i]), 1),
            len(inter) / max(len(pwords[j]), 1),
            question[ai] if ai >= 0 else 0.0,
            question[aj] if aj >= 0 else 0.0,
            len(ta_out.get(ai, ())) / 3.0,
            len(ta_in.get(ai, ())) / 3.0,
            len(ta_out.get(aj, ())) / 3.0,
            len(ta_in.get(aj, ())) / 3.0,
            len(by_loc.get(ai, ())) / 3.0,
            len(by_loc.get(aj, ())) / 3.0,
            i / max(n - 1, 1),
            logn,
            1.0,
        )
        labels[k] = LABELS.index(amap.gold[(i, j)]) if (i, j) in amap.gold else 0
    if cues:
        feats = np.concatenate([feats, conflict_cues(amap, anchors, pairs)], axis=1)

    prop_feats = np.array(
        [
            (k / max(n - 1, 1), logn, len(by_loc.get(anchors[k], ())) / 3.0, min(len(pwords[k]), 40) / 40.0)
            for k in range(n)
        ],
        dtype=np.float32,
    ).reshape(n, N_PROP_FEATURES)
    loc_feats = np.array(
        [
            (
                question[k],
                k > 0 and speakers[k] != speakers[k - 1],
                len(ta_out.get(k, ())) / 3.0,
                len(ta_in.get(k, ())) / 3.0,
                amap.locutions[k].duplicate,
            )
            for k in range(m)
        ],
        dtype=np.float32,
    ).reshape(m, N_LOC_FEATURES)

    src: list[int] = []
    dst: list[int] = []
    typ: list[int] = []

    def add(a: int, b: int, kind: str, back: str) -> None:
        src.extend((a, b))
        dst.extend((b, a))
        typ.extend((EDGE_TYPES.index(kind), EDGE_TYPES.index(back)))

    for i, a in enumerate(anchors):
        if a >= 0:
            add(n + a, i, "anchor", "anchored")
    for a, b in ta:
        add(n + a, n + b, "ta_out", "ta_in")
    for i in range(n - 1):
        add(i, i + 1, "next_i", "prev_i")
    for a in range(m - 1):
        add(n + a, n + a + 1, "next_l", "prev_l")
    edges = np.array([src, dst, typ], dtype=np.int64).reshape(3, -1)
    return MapTensors(
        name=amap.name,
        texts=[p.text for p in amap.props],
        prop_feats=prop_feats,
        edges=edges,
        pairs=pairs,
        pair_feats=feats,
        labels=labels,
        gold=dict(amap.gold),
        n_props=n,
        n_locs=m,
        loc_feats=loc_feats,
    )


def candidate_recall(tensors: list[MapTensors]) -> float:
    """Share of gold relations that are candidate pairs (the ceiling of recall)."""
    total = hit = 0
    for t in tensors:
        cand = set(map(tuple, t.pairs.tolist()))
        total += len(t.gold)
        hit += sum(1 for p in t.gold if p in cand)
    return hit / total if total else 1.0
