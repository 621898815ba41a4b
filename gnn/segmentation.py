"""Boundary similarity B (Fournier 2013, "Evaluating Text Segmentation using Boundary Edit Distance").

A segmentation of ``n`` units is given by its segment masses (``[2, 3, 6]``: three segments
covering 11 units); its boundaries are the positions ``1..n-1`` after which a segment ends. Two
segmentations of the same units are compared by boundary edit distance:

* a boundary in both is a match;
* two boundaries, one in each segmentation, at most ``n_t - 1`` units apart and not matched
  otherwise, are one transposition (a near miss), weighted by ``distance / n_t``;
* every other boundary is an addition/deletion (a full miss), weighted 1.

``B = 1 - weighted edits / (matches + additions + transpositions)``, and 1 when neither
segmentation has a boundary. The edit set is the one of least weighted cost (ties broken towards
more transpositions), found by dynamic programming over the unmatched boundaries taken in
position order (a transposition pairs two neighbouring misses). With the defaults (``n_t = 2``,
one boundary type, as BAM uses) this reproduces ``segeval.boundary_similarity`` exactly, e.g.
``[2, 3, 6]`` vs ``[2, 2, 7]`` = 0.75, vs ``[5, 6]`` = 0.5, vs ``[2, 3, 3, 3]`` = 2/3.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class BoundaryCounts:
    """Edit counts of one comparison; they add up over documents for a pooled B."""

    matches: int = 0
    additions: int = 0
    transpositions: int = 0
    transposition_weight: float = 0.0

    @property
    def denominator(self) -> int:
        """Matches + additions + transpositions."""
        return self.matches + self.additions + self.transpositions

    @property
    def edits(self) -> float:
        """Weighted edits: one per addition, ``distance / n_t`` per transposition."""
        return self.additions + self.transposition_weight

    @property
    def similarity(self) -> float:
        """Boundary similarity of these counts (1.0 when there is no boundary at all)."""
        return 1.0 - self.edits / self.denominator if self.denominator else 1.0

    def __add__(self, other: BoundaryCounts) -> BoundaryCounts:
        return BoundaryCounts(
            self.matches + other.matches,
            self.additions + other.additions,
            self.transpositions + other.transpositions,
            self.transposition_weight + other.transposition_weight,
        )


def boundaries(masses: Sequence[int]) -> set[int]:
    """Boundary positions of a segmentation given as masses (``[2, 3, 6]`` -> ``{2, 5}``).

    Raises:
        ValueError: A mass below 1.
    """
    if any(m < 1 for m in masses):
        # An invariant of the callers (masses come from masses_from_labels), not user input.
        raise ValueError(f"segment masses must be >= 1, got {list(masses)}")
    return set(itertools.accumulate(masses[:-1]))


def masses_from_labels(labels: Sequence[object]) -> list[int]:
    """Masses of the maximal runs of equal labels (``a a b b b a`` -> ``[2, 3, 1]``)."""
    out: list[int] = []
    previous: object = object()
    for label in labels:
        if out and label == previous:
            out[-1] += 1
        else:
            out.append(1)
        previous = label
    return out


def boundary_counts(a: Sequence[int], b: Sequence[int], n_t: int = 2) -> BoundaryCounts:
    """Edit counts between two segmentations (masses) of the same number of units.

    Raises:
        ValueError: The segmentations cover different numbers of units, or ``n_t < 2``.
    """
    # Invariants of the callers (BAM segments the same tokens twice), not user input.
    if sum(a) != sum(b):
        raise ValueError(f"segmentations differ in length ({sum(a)} != {sum(b)} units)")
    if n_t < 2:
        raise ValueError("n_t must be at least 2")
    ba, bb = boundaries(a), boundaries(b)
    matches = len(ba & bb)
    # Unmatched boundaries in position order, each tagged with its side.
    misses = sorted([(p, 0) for p in ba - bb] + [(p, 1) for p in bb - ba])
    # best[i] = (cost, -transpositions, additions, transpositions, weight) over misses[:i].
    best: list[tuple[float, int, int, int, float]] = [(0.0, 0, 0, 0, 0.0)]
    for i in range(1, len(misses) + 1):
        cost, neg_t, adds, trans, weight = best[i - 1]
        options = [(cost + 1.0, neg_t, adds + 1, trans, weight)]
        if i >= 2:
            (p1, s1), (p2, s2) = misses[i - 2], misses[i - 1]
            distance = p2 - p1
            if s1 != s2 and distance < n_t:
                c, nt, ad, tr, w = best[i - 2]
                options.append((c + distance / n_t, nt - 1, ad, tr + 1, w + distance / n_t))
        best.append(min(options, key=lambda o: (round(o[0], 12), o[1])))
    _, _, additions, transpositions, weight = best[-1]
    return BoundaryCounts(matches, additions, transpositions, weight)


def boundary_similarity(a: Sequence[int], b: Sequence[int], n_t: int = 2) -> float:
    """Boundary similarity B of two segmentations given as masses (symmetric in ``a`` and ``b``)."""
    return boundary_counts(a, b, n_t).similarity
