"""M-Arg support / attack / neither pairs by a logistic regression, text only or text + audio,
by cross-validation: measured, not adopted (no M-Arg model ships).

Only the 102 expert gold pairs are available, far too few for a held-out split or a graph model:
the classifier is a class-balanced logistic regression (C 0.5, nothing tuned) over the pair
representation ``[u, v, u*v, |u-v|]`` of the two sentence vectors plus same-speaker, and, when
audio features exist for both sentences, ``[a_u, a_v, |a_u - a_v|]`` of the standardised acoustic
vectors (:mod:`gnn.audio`). Reported: macro-F1 over the three classes and over support/attack
(neither excluded, as MAMKit reports), next to the TF-IDF + LR baseline in the same folds, by
5-fold cross-validation grouped by event (a debate or town hall with all its parts: they share
speakers and topics) and stratified by label where the groups allow, repeated with other seeds;
the mean and spread over folds, and the pooled out-of-fold figure of each repeat.

This ran inside every relations training until it was taken out of the training path; its figures
(support/attack macro-F1 0.420 ± 0.185 over the five events with the MiniLM sentence vectors,
TF-IDF + LR 0.242 ± 0.111) are in ``docs/models/relations.md`` ("Protocol and figures (M-Arg)")
and in the cards of relation models 8 (0.8.0) and 9 as ``metrics.marg.cross_validation``. The
graph's M-Arg relations come from the QT30 network instead
(:func:`gnn.relations.marg_task.score_transfer`).

Usage: ``python -m experiments.marg_cv [--data DIR] [--lsa] [--seed 0] [--json OUT]``
(default data ``../shared/corpora/m-arg``; the packaged MiniLM, or LSA vectors fitted on the
M-Arg sentences with ``--lsa``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gnn.protocol import spread
from gnn.relations.baseline import PairTfidfLR
from gnn.relations.marg_task import LABELS, Pair
from gnn.relations.metrics import macro_f1
from gnn.relations.text import Lsa, TextVectors

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "corpora" / "m-arg"


def pair_matrix(pairs: Sequence[Pair], text: TextVectors, audio: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
    """Pair representations (see the module docstring); audio columns only when ``audio`` is given."""
    u = text.encode([p.source for p in pairs])
    v = text.encode([p.target for p in pairs])
    cols = [u, v, u * v, np.abs(u - v), np.array([[p.same_speaker] for p in pairs], dtype=np.float32)]
    if audio is not None:
        width = len(next(iter(audio.values()))) if audio else 0
        a = np.array([audio.get(p.source_id, np.zeros(width)) for p in pairs], dtype=np.float32)
        b = np.array([audio.get(p.target_id, np.zeros(width)) for p in pairs], dtype=np.float32)
        both = np.concatenate([a, b])
        mu, sd = both.mean(axis=0), both.std(axis=0) + 1e-6
        a, b = (a - mu) / sd, (b - mu) / sd
        cols += [a, b, np.abs(a - b)]
    return np.concatenate(cols, axis=1).astype(np.float32)


def cross_validate(
    pairs: Sequence[Pair],
    text: TextVectors,
    audio: Mapping[str, np.ndarray] | None = None,
    *,
    folds: int = 5,
    repeats: int = 3,
    seed: int = 0,
) -> dict[str, Any]:
    """Macro-F1 of the model and of the TF-IDF + LR baseline out of fold, in folds of whole events.

    With at least two pair groups (:attr:`Pair.group`) the folds keep each group whole and are
    stratified by label as far as the groups allow (``StratifiedGroupKFold``, one shuffle per
    repeat; one repeat when there are no more groups than folds, since every shuffle then cuts
    the same folds); without groups they are stratified only. Nothing is tuned: the classifier's
    settings are fixed.

    Returns:
        ``{"text": {...}, "text+audio": {...} (with audio), "baseline_tfidf_lr": {...}, "pairs": n,
        "labels", "groups", "protocol"}``; per variant and metric the mean, the sample standard
        deviation and the values over all folds of all repeats (:func:`gnn.protocol.spread`), and
        ``pooled`` (the same over repeats of the figure of all out-of-fold predictions together,
        steadier than the mean of small folds).
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

    y = np.array([LABELS.index(p.label) for p in pairs])
    groups = np.array([p.group for p in pairs])
    counts = np.bincount(y, minlength=len(LABELS))
    n_groups = len(set(groups.tolist())) if all(groups) else 0
    if n_groups >= 2:
        k = max(2, min(folds, n_groups))
        grouping = f"grouped by event ({n_groups} events)"
        if k == n_groups:
            # One event per fold: every repeat would cut the same folds.
            repeats, grouping = 1, f"leave-one-event-out ({n_groups} events)"
    else:
        k = max(2, min(folds, int(counts[counts > 0].min())))
        grouping = "stratified"
    variants: dict[str, np.ndarray] = {"text": pair_matrix(pairs, text)}
    if audio is not None:
        variants["text+audio"] = pair_matrix(pairs, text, audio)
    names = [*variants, "baseline_tfidf_lr"]
    scores: dict[str, dict[str, list[float]]] = {n: {"macro_f1": [], "support_attack_f1": []} for n in names}
    pooled: dict[str, dict[str, list[float]]] = {n: {"macro_f1": [], "support_attack_f1": []} for n in names}

    def score(into: dict[str, list[float]], gold: list[int], pred: list[int]) -> None:
        into["macro_f1"].append(macro_f1(gold, pred, range(len(LABELS))))
        into["support_attack_f1"].append(macro_f1(gold, pred, (1, 2)))

    for r in range(repeats):
        if n_groups >= 2:
            splits = StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=seed + r).split(
                np.zeros(len(y)), y, groups
            )
        else:
            splits = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed + r).split(np.zeros(len(y)), y)
        out_of_fold = {n: np.zeros(len(y), dtype=int) for n in names}
        for train, test in splits:
            for name, x in variants.items():
                clf = LogisticRegression(C=0.5, class_weight="balanced", max_iter=2000, random_state=seed)
                out_of_fold[name][test] = clf.fit(x[train], y[train]).predict(x[test])
            base = PairTfidfLR(seed=seed).fit(
                [pairs[i].source for i in train], [pairs[i].target for i in train], y[train].tolist()
            )
            probs = base.predict_proba([pairs[i].source for i in test], [pairs[i].target for i in test], len(LABELS))
            out_of_fold["baseline_tfidf_lr"][test] = probs.argmax(axis=1)
            for name in names:
                score(scores[name], y[test].tolist(), out_of_fold[name][test].tolist())
        for name in names:
            score(pooled[name], y.tolist(), out_of_fold[name].tolist())
    out: dict[str, Any] = {
        "pairs": len(pairs),
        "labels": {lab: int(counts[i]) for i, lab in enumerate(LABELS)},
        "groups": n_groups,
        "protocol": f"{k}-fold {grouping} x {repeats} repeat{'s' if repeats > 1 else ''}, seed {seed}",
    }

    # The protocol's spread (sample standard deviation over folds), as every other task reports.
    for name in names:
        out[name] = {m: spread(v) for m, v in scores[name].items()}
        out[name]["pooled"] = {m: spread(v) for m, v in pooled[name].items()}
    return out


def main(argv: list[str] | None = None) -> int:
    """Read M-Arg, cross-validate the classifier and its baseline, print (and write) the figures."""
    from api.services.relations import load_data
    from api.settings import Settings
    from gnn.encoder import encoder_for

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHARED, help="the M-Arg folder (its CSV files)")
    parser.add_argument("--lsa", action="store_true", help="LSA vectors of the M-Arg sentences, not MiniLM")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    data = load_data([args.data])
    if not data.marg:
        parser.error(f"no M-Arg gold pairs under {args.data}")
    text: TextVectors
    if args.lsa:
        text = Lsa.fit(data.marg_sentences or [s for p in data.marg for s in (p.source, p.target)], seed=args.seed)
    else:
        text = encoder_for(None, None, Settings().cache_dir)
    out = cross_validate(data.marg, text, data.marg_audio, seed=args.seed)
    out["text_model"] = getattr(text, "name", "encoder")
    print(f"{out['pairs']} pairs {out['labels']}, {out['protocol']}, text vectors {out['text_model']}")
    for name in ("text", "text+audio", "baseline_tfidf_lr"):
        if name in out:
            sa, pooled = out[name]["support_attack_f1"], out[name]["pooled"]["support_attack_f1"]
            print(f"{name:18} support/attack macro-F1 {sa['mean']:.3f} ± {sa['std']:.3f} (pooled {pooled['mean']:.3f})")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
