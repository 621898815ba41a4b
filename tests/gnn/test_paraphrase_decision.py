"""The pair decision of the paraphrase task: cuts chosen for a precision goal, three-way answers, scoring."""

from __future__ import annotations

import pytest

from gnn.paraphrase import MIN_CALLED, NEVER, choose_cuts
from gnn.paraphrase_eval import NOT_PARAPHRASE, NOT_SURE, PARAPHRASE, PairPrediction, ParaphrasePair, score_predictions

pytestmark = pytest.mark.unit  # synthetic scores, no model loaded


def test_the_cut_is_the_lowest_score_whose_calls_reach_the_goal() -> None:
    # 30 pairs: scores 0.00 .. 0.29; the top 12 are 9 paraphrases and 3 not (precision 0.75), the
    # next 6 add 1 paraphrase and 5 not (precision 10/18 < 2/3), the bottom 12 are all not.
    scores = [i / 100 for i in range(30)]
    gold = [False] * 12 + [False, False, True, False, False, False] + [True, False] * 3 + [True] * 6
    rule = choose_cuts(scores, gold, 2 / 3)
    called = [s >= rule.cut for s in scores]
    hits = sum(g and c for g, c in zip(gold, called, strict=True))
    assert hits / sum(called) >= 2 / 3 and rule.precision == pytest.approx(hits / sum(called))
    assert rule.recall == pytest.approx(hits / sum(gold))
    # One score lower and the calls fall under the goal: the cut calls as many pairs as the goal allows.
    lower = max(s for s in scores if s < rule.cut)
    below = [s >= lower for s in scores]
    assert sum(g and c for g, c in zip(gold, below, strict=True)) / sum(below) < 2 / 3
    # The not-paraphrase call: the bottom pairs are all not paraphrases, so it is made there.
    assert 0.0 < rule.low <= rule.cut and rule.negative_precision >= 2 / 3
    unsure = [rule.low <= s < rule.cut for s in scores]
    assert rule.not_sure_share == pytest.approx(sum(unsure) / len(scores)) and rule.pairs == 30


def test_no_call_rests_on_fewer_pairs_than_the_minimum_or_misses_the_goal() -> None:
    # Paraphrases spread evenly: no cut reaches 0.9 precision, so neither call is ever made.
    scores = [i / 40 for i in range(40)]
    gold = [i % 2 == 0 for i in range(40)]
    rule = choose_cuts(scores, gold, 0.9)
    assert (rule.cut, rule.low, rule.not_sure_share, rule.precision, rule.recall) == (NEVER, 0.0, 1.0, 0.0, 0.0)
    # Right on the top few pairs only: too few to call (one more pair and the goal is missed).
    few = choose_cuts(scores, [i >= 40 - (MIN_CALLED - 1) for i in range(40)], 0.95)
    assert few.cut == NEVER and few.low > 0.0  # the not-paraphrase call rests on 31 pairs
    assert choose_cuts([], [], 2 / 3).cut == NEVER


def test_three_way_answers_and_how_they_are_scored() -> None:
    pairs = [
        ParaphrasePair("I1-1", ["a"], ["b"], [1.0], [1.0], 3, 4),
        ParaphrasePair("I2-1", ["c"], ["d"], [1.0], [1.0], 3, 4),
        ParaphrasePair("I3-1", ["e"], ["f"], [0.0], [0.0], 0, 4),
    ]
    rule = {"cut": 0.8, "low": 0.3}
    preds = [
        PairPrediction("I1-1", [0.9], [0.85], **rule),  # called
        PairPrediction("I2-1", [0.7], [0.6], **rule),  # not sure: the 0.5 rule would call it
        PairPrediction("I3-1", [0.2], [0.9], **rule),  # score 0.2 < low: not a paraphrase
    ]
    assert [p.decision for p in preds] == [PARAPHRASE, NOT_SURE, NOT_PARAPHRASE]
    assert [p.paraphrase for p in preds] == [True, False, False]
    # Highlights are the tokens at 0.5 or more whatever the decision.
    assert preds[1].highlights("guest") == {0} and preds[2].highlights("host") == {0}
    m = score_predictions(pairs, preds)
    # Not sure is scored as not a paraphrase: precision 1, recall 1/2; its highlights still count.
    assert (m.predicted_positives, m.true_positives, m.not_sure, m.precision, m.recall) == (1, 1, 1, 1.0, 0.5)
    assert m.not_sure_share == pytest.approx(1 / 3) and m.jaccard_guest_pairs == 2
    assert m.as_dict()["not_sure"] == 1
    labels = m.labels().as_dict()
    assert labels["not_paraphrase"]["predicted"] == 2 and set(labels) == {PARAPHRASE, NOT_PARAPHRASE}
    # Without a rule the paper's 0.5 rule answers every pair.
    plain = [PairPrediction(p.qid, p.guest_probs, p.host_probs) for p in preds]
    assert [p.decision for p in plain] == [PARAPHRASE, PARAPHRASE, NOT_PARAPHRASE]


def test_the_pair_model_reads_token_probabilities_and_scores_out_of_fold() -> None:
    import numpy as np

    from gnn.paraphrase import fit_pair_model, pair_features, pair_model_scores, pair_probability

    p = PairPrediction("I1-1", [0.1, 0.9, 0.6, 0.2], [0.3])
    f = pair_features(p)
    # The weaker side's strongest token, then per side: max, top-3 mean, mean, share >= 0.5, length.
    assert f[0] == 0.3 == p.strongest == p.score
    assert f[1:5] == pytest.approx([0.9, (0.9 + 0.6 + 0.2) / 3, 0.45, 0.5]) and f[6:10] == pytest.approx(
        [0.3] * 3 + [0]
    )
    # Paraphrases have a strong token on both sides here: the pair model learns it, out of fold too.
    rng = np.random.default_rng(0)
    preds, gold, groups = [], [], []
    for i in range(60):
        label = i % 2 == 0
        strong = 0.9 if label else 0.3
        preds.append(PairPrediction(f"I{i}-1", [strong + rng.normal(0, 0.05), 0.1], [strong + rng.normal(0, 0.05)]))
        gold.append(label)
        groups.append(f"I{i // 2}")
    fitted = pair_model_scores([pair_features(q) for q in preds], gold, groups)
    assert fitted is not None
    model, scores = fitted
    assert len(scores) == 60 and all((s > 0.5) == g for s, g in zip(scores, gold, strict=True))
    assert model == fit_pair_model([pair_features(q) for q in preds], gold)
    # A prediction read with the model scores by its probability; the decision follows that score.
    with_model = PairPrediction("x-1", [0.9], [0.92], cut=0.8, low=0.2, pair=pair_probability(model, preds[0]))
    assert with_model.score == with_model.pair and with_model.score > 0.8 and with_model.decision == PARAPHRASE
    # One class, or a single interview: no pair model.
    assert pair_model_scores([pair_features(q) for q in preds], [True] * 60, groups) is None
    assert pair_model_scores([pair_features(q) for q in preds], gold, ["I0"] * 60) is None


def test_counts_stay_json_numbers_whatever_type_the_pair_score_has() -> None:
    import json

    import numpy as np

    pair = ParaphrasePair("I1-1", ["a"], ["b"], [1.0], [1.0], 3, 4)
    pred = PairPrediction("I1-1", [0.9], [0.9], cut=0.8, low=0.2, pair=np.float64(0.85))
    m = score_predictions([pair], [pred])
    assert json.loads(json.dumps(m.as_dict() | {"labels": m.labels().as_dict()}))["predicted_positives"] == 1
