"""Metrics of the relation tasks, computed the way each community scores them.

* DialAM-2024 task A: per map, every ordered pair of distinct I-nodes gets one label (RA, CA, MA
  or none); "general" is the macro P/R/F1 over the labels present in gold or prediction of all
  pairs, "focused" the same over the pairs whose gold label is not none; both are averaged over
  maps (maps without pairs have no general score, maps without gold relations no focused one).
  This mirrors the official scorer's definition so that thresholds can be tuned without it; the
  reported figures come from the official scorer itself.
* Sci-Arg (BAM's R): micro P/R/F1 over (subject span, type, object span) triples; for symmetric
  types the two spans are unordered.
* Pair classification: macro F1 over a given label set.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from gnn.metrics import PRF

NONE = "none"


def macro_prf(y_true: Sequence[Hashable], y_pred: Sequence[Hashable], weights: Sequence[float] | None = None) -> PRF:
    """Macro P/R/F1 over the labels occurring in ``y_true`` or ``y_pred`` (sklearn's default).

    Args:
        y_true: Gold labels.
        y_pred: Predicted labels, same length.
        weights: Optional count of each position (a pair list compressed by label combination).
    """
    w = list(weights) if weights is not None else [1.0] * len(y_true)
    labels = {t for t, x in zip(y_true, w, strict=True) if x > 0} | {p for p, x in zip(y_pred, w, strict=True) if x > 0}
    tp: dict[Hashable, float] = {}
    gold: dict[Hashable, float] = {}
    pred: dict[Hashable, float] = {}
    for t, p, x in zip(y_true, y_pred, w, strict=True):
        gold[t] = gold.get(t, 0.0) + x
        pred[p] = pred.get(p, 0.0) + x
        if t == p:
            tp[t] = tp.get(t, 0.0) + x
    return PRF.mean([PRF.from_counts(tp.get(lab, 0.0), pred.get(lab, 0.0), gold.get(lab, 0.0)) for lab in labels])


def macro_f1(y_true: Sequence[Hashable], y_pred: Sequence[Hashable], labels: Iterable[Hashable]) -> float:
    """Mean F1 over ``labels`` (a label absent from gold and prediction counts 0)."""
    labs = list(labels)
    if not labs:
        return 0.0
    total = 0.0
    for lab in labs:
        tp = sum(1 for t, p in zip(y_true, y_pred, strict=True) if t == p == lab)
        total += PRF.from_counts(tp, sum(1 for p in y_pred if p == lab), sum(1 for t in y_true if t == lab)).f1
    return total / len(labs)


def dialam_map_scores(
    gold: Mapping[tuple[int, int], str], pred: Mapping[tuple[int, int], str], n_props: int
) -> tuple[PRF | None, PRF | None]:
    """(general, focused) of one map; ``None`` where the scorer reports nothing.

    Args:
        gold: Gold relations by ordered prop pair.
        pred: Predicted relations by ordered prop pair.
        n_props: Number of I-nodes (all ordered pairs of distinct nodes are scored).
    """
    n_pairs = n_props * (n_props - 1)
    if n_pairs == 0:
        return None, None
    pairs = set(gold) | set(pred)
    y_true = [gold.get(p, NONE) for p in pairs]
    y_pred = [pred.get(p, NONE) for p in pairs]
    weights = [1.0] * len(pairs)
    rest = n_pairs - len(pairs)
    if rest > 0:
        y_true.append(NONE)
        y_pred.append(NONE)
        weights.append(float(rest))
    general = macro_prf(y_true, y_pred, weights)
    focused_idx = [k for k, t in enumerate(y_true) if t != NONE]
    focused = macro_prf([y_true[k] for k in focused_idx], [y_pred[k] for k in focused_idx]) if focused_idx else None
    return general, focused


def dialam_scores(
    maps: Iterable[tuple[Mapping[tuple[int, int], str], Mapping[tuple[int, int], str], int]],
) -> dict[str, dict[str, float]]:
    """General and focused P/R/F1 averaged over maps, as the official scorer prints them.

    Args:
        maps: (gold, predicted, number of I-nodes) per map.
    """
    acc: dict[str, list[PRF]] = {"general": [], "focused": []}
    for gold, pred, n in maps:
        general, focused = dialam_map_scores(gold, pred, n)
        if general is not None:
            acc["general"].append(general)
        if focused is not None:
            acc["focused"].append(focused)
    out: dict[str, dict[str, float]] = {}
    for key, values in acc.items():
        out[key] = {**PRF.mean(values).rounded(), "maps": len(values)}
    return out


Triple = tuple[Hashable, str, Hashable]


def normalise_triple(triple: Triple, symmetric: Iterable[str]) -> Triple:
    """Order the spans of a symmetric relation so that (a, t, b) equals (b, t, a)."""
    subj, kind, obj = triple
    if kind in set(symmetric) and repr(obj) < repr(subj):
        return (obj, kind, subj)
    return triple


def triple_scores(
    gold: Iterable[Triple], pred: Iterable[Triple], symmetric: Iterable[str] = ()
) -> dict[str, dict[str, float]]:
    """Micro P/R/F1 over relation triples (BAM's R) and per relation type.

    Args:
        gold: Gold (subject span, type, object span) triples.
        pred: Predicted triples.
        symmetric: Types whose spans are unordered.

    Returns:
        ``{"micro": {...}, "<type>": {...}}`` with p, r, f1, gold and predicted counts.
    """
    sym = tuple(symmetric)
    g = {normalise_triple(t, sym) for t in gold}
    p = {normalise_triple(t, sym) for t in pred}
    out: dict[str, dict[str, float]] = {}
    out["micro"] = {**PRF.from_counts(len(g & p), len(p), len(g)).rounded(), "gold": len(g), "predicted": len(p)}
    for kind in sorted({t[1] for t in g | p}):
        gk = {t for t in g if t[1] == kind}
        pk = {t for t in p if t[1] == kind}
        out[kind] = {**PRF.from_counts(len(gk & pk), len(pk), len(gk)).rounded(), "gold": len(gk), "predicted": len(pk)}
    return out


def relation_macro(
    rows: Iterable[tuple[Mapping[Any, str], Mapping[Any, str]]], labels: Sequence[str]
) -> dict[str, Any]:
    """Per-label P/R/F1 pooled over documents and their macro average (``none`` not a label).

    Args:
        rows: (gold, predicted) relation dicts keyed by pair, one row per map or document.
        labels: The relation labels to average over.
    """
    tp: Counter[str] = Counter()
    gold_n: Counter[str] = Counter()
    pred_n: Counter[str] = Counter()
    for gold, pred in rows:
        for key, lab in gold.items():
            gold_n[lab] += 1
            if pred.get(key) == lab:
                tp[lab] += 1
        for lab in pred.values():
            pred_n[lab] += 1
    # Counts beside the scores: a model that finds a rare type's few right pairs by predicting it
    # everywhere (or never predicts it) shows in predicted against gold before it shows in F1.
    per = {
        lab: {
            **PRF.from_counts(tp[lab], pred_n[lab], gold_n[lab]).rounded(),
            "gold": gold_n[lab],
            "predicted": pred_n[lab],
            "right": tp[lab],
        }
        for lab in labels
    }
    return {"macro_f1": round(sum(v["f1"] for v in per.values()) / max(len(per), 1), 4), "per_label": per}
