"""Highlighter features on hand-computed cases (no encoder needed)."""

from __future__ import annotations

import numpy as np
import pytest

from gnn.paraphrase import N_EXTRA, _window_mean, alignment_features, fit_pca

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier


def test_window_mean() -> None:
    values = np.array([0.0, 3.0, 0.0, 0.0, 6.0])
    # Width 3: edges average two values, the middle three.
    assert _window_mean(values, 3).tolist() == pytest.approx([1.5, 1.0, 1.0, 2.0, 3.0])
    assert _window_mean(np.array([]), 5).size == 0


def test_alignment_features() -> None:
    own = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    other = np.array([[2.0, 0.0], [0.0, -1.0]])
    feats = alignment_features(own, other, ["The", "cat,", "x"], ["cat", "dog"], side=1)
    assert feats.shape == (3, N_EXTRA)
    # Best cosine per word: 1, 0 (orthogonal to both), 1/sqrt(2).
    assert feats[:, 0] == pytest.approx([1.0, 0.0, 2**-0.5], abs=1e-6)
    # "cat," matches "cat" after lower-casing and stripping punctuation; "The" and "x" do not.
    assert feats[:, 4].tolist() == [0.0, 1.0, 0.0]
    assert feats[:, 7].tolist() == pytest.approx([0.0, 1 / 3, 2 / 3])  # relative position
    assert feats[:, 8].tolist() == [1.0, 1.0, 1.0]  # host side
    assert alignment_features(np.zeros((0, 2)), other, [], ["a"], 0).shape == (0, N_EXTRA)


def test_fit_pca_finds_the_main_direction() -> None:
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(500, 1)) * np.array([[3.0, 0.0, 0.0]]) + rng.normal(scale=0.01, size=(500, 3))
    mean, components = fit_pca([rows], k=1, seed=0)
    assert components.shape == (1, 3)
    assert abs(components[0, 0]) == pytest.approx(1.0, abs=1e-3)
    assert mean == pytest.approx(rows.mean(axis=0), abs=1e-6)
