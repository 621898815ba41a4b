"""Which rule chooses the paraphrase task's cuts, and on which pair score: compared on the same scores.

The decision rule (:func:`gnn.paraphrase.choose_cuts`) calls a pair a paraphrase at or above the
lowest pair score whose calls were right at least two times in three on out-of-fold scores inside
the training pairs. The shipped recipe (profile ``full``) applies it to a pair model's probability
(``pair-head`` below); profile ``strongest`` applies it to the weaker side's strongest token
(``lowest`` below). This script runs the protocol's
five grouped folds once (the folds of ``argweb model evaluate paraphrase --cv 5``: whole
interviews, a tuning part inside the training folds), keeps for each fold the inner out-of-fold
scores of its training pairs (:func:`gnn.paraphrase.inner_scores`) and the scores its model gives
the held-out pairs, and then applies each rule to the same numbers:

* ``lowest``: the rule on the strongest-token score (the lowest cut that reaches the goal: the most
  recall; profile ``strongest``);
* ``top-down``: walking down from the top score, the last cut before the calls fall under the goal
  (no cut below a dip is taken);
* ``margin``: the shipped rule with a goal five points higher (0.717);
* ``pair-head``: the shipped recipe: a better pair score before the same rule, a logistic regression
  over pair features of the token probabilities (:func:`gnn.paraphrase.pair_features`) fitted on
  the inner out-of-fold features of the training pairs; its cut is the rule on its own grouped
  out-of-fold probabilities there (:func:`gnn.paraphrase.pair_model_scores`), and it scores the
  held-out pairs from the fold model's probabilities.

Figures (precision on the called pairs, recall, F1, share "not sure", per fold and mean ± std):
``docs/experiments/paraphrase.md``, "Which rule chooses the cuts".

Usage: ``python -m experiments.paraphrase_decision [--folds 5] [--seed 13] [--scores OUT.json]
[--from OUT.json]`` (``--from`` re-scores saved scores without training).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from api.services import tasks
from api.settings import get_settings
from gnn.paraphrase import (
    MIN_CALLED,
    NEVER,
    TASK,
    HighlighterConfig,
    choose_cuts,
    pair_features,
    pair_model_scores,
    train_highlighter,
)
from gnn.paraphrase_eval import ParaphrasePair
from gnn.protocol import fold_plan
from ontology.progress import SILENT

GOAL = 2 / 3
Rule = Callable[[Sequence[float], Sequence[bool]], float]


def lowest(scores: Sequence[float], gold: Sequence[bool]) -> float:
    """The shipped rule's cut."""
    return choose_cuts(scores, gold, GOAL).cut


def margin(scores: Sequence[float], gold: Sequence[bool]) -> float:
    """The shipped rule with the goal five points higher."""
    return choose_cuts(scores, gold, GOAL + 0.05).cut


def top_down(scores: Sequence[float], gold: Sequence[bool]) -> float:
    """From the top score down, the last cut (calling at least :data:`MIN_CALLED`) before the goal is missed."""
    s, y = np.asarray(scores, np.float64), np.asarray(gold, bool)
    cut = NEVER
    for v in np.unique(s)[::-1]:
        called = s >= v
        if called.sum() < MIN_CALLED:
            continue
        if y[called].mean() < GOAL:
            break
        cut = float(v)
    return cut


RULES: dict[str, Rule] = {"lowest": lowest, "top-down": top_down, "margin": margin}


def inner_features(pairs: Sequence[ParaphrasePair], config: HighlighterConfig, cache: Path) -> list[list[float]]:
    """:func:`gnn.paraphrase.inner_scores`'s folds, keeping every pair's :func:`pair_features`."""
    plan = fold_plan([p.interview for p in pairs], config.decision_folds, config.seed)
    feats: list[list[float]] = [[] for _ in pairs]
    for fold in plan:
        model, _, _ = train_highlighter(
            [pairs[i] for i in fold.train], [pairs[i] for i in fold.tune], replace(config, precision=0.0), None, cache
        )
        for i, p in zip(fold.test, model.predict([pairs[i] for i in fold.test]), strict=True):
            feats[i] = pair_features(p)
    return feats


def collect(folds: int, seed: int) -> list[dict[str, Any]]:
    """Per fold: inner out-of-fold features and gold of the training pairs, held-out features and gold."""
    settings = get_settings()
    config = replace(TASK.recipes.config("strongest", seed), cut=0.5, low=0.5)
    _, examples = tasks.examples(settings, TASK, None, config, SILENT)
    pairs = [e.pair for e in examples]
    cache = settings.embeddings_dir / "contextdep-pairs"
    out: list[dict[str, Any]] = []
    for fold in fold_plan([p.interview for p in pairs], folds, seed):
        train, tune, test = ([pairs[i] for i in part] for part in (fold.train, fold.tune, fold.test))
        model, _, _ = train_highlighter(train, tune, replace(config), None, cache)
        inner = inner_features([*train, *tune], config, cache)
        held = [pair_features(p) for p in model.predict(test)]
        out.append(
            {
                "inner": [f[0] for f in inner],
                "inner_features": inner,
                "inner_groups": [p.interview for p in [*train, *tune]],
                "inner_gold": [p.label for p in [*train, *tune]],
                "test": [f[0] for f in held],
                "test_features": held,
                "test_gold": [p.label for p in test],
            }
        )
        print(f"fold {fold.index + 1}/{folds} scored", flush=True)
    return out


def pair_head(fold: dict[str, Any]) -> dict[str, Any]:
    """The fold with its scores replaced by the pair model's probabilities (inner: its own out-of-fold ones)."""
    fitted = pair_model_scores(fold["inner_features"], fold["inner_gold"], fold["inner_groups"])
    assert fitted is not None
    model, inner = fitted
    x = (np.asarray(fold["test_features"]) - model["mean"]) / np.asarray(model["scale"])
    test = 1.0 / (1.0 + np.exp(-(x @ np.asarray(model["coef"]) + model["intercept"][0])))
    return fold | {"inner": inner, "test": test.tolist()}


def auc(fold: dict[str, list]) -> float:
    """ROC AUC of the fold's held-out scores."""
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(fold["test_gold"], fold["test"]))


def figures(rule: Rule, fold: dict[str, list]) -> dict[str, float]:
    """The rule's cut from the fold's inner scores, scored on its held-out pairs."""
    cut = rule(fold["inner"], fold["inner_gold"])
    s, y = np.asarray(fold["test"]), np.asarray(fold["test_gold"], bool)
    called = s >= cut
    tp = float((called & y).sum())
    precision = tp / called.sum() if called.any() else 0.0
    recall = tp / y.sum() if y.any() else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    floor = 2 * y.mean() / (1 + y.mean())
    low = choose_cuts(fold["inner"], fold["inner_gold"], GOAL).low
    unsure = float((~called & (s >= low)).mean())
    return {
        "cut": cut,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "not_sure": unsure,
        "floor_f1": floor,
        "auc": auc(fold),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Collect (or read) the scores, print each rule's figures per fold and mean ± std."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--scores", type=Path, help="Write the collected scores here (JSON).")
    parser.add_argument("--from", dest="source", type=Path, help="Read collected scores instead of training.")
    args = parser.parse_args(argv)
    folds = json.loads(args.source.read_text()) if args.source else collect(args.folds, args.seed)
    if args.scores:
        args.scores.write_text(json.dumps(folds))
    runs = [(name, rule, folds) for name, rule in RULES.items()]
    runs.append(("pair-head", lowest, [pair_head(f) for f in folds]))
    for name, rule, scored in runs:
        rows = [figures(rule, f) for f in scored]
        cells = []
        for key in ("precision", "recall", "f1", "not_sure", "floor_f1", "auc"):
            vals = [r[key] for r in rows]
            per = " ".join(f"{v:.3f}" for v in vals)
            cells.append(f"{key} {statistics.fmean(vals):.3f} ± {statistics.stdev(vals):.3f} ({per})")
        print(f"{name}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
