"""The grouped cross-validation protocol: whole groups per fold, balanced, order-independent."""

from __future__ import annotations

import random

import pytest

from gnn.protocol import grouped_folds, spread
from gnn.relations.qt30_task import episodes


def test_no_group_is_split_across_folds_and_folds_are_balanced() -> None:
    groups = [f"g{k % 13}" for k in range(200)]
    folds = grouped_folds(groups, 5, seed=1)
    fold_of: dict[str, set[int]] = {}
    for g, f in zip(groups, folds, strict=True):
        fold_of.setdefault(g, set()).add(f)
    assert all(len(fs) == 1 for fs in fold_of.values())
    sizes = [folds.count(f) for f in range(5)]
    assert set(range(5)) == set(folds)
    assert max(sizes) - min(sizes) <= 16  # at most about one group of 15-16 items apart


def test_folds_do_not_depend_on_the_input_order() -> None:
    groups = [f"g{k % 9}" for k in range(90)] + ["big"] * 30
    folds = dict(zip(groups, grouped_folds(groups, 4, seed=3), strict=True))
    shuffled = list(groups)
    random.Random(0).shuffle(shuffled)
    again = dict(zip(shuffled, grouped_folds(shuffled, 4, seed=3), strict=True))
    assert folds == again


def test_too_few_groups_is_an_error() -> None:
    with pytest.raises(ValueError, match="cannot fill 5 folds"):
        grouped_folds(["a", "b", "a"], 5)


def test_spread_reports_mean_std_and_folds() -> None:
    out = spread([0.5, 0.7, 0.6])
    assert out == {"mean": 0.6, "std": 0.1, "folds": [0.5, 0.7, 0.6]}


def test_qt30_episodes_are_runs_of_nodeset_numbers() -> None:
    names = ["nodeset100", "nodeset105", "nodeset200", "nodeset119", "other", "nodeset300"]
    got = episodes(names)
    assert got[0] == got[1] == got[3] != got[2]
    assert got[4] == "other" and len(set(got)) == 4
    assert episodes(list(reversed(names))) == list(reversed(got))
