"""Evaluation measures of the models (pure functions, no torch).

:class:`PRF` is the one precision / recall / F1 type of the project: the discourse scores below,
BAM's measures (:mod:`gnn.bam`) and the relation tasks (:mod:`gnn.relations.metrics`) all use it.

Discourse parsing is scored as in the literature (Shi & Huang 2019 and after): micro precision,
recall and F1 over (dialogue, child, parent) links, and over (dialogue, child, parent, relation)
for link & relation, pooled over all dialogues. With one parent per EDU (Molweni) precision equals
recall; STAC's multi-parent EDUs make them differ. Dialogues are keyed by position in the file (STAC
reuses dialogue ids), so callers pass aligned lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ontology.errors import ModelError

Link = tuple[int, int, str]  # (parent x, child y, relation label)


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 with the counts behind them.

    Built from counts by :meth:`from_counts` (a micro score) or averaged by :meth:`mean` (a macro
    score). Counts may be weighted (a pair list compressed by label combination), hence floats.

    Attributes:
        precision: ``tp / predicted`` (0 where nothing is predicted).
        recall: ``tp / gold`` (0 where there is no gold).
        f1: Harmonic mean of precision and recall (0 where both are 0).
        tp: True positives.
        predicted: Predicted items.
        gold: Gold items.
    """

    precision: float
    recall: float
    f1: float
    tp: float
    predicted: float
    gold: float

    @classmethod
    def from_counts(cls, tp: float, predicted: float, gold: float) -> PRF:
        """Precision, recall and F1 from counts (0 where undefined)."""
        p = tp / predicted if predicted else 0.0
        r = tp / gold if gold else 0.0
        return cls(p, r, 2 * p * r / (p + r) if p + r else 0.0, tp, predicted, gold)

    @classmethod
    def mean(cls, scores: Sequence[PRF]) -> PRF:
        """Macro average: mean precision, recall and F1 of ``scores`` (0 when there are none).

        The counts are the sums of those of ``scores``, so they still say how much was scored.
        """
        n = len(scores) or 1
        return cls(
            sum(s.precision for s in scores) / n,
            sum(s.recall for s in scores) / n,
            sum(s.f1 for s in scores) / n,
            sum(s.tp for s in scores),
            sum(s.predicted for s in scores),
            sum(s.gold for s in scores),
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form: the scores unrounded and the counts."""
        return asdict(self)

    def rounded(self, digits: int = 4) -> dict[str, float]:
        """The scores alone as ``p``, ``r`` and ``f1``, rounded: the form of the relation task reports."""
        return {"p": round(self.precision, digits), "r": round(self.recall, digits), "f1": round(self.f1, digits)}


@dataclass(frozen=True)
class DiscourseScores:
    """Micro link and link & relation scores of a set of dialogues."""

    link: PRF
    link_rel: PRF
    dialogues: int

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form; F1 also as percentages (how papers report them)."""
        return {
            "dialogues": self.dialogues,
            "link_f1": round(100 * self.link.f1, 2),
            "link_rel_f1": round(100 * self.link_rel.f1, 2),
            "link": self.link.as_dict(),
            "link_rel": self.link_rel.as_dict(),
        }


def discourse_scores(gold: Sequence[Iterable[Link]], predicted: Sequence[Iterable[Link]]) -> DiscourseScores:
    """Micro link F1 and link & relation F1.

    Args:
        gold: Per dialogue (by position), its gold ``(x, y, label)`` links.
        predicted: Per dialogue, in the same order, the predicted links.

    Raises:
        ModelError: The two lists do not have the same number of dialogues.
    """
    if len(gold) != len(predicted):
        raise ModelError(f"{len(predicted)} predicted dialogues for {len(gold)} gold dialogues")
    tp_l = tp_r = n_pred_l = n_gold_l = n_pred_r = n_gold_r = 0
    for g, p in zip(gold, predicted, strict=True):
        g_rel, p_rel = set(g), set(p)
        g_link = {(x, y) for x, y, _ in g_rel}
        p_link = {(x, y) for x, y, _ in p_rel}
        tp_l += len(g_link & p_link)
        tp_r += len(g_rel & p_rel)
        n_pred_l += len(p_link)
        n_gold_l += len(g_link)
        n_pred_r += len(p_rel)
        n_gold_r += len(g_rel)
    return DiscourseScores(
        PRF.from_counts(tp_l, n_pred_l, n_gold_l), PRF.from_counts(tp_r, n_pred_r, n_gold_r), len(gold)
    )
