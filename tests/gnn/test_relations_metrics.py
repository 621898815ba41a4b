"""Relation metrics on hand-computed cases."""

from __future__ import annotations

import pytest

from gnn.relations.metrics import dialam_map_scores, dialam_scores, macro_f1, macro_prf, relation_macro, triple_scores

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier


def test_macro_prf_uses_labels_of_gold_and_prediction() -> None:
    # a: tp 1, fp 1, fn 0 -> p .5 r 1 f .6667; b: tp 0, fn 1 -> 0; c: predicted only -> 0 (sklearn's default)
    s = macro_prf(["a", "a", "b"], ["a", "c", "a"])
    assert s.precision == pytest.approx((0.5 + 0 + 0) / 3)
    assert s.recall == pytest.approx((0.5 + 0 + 0) / 3)
    # The counts of a macro score are the sums over its labels.
    assert (s.tp, s.predicted, s.gold) == (1, 3, 3)
    s = macro_prf(["a", "b"], ["a", "a"])
    assert s.f1 == pytest.approx((2 / 3 + 0) / 2)
    empty = macro_prf([], [])
    assert (empty.precision, empty.recall, empty.f1, empty.tp, empty.predicted, empty.gold) == (0, 0, 0, 0, 0, 0)


def test_weights_equal_repetition() -> None:
    assert macro_prf(["x", "y"], ["x", "x"], [3, 1]) == macro_prf(["x"] * 3 + ["y"], ["x"] * 4)


def test_dialam_map_scores_by_hand() -> None:
    # 3 I-nodes -> 6 ordered pairs. Gold: (0,1) RA, (2,1) CA. Predicted: (0,1) RA, (1,2) RA.
    general, focused = dialam_map_scores({(0, 1): "RA", (2, 1): "CA"}, {(0, 1): "RA", (1, 2): "RA"}, 3)
    assert general is not None and focused is not None
    # RA: tp1 fp1 fn0 -> p .5 r 1 f 2/3; CA: tp0 fn1 -> 0; none: gold 4, pred 4, tp 3 -> .75/.75/.75
    assert general.precision == pytest.approx((0.5 + 0 + 0.75) / 3)
    assert general.recall == pytest.approx((1 + 0 + 0.75) / 3)
    assert general.f1 == pytest.approx((2 / 3 + 0 + 0.75) / 3)
    # focused: pairs (0,1) RA->RA and (2,1) CA->none; labels RA, CA, none: RA 1/1/1, CA 0, none 0
    assert focused.f1 == pytest.approx(1 / 3)


def test_dialam_map_without_relations_or_pairs() -> None:
    general, focused = dialam_map_scores({}, {}, 4)
    assert general is not None and general.f1 == 1.0 and focused is None
    assert dialam_map_scores({}, {}, 1) == (None, None)


def test_dialam_scores_average_over_maps() -> None:
    out = dialam_scores([({(0, 1): "MA"}, {(0, 1): "MA"}, 2), ({(0, 1): "MA"}, {}, 2)])
    # map 1: perfect; map 2: MA missed -> general labels MA (0) and none (gold 1 pred 2 tp 1: p .5 r 1 f 2/3)
    assert out["general"]["f1"] == pytest.approx(round((1 + (0 + 2 / 3) / 2) / 2, 4))
    assert out["focused"]["maps"] == 2
    assert out["focused"]["f1"] == pytest.approx(0.5)


def test_triple_scores_symmetric_types_unordered() -> None:
    gold = [("T1", "supports", "T2"), ("T3", "parts_of_same", "T4"), ("T5", "contradicts", "T6")]
    pred = [
        ("T1", "supports", "T2"),
        ("T4", "parts_of_same", "T3"),
        ("T6", "contradicts", "T5"),
        ("T1", "supports", "T3"),
    ]
    out = triple_scores(gold, pred, symmetric=["parts_of_same"])
    # tp 2 (supports, parts_of_same reversed); contradicts reversed is wrong: p 2/4, r 2/3
    assert out["micro"]["p"] == 0.5
    assert out["micro"]["r"] == pytest.approx(round(2 / 3, 4))
    assert out["micro"]["f1"] == pytest.approx(round(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3), 4))
    assert out["parts_of_same"]["f1"] == 1.0
    assert out["contradicts"]["f1"] == 0.0
    assert out["supports"]["p"] == 0.5


def test_macro_f1_and_relation_macro() -> None:
    assert macro_f1([1, 2, 0], [1, 0, 0], (1, 2)) == pytest.approx(0.5)
    out = relation_macro([({(0, 1): "RA"}, {(0, 1): "RA", (1, 2): "MA"})], ["RA", "CA", "MA"])
    assert out["per_label"]["RA"]["f1"] == 1.0
    assert out["macro_f1"] == pytest.approx(round(1 / 3, 4))
