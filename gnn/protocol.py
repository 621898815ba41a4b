"""The evaluation protocol shared by the tasks: grouped k-fold cross-validation and its summary.

A single small held-out part of a corpus has repeatedly overstated what carries over to the
official test splits, so figures are out-of-fold: the items (maps, dialogues, papers) are split
into ``k`` folds by group (episode, session, game, paper, interview), so that no group is in
both the training and the scored part of a fold; everything a model chooses (epochs, thresholds,
decodings) is chosen inside the training part; a figure is the mean over folds with its spread.
"""

from __future__ import annotations

import hashlib
import math
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ontology.errors import ClientError


def _rank(seed: object, group: str) -> str:
    return hashlib.sha1(f"{seed}:{group}".encode()).hexdigest()


def seeded_share(seed: object, key: str) -> float:
    """A number in [0, 1] fixed by ``sha1(seed:key)``: where ``key`` falls in a seeded split."""
    return int(_rank(seed, key)[:8], 16) / 0xFFFFFFFF


def grouped_folds(groups: Sequence[str], k: int, seed: int = 0) -> list[int]:
    """The fold (0..k-1) of each item, whole groups at a time, folds as equal in size as groups allow.

    Groups are dealt largest first (ties in a seeded order that does not depend on the input
    order) to the fold with the fewest items so far.

    Raises:
        ClientError: ``k`` < 2, or fewer groups than folds (the caller asked for more folds than the data allow).
    """
    sizes = Counter(groups)
    if k < 2:
        raise ClientError(f"cross-validation needs at least 2 folds, not {k}")
    if len(sizes) < k:
        raise ClientError(f"{len(sizes)} group(s) cannot fill {k} folds; ask for at most {len(sizes)}")
    load = [0] * k
    fold_of: dict[str, int] = {}
    for group in sorted(sizes, key=lambda g: (-sizes[g], _rank(seed, g))):
        fold = min(range(k), key=lambda f: (load[f], f))
        fold_of[group] = fold
        load[fold] += sizes[group]
    return [fold_of[g] for g in groups]


def spread(values: Sequence[float]) -> dict[str, Any]:
    """Mean, sample standard deviation and the per-fold values, rounded to 4 places.

    A fold where the figure is undefined (NaN: an AUC over one class) is shown as ``None`` and left
    out of the mean and the standard deviation.
    """
    vals = [float(v) for v in values]
    defined = [v for v in vals if not math.isnan(v)]
    return {
        "mean": round(statistics.fmean(defined), 4) if defined else None,
        "std": round(statistics.stdev(defined), 4) if len(defined) > 1 else 0.0,
        "folds": [None if math.isnan(v) else round(v, 4) for v in vals],
    }


@dataclass(frozen=True)
class Fold:
    """One fold of the protocol: item indices that train, that choose the settings, and that are scored.

    Attributes:
        index: The fold number (0..k-1).
        train: Items the models are fitted on.
        tune: Items, whole groups of the training folds, that choose every epoch, threshold,
            offset and decoding (empty when the training folds hold a single group).
        test: The held-out fold: only scored, never seen before scoring.
    """

    index: int
    train: list[int]
    tune: list[int]
    test: list[int]


def tuning_part(groups: Sequence[str], seed: int, share: float = 0.1) -> list[bool]:
    """Which items form the tuning part: whole groups, about ``share`` of the items.

    The items are dealt by group into ``round(1 / share)`` parts (:func:`grouped_folds`, as many
    as there are groups when fewer) and the part nearest ``share`` of the items is chosen (the
    first part holds the largest group, often far more). With a single group: none.
    """
    n_groups = len(set(groups))
    if n_groups < 2:
        return [False] * len(groups)
    part_of = grouped_folds(groups, min(max(2, round(1 / share)), n_groups), seed)
    sizes = Counter(part_of)
    chosen = min(sizes, key=lambda p: (abs(sizes[p] - share * len(groups)), p))
    return [p == chosen for p in part_of]


def fold_plan(groups: Sequence[str], k: int, seed: int = 0, tune_share: float = 0.1) -> list[Fold]:
    """The ``k`` folds of items grouped by ``groups``, each with its tuning part inside the training folds.

    Fold ``f`` scores the items of :func:`grouped_folds` fold ``f``; of the other items, whole
    groups making about ``tune_share`` of them (:func:`tuning_part`, seeded by ``seed + 1 + f``,
    as :func:`gnn.relations.qt30_run.cross_validate_qt30` does) choose the settings, the rest train.

    Raises:
        ValueError: ``k`` < 2, or fewer groups than folds.
    """
    fold_of = grouped_folds(groups, k, seed)
    plan = []
    for fold in range(k):
        rest = [i for i, f in enumerate(fold_of) if f != fold]
        tune = tuning_part([groups[i] for i in rest], seed + 1 + fold, tune_share)
        plan.append(
            Fold(
                fold,
                [i for i, t in zip(rest, tune, strict=True) if not t],
                [i for i, t in zip(rest, tune, strict=True) if t],
                [i for i, f in enumerate(fold_of) if f == fold],
            )
        )
    return plan


class Pooled:
    """Predicted against gold counts per label, summed over the held-out folds."""

    def __init__(self) -> None:
        """An empty tally."""
        self.counts: dict[str, dict[str, int]] = {}

    def add(self, label: str, gold: int, predicted: int, right: int) -> None:
        """Add one fold's counts of ``label``."""
        row = self.counts.setdefault(label, {"gold": 0, "predicted": 0, "right": 0})
        row["gold"] += gold
        row["predicted"] += predicted
        row["right"] += right

    def add_pairs(self, gold: Iterable[tuple[Any, str]], predicted: Iterable[tuple[Any, str]]) -> None:
        """Add ``(key, label)`` items of one fold: a prediction is right when its key has that gold label."""
        gold_of = dict(gold)
        pred_of = dict(predicted)
        for label in sorted(set(gold_of.values()) | set(pred_of.values())):
            self.add(
                label,
                sum(1 for v in gold_of.values() if v == label),
                sum(1 for v in pred_of.values() if v == label),
                sum(1 for k, v in pred_of.items() if v == label and gold_of.get(k) == label),
            )

    def merge(self, other: Pooled) -> None:
        """Add every count of ``other``."""
        for label, c in other.counts.items():
            self.add(label, c["gold"], c["predicted"], c["right"])

    def as_dict(self) -> dict[str, dict[str, Any]]:
        """Per label: gold, predicted, right and recall (``None`` without gold), labels sorted."""
        return {
            label: {**c, "recall": round(c["right"] / c["gold"], 4) if c["gold"] else None}
            for label, c in sorted(self.counts.items())
        }


def figures_of(values: dict[str, list[float]]) -> dict[str, dict[str, Any]]:
    """:func:`spread` of each figure's per-fold values."""
    return {name: spread(v) for name, v in values.items()}


def group_summary(groups: Sequence[str], plan: Sequence[Fold]) -> list[dict[str, int]]:
    """Per fold: how many items and groups train, tune and are scored."""
    out = []
    for fold in plan:
        row = {}
        for part in ("train", "tune", "test"):
            idx = getattr(fold, part)
            row[part] = len(idx)
            row[f"{part}_groups"] = len({groups[i] for i in idx})
        out.append(row)
    return out


@dataclass
class FoldOutcome:
    """What one fold of a task's cross-validation measured on its held-out part.

    Attributes:
        figures: The fold's figures (name -> value); each becomes a mean ± std over folds.
        labels: Predicted against gold per label on the held-out part, per decoding (``""`` when
            the task has one): ``(key, label)`` pairs of gold and of predictions, or counts.
        chosen: What was chosen inside the training folds (epochs, thresholds, offsets ...).
        extra: Anything else worth keeping in the fold's row (names of held-out papers ...).
    """

    figures: dict[str, float]
    labels: dict[str, Pooled] = field(default_factory=dict)
    chosen: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def cross_validate(
    groups: Sequence[str],
    run_fold: Callable[[Fold], FoldOutcome],
    folds: int,
    seed: int,
    protocol: str,
    *,
    tune_share: float = 0.1,
    log: Callable[[str], None] = lambda _msg: None,
    what: str = "cross-validation",
) -> dict[str, Any]:
    """Run a task's grouped ``folds``-fold cross-validation and summarise it the one way every task is reported.

    Args:
        groups: The group of each item (episode, session, game, paper, interview).
        run_fold: Trains on ``fold.train``, chooses every setting on ``fold.tune`` and scores
            ``fold.test`` only.
        folds: Number of folds.
        seed: Seed of the folds (and of their tuning parts).
        protocol: One sentence on how the task is cut and scored, printed with the figures.
        tune_share: Share of the training folds' items (whole groups) that tunes.
        log: Receives a line per fold.
        what: Names the run in the log lines.

    Returns:
        ``protocol``; ``items`` and ``groups`` counts; ``figures`` (mean, std and per-fold value of
        each figure); ``labels`` (predicted against gold per label pooled over the held-out folds,
        per decoding when the task has several); ``folds`` (per fold: sizes, what was chosen, the
        figures, seconds); ``seconds``.

    Raises:
        ValueError: ``folds`` < 2, or fewer groups than folds.
    """
    start = time.perf_counter()
    plan = fold_plan(groups, folds, seed, tune_share)
    values: dict[str, list[float]] = {}
    pooled: dict[str, Pooled] = {}
    rows = []
    for fold, sizes in zip(plan, group_summary(groups, plan), strict=True):
        log(f"{what}: fold {fold.index + 1}/{folds}")
        t0 = time.perf_counter()
        outcome = run_fold(fold)
        for name, value in outcome.figures.items():
            values.setdefault(name, []).append(float(value))
        for decoding, tally in outcome.labels.items():
            pooled.setdefault(decoding, Pooled()).merge(tally)
        rows.append(
            {
                "fold": fold.index,
                **sizes,
                "chosen": outcome.chosen,
                # NaN (undefined on this fold) as null: the summary stays valid JSON.
                "figures": {k: None if math.isnan(v) else round(float(v), 4) for k, v in outcome.figures.items()},
                **outcome.extra,
                "seconds": round(time.perf_counter() - t0, 1),
            }
        )
        log(f"{what}: fold {fold.index + 1}: " + ", ".join(f"{k} {v:.4f}" for k, v in outcome.figures.items()))
    labels: dict[str, Any] = {name: tally.as_dict() for name, tally in sorted(pooled.items())}
    return {
        "protocol": f"{protocol}; {folds} folds of whole groups, seed {seed}; out-of-fold mean and std over folds",
        "items": len(groups),
        "groups": len(set(groups)),
        "figures": figures_of(values),
        "labels": labels[""] if set(labels) == {""} else labels,
        "folds": rows,
        "seconds": round(time.perf_counter() - start, 1),
    }
