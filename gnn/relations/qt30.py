"""Features and graphs of QT30 / DialAM-2024 task A.

For each map: candidate ordered I-node pairs (within ``window`` I-nodes of each other, or whose
anchoring locutions are linked by a TA transition in either direction), structural pair features,
and a typed graph over I- and L-nodes for the relational GNN (I anchored in L, L -TA-> L, and the
file order of I- and L-nodes, each relation in both directions).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gnn.relations.argmap import ArgMap, anchor_propositions, words
from gnn.relations.family import PairTensors

LABELS = ("none", "RA", "CA", "MA")
# Edge types of the map graph (each a direction of one relation).
EDGE_TYPES = ("anchor", "anchored", "ta_out", "ta_in", "next_i", "prev_i", "next_l", "prev_l")
N_PAIR_FEATURES = 27
N_LOC_FEATURES = 5
N_PROP_FEATURES = 4


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


def map_tensors(amap: ArgMap, window: int = 8) -> MapTensors:
    """Candidate pairs, features and typed graph of one map (gold anchoring is never used)."""
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
