"""Discourse metrics on hand-computed cases."""

from __future__ import annotations

import pytest

from gnn.metrics import PRF, discourse_scores
from ontology.errors import ModelError

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier


def test_single_parent_dialogue() -> None:
    gold = [{(0, 1, "QAP"), (1, 2, "Comment"), (0, 3, "Comment")}]
    pred = [{(0, 1, "QAP"), (1, 2, "Continuation"), (2, 3, "Comment")}]
    s = discourse_scores(gold, pred)
    # links: 2 of 3 right; relations: only (0, 1, QAP).
    assert s.link.tp == 2 and s.link.precision == pytest.approx(2 / 3) and s.link.f1 == pytest.approx(2 / 3)
    assert s.link_rel.tp == 1 and s.link_rel.f1 == pytest.approx(1 / 3)
    assert s.as_dict()["link_f1"] == 66.67 and s.as_dict()["link_rel_f1"] == 33.33


def test_micro_pooling_and_multi_parent() -> None:
    # Dialogue A: gold has a multi-parent EDU 2 (parents 0 and 1); one parent predicted.
    gold = [{(0, 1, "QAP"), (0, 2, "Comment"), (1, 2, "Result")}, {(0, 1, "Acknowledgement")}]
    pred = [{(0, 1, "QAP"), (1, 2, "Result")}, {(0, 1, "Comment"), (0, 2, "Comment")}]
    s = discourse_scores(gold, pred)
    # Links: tp = 2 + 1 = 3, predicted 4, gold 4 -> P = R = F = 0.75.
    assert (s.link.tp, s.link.predicted, s.link.gold) == (3, 4, 4)
    assert s.link.f1 == pytest.approx(0.75)
    # Relations: tp = 2 + 0 = 2 -> 0.5.
    assert s.link_rel.tp == 2 and s.link_rel.f1 == pytest.approx(0.5)
    # Position pairs dialogues: swapped predictions are scored against the other dialogue
    # (links: 2 + 1; relations: only (0, 2, Comment) in A).
    swapped = discourse_scores(gold, pred[::-1])
    assert (swapped.link.tp, swapped.link_rel.tp) == (3, 1)


def test_edge_cases() -> None:
    assert PRF.from_counts(0, 0, 0).f1 == 0.0
    s = PRF.from_counts(1, 2, 1)
    assert s.precision == 0.5 and s.recall == 1.0 and s.f1 == pytest.approx(2 / 3)
    assert s.as_dict() == {"precision": 0.5, "recall": 1.0, "f1": s.f1, "tp": 1, "predicted": 2, "gold": 1}
    assert s.rounded() == {"p": 0.5, "r": 1.0, "f1": 0.6667}
    with pytest.raises(ModelError, match="1 predicted dialogues for 2 gold"):
        discourse_scores([set(), set()], [set()])


def test_mean_is_the_macro_average_with_summed_counts() -> None:
    m = PRF.mean([PRF.from_counts(1, 2, 1), PRF.from_counts(0, 1, 2)])
    assert (m.precision, m.recall, m.f1) == pytest.approx((0.25, 0.5, 1 / 3))
    assert (m.tp, m.predicted, m.gold) == (1, 3, 3)
    assert PRF.mean([]) == PRF(0.0, 0.0, 0.0, 0, 0, 0)
