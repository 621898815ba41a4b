"""Both highlighter kinds train through gnn.trainer: the kept epoch carries the offset chosen with it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from gnn.contextdep import pairs_from_records
from gnn.paraphrase import PROFILES, HighlighterConfig, train_highlighter
from gnn.paraphrase_eval import ParaphrasePair, split_by_interview
from ontology.formats.contextdep import load_contextdep
from ontology.formats.registry import SAMPLES

SAMPLE = SAMPLES / "contextdep"


@pytest.fixture(scope="module")
def parts() -> dict[str, list[ParaphrasePair]]:
    # The train file trains; the dev file is split by interview into tuning and held-out pairs.
    tune, heldout = split_by_interview(
        pairs_from_records(load_contextdep([SAMPLE / "ANON_DEV_TOKEN-annotations.tsv"]).nodes)
    )
    train = pairs_from_records(load_contextdep([SAMPLE / "ANON_TRAIN_TOKEN-annotations.tsv"]).nodes)
    return {"train": train, "tune": tune, "heldout": heldout}


@pytest.mark.parametrize("profile", ["quick"])  # the fine-tuned kind: tests/experiments/test_paraphrase_finetune.py
def test_the_kept_epoch_is_the_best_on_the_tuning_pairs_with_its_offset(
    profile: str, parts: dict[str, list[ParaphrasePair]], tmp_path: Path
) -> None:
    config = replace(HighlighterConfig(**PROFILES[profile]), epochs=4, seed=3)
    seen: list[tuple[str, int, int]] = []
    model, fit, tuned = train_highlighter(
        parts["train"], parts["tune"], config, cache_dir=tmp_path, progress=lambda *a: seen.append(a)
    )
    scores = [row["f1"] + (row["jaccard_guest"] + row["jaccard_host"]) / 2 for row in fit.history]
    assert len(scores) == 4 and fit.best_score == max(scores)
    kept = fit.history[fit.best_epoch - 1]
    assert kept["selected"] is True and scores.index(max(scores)) == fit.best_epoch - 1  # the first of equals
    # The offset chosen with the kept epoch is the model's, and its tuning figures are what it scores now.
    assert model.config.bias == kept["bias"] == fit.chosen["bias"]
    assert (tuned["f1"], tuned["jaccard_guest"], tuned["jaccard_host"]) == (
        kept["f1"],
        kept["jaccard_guest"],
        kept["jaccard_host"],
    )
    n = len(parts["train"]) + len(parts["tune"])
    assert seen[:n] == [("encode", k, n) for k in range(1, n + 1)] and seen[n:] == [
        ("train", e, 4) for e in range(1, 5)
    ]


def test_the_same_seed_trains_the_same_highlighter(parts: dict[str, list[ParaphrasePair]], tmp_path: Path) -> None:
    runs = [
        train_highlighter(parts["train"], parts["tune"], HighlighterConfig(epochs=3, seed=5), cache_dir=tmp_path)
        for _ in range(2)
    ]
    (a, fa, _), (b, fb, _) = runs
    assert [r["loss"] for r in fa.history] == [r["loss"] for r in fb.history]
    pairs = parts["heldout"]
    for x, y in zip(a.predict(pairs), b.predict(pairs), strict=True):
        assert np.array_equal(x.guest_probs + x.host_probs, y.guest_probs + y.host_probs)
    assert a.config.layers == (3, 6)  # MiniLM's middle and last layer
