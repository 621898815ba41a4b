"""experiments/marg_cv.py: the M-Arg logistic-regression cross-validation (measured, not adopted)."""

from __future__ import annotations

import dataclasses
import statistics

import numpy as np
import pytest

from experiments.marg_cv import cross_validate
from gnn.relations.marg_task import LABELS, Pair
from gnn.relations.text import Lsa


def test_marg_cross_validation_text_and_generated_audio() -> None:
    rng = np.random.default_rng(0)
    words = ["tax", "jobs", "health", "virus", "wall", "police", "climate", "china", "court", "oil"]
    pairs = []
    for k in range(36):
        label = ("Neither", "Support", "Attack")[k % 3]
        a = " ".join(rng.choice(words, 5))
        b = a if label == "Support" else " ".join(rng.choice(words, 5)) + (" not" if label == "Attack" else "")
        pairs.append(Pair(f"p{k}", f"s{k}a", f"s{k}b", a, b, bool(k % 2), label))
    audio = {f"s{k}{x}": rng.normal(size=45).astype(np.float32) for k in range(36) for x in "ab"}
    text = Lsa.fit([t for p in pairs for t in (p.source, p.target)], dim=8)
    out = cross_validate(pairs, text, audio, folds=3, repeats=1)
    assert out["pairs"] == 36
    for name in ("text", "text+audio", "baseline_tfidf_lr"):
        assert 0.0 <= out[name]["macro_f1"]["mean"] <= 1.0
    # "Attack" pairs end in "not", "Support" pairs repeat the text: the text model separates them.
    assert out["text"]["macro_f1"]["mean"] > 0.6


def test_marg_cross_validation_keeps_events_whole() -> None:
    # Each event has words of its own that give the label away; no word is shared across events.
    # Folds that split an event learn them (high scores); folds of whole events cannot.
    pairs = []
    for g in range(6):
        for k in range(9):
            label = LABELS[k % 3]
            word = f"w{g}{label.lower()}"
            source, target = f"{word} x{g}{k}", f"{word} y{g}{k}"
            pairs.append(Pair(f"p{g}{k}", f"s{g}{k}a", f"s{g}{k}b", source, target, False, label, f"e{g}"))
    text = Lsa.fit([t for p in pairs for t in (p.source, p.target)], dim=24)
    grouped = cross_validate(pairs, text, folds=3, repeats=2)
    leaky = cross_validate([dataclasses.replace(p, group="") for p in pairs], text, folds=3, repeats=2)
    assert grouped["groups"] == 6 and "grouped by event" in grouped["protocol"] and "x 2 repeats" in grouped["protocol"]
    assert leaky["groups"] == 0 and "stratified" in leaky["protocol"]
    assert leaky["text"]["pooled"]["macro_f1"]["mean"] > 0.9
    assert grouped["text"]["pooled"]["macro_f1"]["mean"] < 0.6
    # No more events than folds: one event per fold, and one repeat (every shuffle cuts the same folds).
    one_each = cross_validate(pairs, text, folds=6, repeats=3)
    assert "leave-one-event-out (6 events) x 1 repeat," in one_each["protocol"]
    assert one_each["text"]["pooled"]["macro_f1"]["std"] == 0.0
    assert one_each["text"]["pooled"]["macro_f1"]["mean"] < 0.6
    # The spread over folds is the protocol's: the sample standard deviation of the fold values.
    per_fold = one_each["text"]["macro_f1"]
    assert len(per_fold["folds"]) == 6
    assert per_fold["std"] == pytest.approx(statistics.stdev(per_fold["folds"]), abs=1e-3)
