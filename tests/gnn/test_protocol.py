"""The grouped cross-validation protocol: whole groups per fold, balanced, order-independent."""

from __future__ import annotations

import random

import pytest

from gnn.protocol import Fold, FoldOutcome, Pooled, cross_validate, grouped_folds, spread
from gnn.relations.qt30_task import episodes
from ontology.errors import ClientError

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier


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
    with pytest.raises(ClientError, match="cannot fill 5 folds"):
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


def test_cross_validate_scores_every_item_once_with_a_model_that_never_saw_its_group() -> None:
    # Each group has its own label: a model that memorises the groups it trained on is perfect on
    # them and can only guess on a group it never saw, so a leak would show as a perfect score.
    groups = [f"g{k % 17}" for k in range(170)]
    label = {g: ("yes" if int(g[1:]) % 3 else "no") for g in set(groups)}
    seen: list[int] = []

    def run_fold(fold: Fold) -> FoldOutcome:
        train_groups = {groups[i] for i in fold.train}
        tune_groups = {groups[i] for i in fold.tune}
        test_groups = {groups[i] for i in fold.test}
        assert not (train_groups | tune_groups) & test_groups and not train_groups & tune_groups
        memory = {groups[i]: label[groups[i]] for i in fold.train}
        majority = max(("yes", "no"), key=lambda y: sum(v == y for v in memory.values()))
        predicted = {i: memory.get(groups[i], majority) for i in fold.test}
        seen.extend(fold.test)
        tally = Pooled()
        tally.add_pairs([(i, label[groups[i]]) for i in fold.test], predicted.items())
        right = sum(predicted[i] == label[groups[i]] for i in fold.test)
        return FoldOutcome({"accuracy": right / len(fold.test)}, {"": tally}, {"majority": majority})

    out = cross_validate(groups, run_fold, 5, seed=2, protocol="toy task, grouped by g")
    assert sorted(seen) == list(range(len(groups)))
    assert out["items"] == 170 and out["groups"] == 17 and len(out["folds"]) == 5
    accuracy = out["figures"]["accuracy"]
    assert len(accuracy["folds"]) == 5 and accuracy["mean"] < 1.0
    assert sum(c["gold"] for c in out["labels"].values()) == 170
    assert sum(c["predicted"] for c in out["labels"].values()) == 170
    assert out["labels"]["yes"]["recall"] == 1.0  # the majority label is always guessed
    assert all(row["chosen"]["majority"] == "yes" for row in out["folds"])
    assert "toy task" in out["protocol"] and "5 folds" in out["protocol"]


def test_cross_validate_keeps_several_decodings_apart() -> None:
    groups = [f"g{k % 4}" for k in range(8)]

    def run_fold(fold: Fold) -> FoldOutcome:
        tallies = {}
        for decoding in ("general", "focused"):
            tallies[decoding] = Pooled()
            tallies[decoding].add("RA", len(fold.test), 1 if decoding == "general" else 2, 1)
        return FoldOutcome({"f1": 0.5}, tallies)

    out = cross_validate(groups, run_fold, 2, seed=0, protocol="toy")
    assert set(out["labels"]) == {"general", "focused"}
    assert out["labels"]["general"]["RA"] == {"gold": 8, "predicted": 2, "right": 2, "recall": 0.25}
    assert out["labels"]["focused"]["RA"]["predicted"] == 4


def test_spread_leaves_undefined_folds_out() -> None:
    out = spread([0.5, float("nan"), 0.7])
    assert out == {"mean": 0.6, "std": 0.1414, "folds": [0.5, None, 0.7]}
    assert spread([float("nan")]) == {"mean": None, "std": 0.0, "folds": [None]}
