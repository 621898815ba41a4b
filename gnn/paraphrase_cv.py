"""ContextDeP highlighting under the grouped cross-validation protocol (folds by interview).

Pairs are grouped by their MediaSum interview (the question id ``CNN-378275-5`` is question 5 of
interview ``CNN-378275``), so no interview is on both sides of a fold. In each fold the training
folds' pairs are split by interview into a training part and a tuning part (about a tenth,
:func:`gnn.protocol.fold_plan`); :func:`gnn.paraphrase.train_highlighter` chooses the epoch and
the logit offset on the tuning part only, and the held-out fold is scored once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from gnn.paraphrase import HighlighterConfig, train_highlighter
from gnn.paraphrase_eval import PairPrediction, ParaphrasePair, score_predictions
from gnn.protocol import Fold, Pooled, figures_of, fold_plan, group_summary

FIGURES = ("f1", "precision", "recall", "accuracy", "jaccard_guest", "jaccard_host", "floor_f1")


def _label(paraphrase: bool) -> str:
    return "paraphrase" if paraphrase else "not_paraphrase"


def run_fold(
    pairs: Sequence[ParaphrasePair],
    fold: Fold,
    config: HighlighterConfig,
    cache_dir: Path | None = None,
    encoder_dir: Path | None = None,
) -> tuple[dict[str, Any], list[PairPrediction]]:
    """Train on ``fold.train``, choose on ``fold.tune``, then predict ``fold.test``.

    Returns:
        The fold's row (``chosen``: the epoch and offset; ``scores``: the held-out figures) and its
        held-out predictions.
    """
    train, tune, test = ([pairs[i] for i in part] for part in (fold.train, fold.tune, fold.test))
    model, fit, _ = train_highlighter(train, tune, replace(config), encoder_dir=encoder_dir, cache_dir=cache_dir)
    predictions = model.predict(test)
    chosen = {"epoch": fit.best_epoch, "bias": model.config.bias}
    return {"fold": fold.index, "chosen": chosen, "scores": score_predictions(test, predictions).as_dict()}, predictions


def cross_validate_paraphrase(
    pairs: Sequence[ParaphrasePair],
    config: HighlighterConfig,
    folds: int = 5,
    seed: int = 13,
    *,
    cache_dir: Path | None = None,
    encoder_dir: Path | None = None,
    log: Callable[[str], None] = lambda _msg: None,
) -> dict[str, Any]:
    """Out-of-fold figures of the highlighter recipe ``config`` on ``pairs``, folds by interview.

    Args:
        pairs: Labelled pairs (every file of the run pooled).
        config: The recipe (a profile's configuration); each fold trains a copy.
        folds: Number of folds.
        seed: Seed of the folds (the models use ``config.seed``).
        cache_dir: Pair-encoding cache.
        encoder_dir: A local encoder directory instead of the packaged MiniLM.
        log: Receives a line per fold.

    Returns:
        ``figures`` (mean, std and per-fold values of each figure), ``pooled`` (the figures of all
        held-out predictions together), ``labels`` (predicted against gold per label, pooled),
        ``folds`` (per fold: chosen epoch and offset, sizes), protocol, seconds.
    """
    start = time.perf_counter()
    groups = [p.interview for p in pairs]
    plan = fold_plan(groups, folds, seed)
    values: dict[str, list[float]] = {}
    pooled = Pooled()
    rows = []
    predictions: list[PairPrediction] = []
    for fold, sizes in zip(plan, group_summary(groups, plan), strict=True):
        log(f"ContextDeP cross-validation: fold {fold.index + 1}/{folds}")
        row, preds = run_fold(pairs, fold, config, cache_dir, encoder_dir)
        rows.append({**row, **sizes})
        predictions += preds
        for name in FIGURES:
            values.setdefault(name, []).append(float(row["scores"][name]))
        test = [pairs[i] for i in fold.test]
        pooled.add_pairs([(p.qid, _label(p.label)) for p in test], [(p.qid, _label(p.paraphrase)) for p in preds])
    held = [pairs[i] for fold in plan for i in fold.test]
    return {
        "protocol": (
            f"{folds}-fold cross-validation grouped by interview (the question id without its last part), "
            f"seed {seed}; in each fold about 1/10 of the training pairs (whole interviews) choose the epoch and "
            "the logit offset; figures of the held-out fold, mean and std over folds"
        ),
        "pairs": len(pairs),
        "interviews": len(set(groups)),
        "figures": figures_of(values),
        "pooled": score_predictions(held, predictions).as_dict(),
        "labels": pooled.as_dict(),
        "folds": rows,
        "seconds": round(time.perf_counter() - start, 1),
    }
