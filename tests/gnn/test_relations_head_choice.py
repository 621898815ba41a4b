"""The listwise head-choice term of the relation training loss, on hand-computed cases."""

from __future__ import annotations

import math

import pytest
import torch

from gnn.relations.heads import HeadChoice
from gnn.relations.train import head_choice_loss

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier

# Labels: 0 none, 1 supports, 2 contradicts, 3 parts_of_same.
LOGITS = torch.tensor(
    [
        [0.0, 2.0, 0.0, -1.0],  # 0 -> 1, gold supports
        [1.0, 0.5, -1.0, 0.0],  # 0 -> 2, none
        [0.0, -1.0, -2.0, 1.5],  # 1 -> 2, gold parts_of_same
        [0.5, 0.0, 0.0, 0.0],  # 2 -> 1, none
    ]
)
PAIRS = torch.tensor([[0, 1], [0, 2], [1, 2], [2, 1]])
LABELS = torch.tensor([1, 0, 3, 0])


def _score(row: list[float], chosen: tuple[int, ...]) -> float:
    return math.log(sum(math.exp(row[k]) for k in chosen)) - row[0]


def test_support_choice_matches_the_hand_computed_softmax() -> None:
    rows = LOGITS.tolist()
    s = [_score(r, (1, 2)) for r in rows]
    # Source 0 picks pair 0 among pairs 0, 1 and "no partner" (score 0).
    loss0 = math.log(1 + math.exp(s[0]) + math.exp(s[1])) - s[0]
    # Sources 1 and 2 have no gold support: the right choice is "no partner".
    loss1 = math.log(1 + math.exp(s[2]))
    loss2 = math.log(1 + math.exp(s[3]))
    got = head_choice_loss(LOGITS, PAIRS, LABELS, HeadChoice((1, 2)))
    assert math.isclose(float(got), (loss0 + loss1 + loss2) / 3, rel_tol=1e-5)


def test_forward_only_keeps_later_targets() -> None:
    rows = LOGITS.tolist()
    s = [_score(r, (3,)) for r in rows]
    # Pairs 0, 1 (source 0) and 2 (source 1) point forward; pair 3 (2 -> 1) is left out.
    loss0 = math.log(1 + math.exp(s[0]) + math.exp(s[1]))
    loss1 = math.log(1 + math.exp(s[2])) - s[2]
    got = head_choice_loss(LOGITS, PAIRS, LABELS, HeadChoice((3,), forward_only=True))
    assert math.isclose(float(got), (loss0 + loss1) / 2, rel_tol=1e-5)


def test_gradient_raises_the_gold_target_over_its_rival() -> None:
    logits = LOGITS.clone().requires_grad_(True)
    head_choice_loss(logits, PAIRS, LABELS, HeadChoice((1, 2))).backward()
    assert logits.grad is not None
    # Lowering the loss raises the gold pair's supports logit and lowers the rival's.
    assert logits.grad[0, 1] < 0 < logits.grad[1, 1]


def test_large_scores_stay_finite() -> None:
    # Source 2's wrong supports (score 300) would underflow exp(-score) of "no partner"; source 0's
    # gold pair lies 400 below its rival.
    logits = torch.tensor([[0.0, -200.0, -200.0, 0.0], [0.0, 200.0, 0.0, 0.0], [0.0, 300.0, 0.0, 0.0]])
    pairs = torch.tensor([[0, 1], [0, 2], [2, 0]])
    got = head_choice_loss(logits, pairs, torch.tensor([1, 0, 0]), HeadChoice((1, 2)))
    assert torch.isfinite(got)
    # About (400 + 300) / 2: each source's loss is the gap between its best and its right choice.
    assert math.isclose(float(got), 350.0, rel_tol=1e-3)
