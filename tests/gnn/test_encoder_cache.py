"""The encoder's cache and progress, with a fake model (tests.gnn.fakes.HashEncoder): each text is
computed once, the cache outlives the encoder, and progress counts the texts that are computed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gnn.progress import reporting_to
from tests.gnn.fakes import HashEncoder

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier

TEXTS = ["we should tax sugar", "why?", "it makes people healthier", "why?", "no it does not"]


def test_each_text_is_computed_once_and_read_back_from_the_cache(tmp_path: Path) -> None:
    first = HashEncoder(tmp_path / "model", cache_dir=tmp_path / "cache")
    vectors = first.encode(TEXTS)
    assert vectors.shape == (5, 8) and vectors.dtype == np.float32
    assert sorted(first.computed) == sorted(set(TEXTS))  # the repeated "why?" once
    assert np.array_equal(vectors[1], vectors[3])
    again = HashEncoder(tmp_path / "model", cache_dir=tmp_path / "cache")
    assert np.array_equal(again.encode(TEXTS[::-1]), vectors[::-1]) and again.computed == []
    assert first.encode([]).shape == (0, 8)


def test_progress_counts_the_texts_computed_to_a_callback_or_to_the_caller(tmp_path: Path) -> None:
    encoder = HashEncoder(tmp_path / "model", batch_size=2)
    calls: list[tuple[str, int, int]] = []
    encoder.encode(TEXTS, progress=lambda stage, done, total: calls.append((stage, done, total)))
    assert calls == [("encoding with model", 2, 4), ("encoding with model", 4, 4)]

    # Model code that only passes progress=True reports to the callback its caller set.
    heard: list[tuple[str, int, int]] = []
    with reporting_to(lambda stage, done, total: heard.append((stage, done, total))):
        encoder.encode(["a", "b", "c"], progress=True)
    assert heard == [("encoding with model", 2, 3), ("encoding with model", 3, 3)]
    encoder.encode(["d"], progress=True)  # outside the block: nobody listens, nothing fails


def test_cached_gives_what_earlier_runs_encoded_and_computes_nothing(tmp_path: Path) -> None:
    from gnn.encoder import text_key

    vectors = HashEncoder(tmp_path / "model", cache_dir=tmp_path / "cache").encode(TEXTS[:2])
    later = HashEncoder(tmp_path / "model", cache_dir=tmp_path / "cache")
    found = later.cached(TEXTS)
    assert sorted(found) == sorted({text_key(t) for t in TEXTS[:2]})
    assert np.array_equal(found[text_key(TEXTS[0])], vectors[0])
    assert later.computed == []  # the texts the cache lacks are left out, not encoded
    assert HashEncoder(tmp_path / "model").cached(TEXTS) == {}  # no cache, nothing found
