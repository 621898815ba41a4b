"""The evaluation protocol shared by the tasks: grouped k-fold cross-validation and its summary.

A single small held-out part of a corpus has repeatedly overstated what carries over to the
official test splits, so figures are out-of-fold: the items (maps, dialogues, papers) are split
into ``k`` folds by group (episode, session, game, paper, interview), so that no group is in
both the training and the scored part of a fold; everything a model chooses (epochs, thresholds,
decodings) is chosen inside the training part; a figure is the mean over folds with its spread.
"""

from __future__ import annotations

import hashlib
import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any


def _rank(seed: int, group: str) -> str:
    return hashlib.sha1(f"{seed}:{group}".encode()).hexdigest()


def grouped_folds(groups: Sequence[str], k: int, seed: int = 0) -> list[int]:
    """The fold (0..k-1) of each item, whole groups at a time, folds as equal in size as groups allow.

    Groups are dealt largest first (ties in a seeded order that does not depend on the input
    order) to the fold with the fewest items so far.

    Raises:
        ValueError: ``k`` < 2, or fewer groups than folds.
    """
    sizes = Counter(groups)
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, not {k}")
    if len(sizes) < k:
        raise ValueError(f"{len(sizes)} group(s) cannot fill {k} folds")
    load = [0] * k
    fold_of: dict[str, int] = {}
    for group in sorted(sizes, key=lambda g: (-sizes[g], _rank(seed, g))):
        fold = min(range(k), key=lambda f: (load[f], f))
        fold_of[group] = fold
        load[fold] += sizes[group]
    return [fold_of[g] for g in groups]


def spread(values: Sequence[float]) -> dict[str, Any]:
    """Mean, sample standard deviation and the per-fold values, rounded to 4 places."""
    vals = [float(v) for v in values]
    return {
        "mean": round(statistics.fmean(vals), 4) if vals else None,
        "std": round(statistics.stdev(vals), 4) if len(vals) > 1 else 0.0,
        "folds": [round(v, 4) for v in vals],
    }
