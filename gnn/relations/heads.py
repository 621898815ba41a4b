"""Listwise training terms of the relation models (torch-free, so that task definitions can name them)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HeadChoice"]


@dataclass(frozen=True)
class HeadChoice:
    """A listwise training term: each unit picks at most one partner among its candidate pairs.

    Annotations where a unit has one target (a Sci-Arg component supports one claim) make target
    selection a choice among the unit's candidates, as in dependency parsing. Trained only
    pairwise, the model scores each candidate on its own and the decoder's "best target per
    unit" compares scores that were never trained against each other. This term adds, per
    source unit, the cross-entropy of a softmax over its candidates' relation scores (log-sum-exp
    of the ``labels`` logits minus the no-relation logit) and a fixed "no partner" score of 0.

    Attributes:
        labels: Label indices that count as the unit's choice.
        forward_only: Only pairs whose target comes later (a fragment's next part).
        weight: Weight of the term beside the pairwise cross-entropy.
    """

    labels: tuple[int, ...]
    forward_only: bool = False
    weight: float = 1.0
