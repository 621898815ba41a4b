"""ContextDeP scoring on hand-computed cases: majority vote, the >= 0.5 rule, highlight Jaccard."""

from __future__ import annotations

import math

import pytest

from gnn.paraphrase_eval import REPORTED, PairPrediction, ParaphrasePair, jaccard, score_predictions, split_by_interview

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier

# A: paraphrase (3 of 4 votes), gold highlights guest {1, 2}, host {0}.
A = ParaphrasePair("I1-1", ["a", "b", "c"], ["d", "e"], [0, 1, 0.5], [1, 0], 3, 4)
# B: not a paraphrase (1 of 4); its paraphrase voter's highlights (share 0.5) are still gold
# highlights, guest {0}, host {1}, as in the paper's evaluation.
B = ParaphrasePair("I2-1", ["f", "g"], ["h", "i"], [0.5, 0], [0, 0.5], 1, 4)
# C: paraphrase by a tie (2 of 4 counts, as in the corpus), gold guest {0, 1}, host {0}.
C = ParaphrasePair("I3-1", ["j", "k"], ["l"], [1, 1], [1], 2, 4)

PRED = [
    PairPrediction("I1-1", [0.1, 0.9, 0.2], [0.7, 0.6]),  # paraphrase; guest {1}, host {0, 1}
    PairPrediction("I2-1", [0.6, 0.1], [0.4, 0.2]),  # host max 0.4 -> not a paraphrase
    PairPrediction("I3-1", [0.2, 0.3], [0.9]),  # guest max 0.3 -> missed
]


def test_pair_rule_and_score() -> None:
    assert PRED[0].paraphrase and PRED[0].score == 0.7
    assert not PRED[1].paraphrase and PRED[1].score == 0.4
    # Exactly 0.5 on both sides counts (>=), as in the paper.
    assert PairPrediction("x-1", [0.5], [0.5]).paraphrase


def test_gold_labels_and_highlights() -> None:
    assert A.label and not B.label and C.label
    assert A.gold_highlights("guest") == {1, 2} and A.gold_highlights("host") == {0}
    assert B.gold_highlights("guest") == {0} and B.gold_highlights("host") == {1}
    assert ParaphrasePair("I4-1", ["m"], ["n"], None, None).gold_highlights("guest") == set()
    assert A.interview == "I1"


def test_scores() -> None:
    m = score_predictions([A, B, C], PRED)
    assert (m.true_positives, m.predicted_positives, m.positives) == (1, 1, 2)
    assert m.precision == 1.0 and m.recall == 0.5 and m.f1 == pytest.approx(2 / 3)
    assert m.accuracy == pytest.approx(2 / 3)
    # Guest: A |{1}&{1,2}|/|{1,2}| = 1/2; B (not a paraphrase, scored all the same) {0} vs {0} = 1;
    # C has no predicted guest highlight -> mean 3/4 over 2 pairs.
    assert m.jaccard_guest == 0.75 and m.jaccard_guest_pairs == 2
    # Host: A {0} vs {0,1} = 1/2; B has no predicted host highlight; C {0} vs {0} = 1 -> mean 3/4.
    assert m.jaccard_host == 0.75 and m.jaccard_host_pairs == 2
    # Floor: everything a paraphrase -> P 2/3, R 1.
    assert m.floor_f1 == pytest.approx(0.8)


def test_training_targets() -> None:
    share_g, share_h = A.targets("share")
    assert share_g == [0, 0.75, 0.375] and share_h == [0.75, 0]
    maj_g, _ = A.targets("majority")
    assert maj_g == [0, 1, 0.5]
    assert B.targets("majority") == ([0.0, 0.0], [0.0, 0.0])
    mix_g, _ = A.targets("mix")
    assert mix_g == pytest.approx([0, 0.875, 0.4375])
    with pytest.raises(ValueError, match="unknown target"):
        A.targets("other")


def test_bad_predictions() -> None:
    with pytest.raises(ValueError, match="no prediction"):
        score_predictions([A], [])
    with pytest.raises(ValueError, match="probabilities"):
        score_predictions([A], [PairPrediction("I1-1", [0.1], [0.2, 0.3])])


def test_jaccard() -> None:
    assert jaccard({1, 2}, {2, 3}) == pytest.approx(1 / 3)
    assert jaccard(set(), set()) == 1.0


def test_split_keeps_interviews_together_and_is_stable() -> None:
    pairs = [ParaphrasePair(f"CNN-{i}-{k}", ["x"], ["y"], [0], [0], 0, 1) for i in range(40) for k in (3, 7)]
    tune, held = split_by_interview(pairs)
    assert tune and held and len(tune) + len(held) == len(pairs)
    assert not {p.interview for p in tune} & {p.interview for p in held}
    _, held2 = split_by_interview(list(reversed(pairs)))
    assert {p.qid for p in held2} == {p.qid for p in held}


def test_as_dict_reports_derived_figures_in_order() -> None:
    m = score_predictions([A, B, C], PRED)
    m.extra["threshold"] = 0.5
    out = m.as_dict()
    # The JSON order (model cards and CLI output rely on it), then the extras.
    assert list(out) == [*REPORTED, "threshold"]
    assert REPORTED[:4] == ("pairs", "positives", "predicted_positives", "true_positives")
    assert REPORTED[-3:] == ("floor_f1", "not_sure", "not_sure_share")
    assert out["f1"] == pytest.approx(2 / 3) and out["jaccard_host_pairs"] == 2 and out["pairs"] == 3


def test_empty_scores_are_zero() -> None:
    m = score_predictions([], [])
    assert (m.precision, m.recall, m.f1, m.accuracy, m.floor_f1, m.jaccard_guest) == (0.0,) * 6


def test_pair_auc_ranks_the_pair_score_against_gold() -> None:
    from gnn.paraphrase import pair_auc

    # A and C are paraphrases by vote, B is not (see above).
    assert (A.label, B.label, C.label) == (True, False, True)
    ranked = [PairPrediction("I1-1", [0.9, 0, 0], [0.8, 0]), PairPrediction("I2-1", [0.2, 0], [0.9, 0])]
    ranked.append(PairPrediction("I3-1", [0.7, 0], [0.6]))
    assert pair_auc([A, B, C], ranked) == 1.0
    reversed_ = [PairPrediction(p.qid, [1 - max(p.guest_probs)] * len(p.guest_probs), p.host_probs) for p in ranked]
    assert pair_auc([A, B, C], reversed_) == 0.0
    assert math.isnan(pair_auc([A, C], ranked))
