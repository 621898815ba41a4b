"""Sci-Arg relations with gold components under the grouped cross-validation protocol (folds by paper).

The papers are the unit: every paper is its own group, so a paper's components and relations are
on one side of a fold only. By default the papers the shipped model trains on, A01-A32 (A33-A40
are the official test papers, kept out). Each fold runs the shipped recipe,
:func:`gnn.relations.sciarg_task.train_sciarg`, with the held-out fold as its ``heldout`` papers
and a tuning part of whole papers of the training folds as its ``dev`` papers: the context
vocabulary is fitted on the training part, the epochs and the label biases are chosen on the
tuning part, and the networks are refit on training + tuning before the held-out fold is scored.

Given an ``end_to_end`` scorer, each fold's model is also run on the components that a tagger
trained on the same fold predicts for the held-out papers (the pipeline of ``argweb predict sciarg
--components``), so the end-to-end figure comes from the same folds as the gold-component one.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gnn.protocol import Fold, FoldOutcome, Pooled, cross_validate
from gnn.relations import family
from gnn.relations.sciarg_features import LABELS, Paper
from gnn.relations.sciarg_task import DEV, HELDOUT, train_sciarg

SHIPPED_PAPERS = tuple(f"A{k:02d}" for k in range(1, 33))
# The shipped recipe tunes on 4 of the 24 papers it trains on (A21-A24 of A01-A24).
TUNE_SHARE = len(DEV) / (len(SHIPPED_PAPERS) - len(HELDOUT))

EndToEnd = Callable[[Mapping[str, Sequence[str]], Path], tuple[dict[str, float], Pooled]]
"""Scores a fold's relation model (its directory) on components predicted for the fold's ``test``
papers by a tagger trained on its ``train`` papers (epoch chosen on ``tune``): figures and
predicted against gold relations."""


def run_fold(
    papers: Sequence[Paper], fold: Fold, options: family.TrainOptions, end_to_end: EndToEnd | None = None
) -> FoldOutcome:
    """Train the recipe on ``fold.train`` (tuning on ``fold.tune``) and score ``fold.test``.

    Returns:
        The held-out fold's BAM R (micro over triples), label macro-F1 and the TF-IDF + LR
        baseline's R (trained and tuned the same way); predicted against gold triples per
        relation type; the chosen biases and refit epochs; the papers of each part. With
        ``end_to_end``, its figures and counts too (``end to end`` in the labels).
    """
    names = {part: sorted(papers[i].name for i in getattr(fold, part)) for part in ("train", "tune", "test")}
    pipeline: tuple[dict[str, float], Pooled] | None = None
    with tempfile.TemporaryDirectory(prefix="argweb-sciarg-cv-") as tmp:
        section = train_sciarg(papers, Path(tmp), options, dev=names["tune"], heldout=names["test"])
        if end_to_end is not None:
            pipeline = end_to_end(names, Path(tmp))
    hp = section["hyperparameters"]
    held = section["metrics"]["heldout"]
    micro = held["R"]["micro"]
    figures = {f"R_micro.{name}": float(micro[name]) for name in ("f1", "p", "r")}
    figures["relation_macro_f1"] = float(held["relations"]["macro_f1"])
    baseline = section["metrics"].get("baseline_tfidf_lr")
    if isinstance(baseline, dict):
        figures["baseline_tfidf_lr.R_micro.f1"] = float(baseline["R"]["micro"]["f1"])
    tally = Pooled()
    for label in LABELS[1:]:
        per = held["R"].get(label)
        if per:
            tally.add(label, int(per["gold"]), int(per["predicted"]), round(per["r"] * per["gold"]))
    labels = {"": tally}
    if pipeline is not None:
        figures |= pipeline[0]
        labels["end to end"] = pipeline[1]
    chosen = {"bias": hp["bias"], "refit_epochs": hp.get("refit_epochs")}
    return FoldOutcome(figures, labels, chosen, {"papers": names, "train_seconds": section["seconds"]})


def cross_validate_sciarg(
    papers: Sequence[Paper],
    options: family.TrainOptions,
    folds: int = 5,
    *,
    only: Sequence[str] | None = SHIPPED_PAPERS,
    tune_share: float = TUNE_SHARE,
    end_to_end: EndToEnd | None = None,
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
        end_to_end: Also score each fold's model on predicted components (see :data:`EndToEnd`).

    Returns:
        :func:`gnn.protocol.cross_validate`'s summary, with ``papers`` and ``profile``.
    """
    kept = [p for p in papers if only is None or p.name in set(only)]
    protocol = (
        f"Sci-Arg relations with gold components, grouped by paper over {len(kept)} papers; in each fold about "
        f"{tune_share:.2f} of the training papers choose the epochs and tune the label biases, the networks are "
        "then refit on training + tuning papers (the shipped recipe); BAM R (micro over triples) of the held-out fold"
    )
    if end_to_end is not None:
        protocol += (
            "; end to end: a component tagger trained on the same training papers (epoch chosen on the same tuning "
            "papers) predicts the held-out papers' components, the fold's relation model relates them, and BAM "
            "scores the pipeline (end_to_end.*)"
        )
    out = cross_validate(
        [p.name for p in kept],
        lambda fold: run_fold(kept, fold, options, end_to_end),
        folds,
        options.seed,
        protocol,
        tune_share=tune_share,
        log=options.log,
        what="Sci-Arg cross-validation",
    )
    return {**out, "papers": len(kept), "profile": options.profile}
