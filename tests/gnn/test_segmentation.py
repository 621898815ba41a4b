"""Boundary similarity on hand-computed cases (values as in Fournier 2013 / segeval's own tests)."""

from __future__ import annotations

import pytest

from gnn.segmentation import boundaries, boundary_counts, boundary_similarity, masses_from_labels

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier


def test_boundaries_and_masses() -> None:
    assert boundaries([2, 3, 6]) == {2, 5}
    assert masses_from_labels(["a", "a", "b", "b", "b", "a"]) == [2, 3, 1]
    assert masses_from_labels([]) == []


def test_identical_segmentations_score_one() -> None:
    assert boundary_similarity([2, 3, 6], [2, 3, 6]) == 1.0
    # No boundary on either side: nothing to disagree about.
    assert boundary_similarity([11], [11]) == 1.0


def test_full_miss() -> None:
    # {2, 5} vs {5}: one match, one addition -> 1 - 1/2.
    counts = boundary_counts([2, 3, 6], [5, 6])
    assert (counts.matches, counts.additions, counts.transpositions) == (1, 1, 0)
    assert boundary_similarity([2, 3, 6], [5, 6]) == 0.5


def test_false_positive() -> None:
    # {2, 5} vs {2, 5, 8}: two matches, one addition -> 1 - 1/3.
    assert boundary_similarity([2, 3, 6], [2, 3, 3, 3]) == pytest.approx(2 / 3)


def test_near_miss_is_half_an_error() -> None:
    # {2, 5} vs {2, 4}: one match, one transposition of distance 1 weighted 1/2 -> 1 - 0.5/2.
    counts = boundary_counts([2, 3, 6], [2, 2, 7])
    assert (counts.matches, counts.additions, counts.transpositions) == (1, 0, 1)
    assert counts.similarity == 0.75


def test_two_units_apart_is_two_full_misses_with_nt_2() -> None:
    # {3} vs {5}: distance 2 >= n_t, so a deletion and an addition -> 0.
    assert boundary_similarity([3, 5], [5, 3]) == 0.0
    # With n_t = 3 the same pair is one transposition of weight 2/3 -> 1 - (2/3)/1.
    assert boundary_similarity([3, 5], [5, 3], n_t=3) == pytest.approx(1 / 3)


def test_mixed_edits_and_symmetry() -> None:
    a, b = [5, 1, 3, 1, 3, 1, 4, 1], [5, 1, 3, 2, 2, 6]
    counts = boundary_counts(a, b)
    # matches 5, 6, 9, 13; 10~11 a near miss; 14 and 18 full misses.
    assert (counts.matches, counts.additions, counts.transpositions) == (4, 2, 1)
    assert boundary_similarity(a, b) == pytest.approx(1 - 2.5 / 7)
    assert boundary_similarity(b, a) == boundary_similarity(a, b)


def test_pooled_counts_add_up() -> None:
    total = boundary_counts([2, 3, 6], [5, 6]) + boundary_counts([2, 3, 6], [2, 2, 7])
    assert (total.matches, total.additions, total.transpositions) == (2, 1, 1)
    assert total.similarity == pytest.approx(1 - 1.5 / 4)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        boundary_counts([2, 3], [4])
    with pytest.raises(ValueError, match=">= 1"):
        boundaries([2, 0, 3])
