"""Sci-Arg relations with gold components under the grouped cross-validation protocol (folds by paper).

The papers are the unit: every paper is its own group, so a paper's components and relations are
on one side of a fold only. By default the papers the shipped model trains on, A01-A32 (A33-A40
are the official test papers, kept out). Each fold runs the shipped recipe,
:func:`gnn.relations.sciarg_task.train_sciarg`, with the held-out fold as its ``heldout`` papers
and a tuning part of whole papers of the training folds as its ``dev`` papers: the context
vocabulary is fitted on the training part, the epochs and the label biases are chosen on the
tuning part, and the networks are refit on training + tuning before the held-out fold is scored.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gnn.protocol import Fold, Pooled, figures_of, fold_plan, group_summary
from gnn.relations import family
from gnn.relations.sciarg_features import LABELS, Paper
from gnn.relations.sciarg_task import DEV, HELDOUT, train_sciarg

SHIPPED_PAPERS = tuple(f"A{k:02d}" for k in range(1, 33))
# The shipped recipe tunes on 4 of the 24 papers it trains on (A21-A24 of A01-A24).
TUNE_SHARE = len(DEV) / (len(SHIPPED_PAPERS) - len(HELDOUT))


def run_fold(papers: Sequence[Paper], fold: Fold, options: family.TrainOptions) -> dict[str, Any]:
    """Train the recipe on ``fold.train`` (tuning on ``fold.tune``) and score ``fold.test``.

    Returns:
        The fold's row: ``chosen`` (biases, refit epochs), ``papers`` (names per part), ``heldout``
        (BAM's R and the label macro-F1 of the held-out fold) and ``baseline`` (the TF-IDF + LR
        baseline trained and tuned the same way).
    """
    names = {part: sorted(papers[i].name for i in getattr(fold, part)) for part in ("train", "tune", "test")}
    with tempfile.TemporaryDirectory(prefix="argweb-sciarg-cv-") as tmp:
        section = train_sciarg(papers, Path(tmp), options, dev=names["tune"], heldout=names["test"])
    hp = section["hyperparameters"]
    return {
        "fold": fold.index,
        "papers": names,
        "chosen": {"bias": hp["bias"], "refit_epochs": hp.get("refit_epochs")},
        "heldout": section["metrics"]["heldout"],
        "baseline": section["metrics"].get("baseline_tfidf_lr"),
        "seconds": section["seconds"],
    }


def cross_validate_sciarg(
    papers: Sequence[Paper],
    options: family.TrainOptions,
    folds: int = 5,
    *,
    only: Sequence[str] | None = SHIPPED_PAPERS,
    tune_share: float = TUNE_SHARE,
) -> dict[str, Any]:
    """Out-of-fold BAM R of the Sci-Arg relation recipe, folds by paper.

    Args:
        papers: Papers with gold components and relations.
        options: The recipe's profile, seed (of the folds too), device and encoder.
        folds: Number of folds.
        only: Names of the papers to use (default: A01-A32, what the shipped card trains on);
            ``None``: every paper given.
        tune_share: Share of the training folds' papers that tune (default: the shipped
            recipe's 4 of 24).

    Returns:
        ``figures`` (mean, std and per-fold values), ``labels`` (predicted against gold triples
        per relation type, pooled over the held-out folds), ``folds`` (per fold: the papers, the
        chosen biases and epochs), protocol, seconds.
    """
    start = time.perf_counter()
    kept = [p for p in papers if only is None or p.name in set(only)]
    groups = [p.name for p in kept]
    plan = fold_plan(groups, folds, options.seed, tune_share)
    values: dict[str, list[float]] = {}
    pooled = Pooled()
    rows = []
    for fold, sizes in zip(plan, group_summary(groups, plan), strict=True):
        options.log(f"Sci-Arg cross-validation: fold {fold.index + 1}/{folds}")
        row = run_fold(kept, fold, options)
        rows.append({**row, **sizes})
        held = row["heldout"]
        micro = held["R"]["micro"]
        for name in ("f1", "p", "r"):
            values.setdefault(f"R_micro.{name}", []).append(float(micro[name]))
        values.setdefault("relation_macro_f1", []).append(float(held["relations"]["macro_f1"]))
        if isinstance(row["baseline"], dict):
            values.setdefault("baseline_tfidf_lr.R_micro.f1", []).append(float(row["baseline"]["R"]["micro"]["f1"]))
        for label in LABELS[1:]:
            per = held["R"].get(label)
            if per:
                pooled.add(label, int(per["gold"]), int(per["predicted"]), round(per["r"] * per["gold"]))
    return {
        "protocol": (
            f"{folds}-fold cross-validation grouped by paper over {len(kept)} papers, seed {options.seed}; in each "
            f"fold about {tune_share:.2f} of the training papers choose the epochs and tune the label biases, the "
            "networks are then refit on training + tuning papers (the shipped recipe); BAM R (micro over triples) "
            "of the held-out fold, mean and std over folds"
        ),
        "papers": len(kept),
        "profile": options.profile,
        "figures": figures_of(values),
        "labels": pooled.as_dict(),
        "folds": rows,
        "seconds": round(time.perf_counter() - start, 1),
    }
