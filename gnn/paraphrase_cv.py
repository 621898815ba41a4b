"""ContextDeP highlighting under the grouped cross-validation protocol (folds by interview).

Pairs are grouped by their MediaSum interview (the question id ``CNN-378275-5`` is question 5 of
interview ``CNN-378275``), so no interview is on both sides of a fold. Each fold
(:func:`gnn.protocol.cross_validate`) trains :func:`gnn.paraphrase.train_highlighter` on its
training part, which chooses the epoch and the logit offset on the fold's tuning part (whole
interviews of the training folds, about a tenth) only; the held-out fold is scored once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from gnn.paraphrase import Highlighter, HighlighterConfig, train_highlighter
from gnn.paraphrase_eval import PairPrediction, ParaphrasePair, score_predictions
from gnn.protocol import Fold, FoldOutcome, cross_validate
from gnn.trainer import FitResult

Trainer = Callable[..., tuple[Highlighter, FitResult, dict[str, float | int]]]
"""``(train, tune, config, *, encoder_dir, cache_dir) -> (model, fit, tuning figures)``, as
:func:`gnn.paraphrase.train_highlighter`."""

FIGURES = ("f1", "precision", "recall", "accuracy", "jaccard_guest", "jaccard_host", "floor_f1")


def pair_auc(pairs: Sequence[ParaphrasePair], predictions: Sequence[PairPrediction]) -> float:
    """ROC AUC of the pair score (:attr:`PairPrediction.score`) against the gold pair labels.

    How well the score ranks paraphrases above the rest whatever the threshold: 0.5 means no
    decision rule on that score can beat the all-paraphrase floor by much. NaN when the pairs hold
    one class only.
    """
    from sklearn.metrics import roc_auc_score

    by_qid = {p.qid: p.score for p in predictions}
    gold = [int(p.label) for p in pairs]
    if len(set(gold)) < 2:
        return float("nan")
    return float(roc_auc_score(gold, [by_qid[p.qid] for p in pairs]))


def run_fold(
    pairs: Sequence[ParaphrasePair],
    fold: Fold,
    config: HighlighterConfig,
    cache_dir: Path | None = None,
    encoder_dir: Path | None = None,
    trainer: Trainer = train_highlighter,
) -> tuple[FoldOutcome, list[PairPrediction]]:
    """Train on ``fold.train`` with ``trainer``, choose on ``fold.tune``, then predict ``fold.test``.

    Returns:
        The fold's outcome (the held-out figures, predicted against gold pairs, the chosen epoch
        and offset) and its held-out predictions.
    """
    train, tune, test = ([pairs[i] for i in part] for part in (fold.train, fold.tune, fold.test))
    model, fit, _ = trainer(train, tune, replace(config), encoder_dir=encoder_dir, cache_dir=cache_dir)
    predictions = model.predict(test)
    scores = score_predictions(test, predictions)
    figures = {name: float(getattr(scores, name)) for name in FIGURES}
    figures["pair_auc"] = pair_auc(test, predictions)
    chosen = {"epoch": fit.best_epoch, "bias": model.config.bias}
    return FoldOutcome(figures, {"": scores.labels()}, chosen), predictions


def cross_validate_paraphrase(
    pairs: Sequence[ParaphrasePair],
    config: HighlighterConfig,
    folds: int = 5,
    seed: int = 13,
    *,
    cache_dir: Path | None = None,
    encoder_dir: Path | None = None,
    log: Callable[[str], None] = lambda _msg: None,
    trainer: Trainer = train_highlighter,
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
        trainer: Trains a fold's highlighter (default the shipped kind's :func:`gnn.paraphrase.train_highlighter`;
            ``experiments/paraphrase_finetune.py`` passes its fine-tuned one).

    Returns:
        :func:`gnn.protocol.cross_validate`'s summary (labels ``paraphrase`` / ``not_paraphrase``),
        with ``pairs``, ``interviews`` and ``pooled`` (the figures of all held-out predictions together).
    """
    held: list[ParaphrasePair] = []
    predictions: list[PairPrediction] = []

    def fold_run(fold: Fold) -> FoldOutcome:
        outcome, predicted = run_fold(pairs, fold, config, cache_dir, encoder_dir, trainer)
        held.extend(pairs[i] for i in fold.test)
        predictions.extend(predicted)
        return outcome

    groups = [p.interview for p in pairs]
    protocol = (
        "ContextDeP highlighting grouped by interview (the question id without its last part); in each fold "
        "about 1/10 of the training pairs (whole interviews) choose the epoch and the logit offset; figures of "
        "the held-out fold"
    )
    out = cross_validate(groups, fold_run, folds, seed, protocol, log=log, what="ContextDeP cross-validation")
    pooled: dict[str, Any] = dict(score_predictions(held, predictions).as_dict())
    # Across folds the scores come from different models and offsets: a rough figure beside the folds' own.
    auc = pair_auc(held, predictions)
    pooled["pair_auc"] = None if math.isnan(auc) else auc
    return {**out, "pairs": len(pairs), "interviews": len(set(groups)), "pooled": pooled}
