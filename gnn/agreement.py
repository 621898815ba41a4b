"""Inter-annotator agreement from stored judgements (pure functions, no graph access).

Nominal Krippendorff's alpha comes from the ``krippendorff`` package, fed per-unit label counts
(a unit is the judged relation node, i.e. one M-Arg sentence pair or one ContextDeP QID), so any
number of judgements per unit and per annotator is handled. The M-Arg view reproduces the shape of
Table 2 of Mestre et al. (2021): alpha, number of annotators and number of annotations under
``trust >= t`` and ``confidence >= c`` filters, untainted judgements only. The ContextDeP view
adds the majority-vote accuracy: the share of individual judgements that agree with their unit's
majority label (paraphrase when at least half the annotators say so, the corpus' rule).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ontology.errors import ApiError, ModelError
from ontology.views import JudgementView

MARG_TRUST: tuple[float, ...] = (0.8, 0.85, 0.9, 0.95, 1.0)
MARG_CONFIDENCE: tuple[float, ...] = (1, 2, 3, 4, 5)
PARAPHRASE, NON_PARAPHRASE = "Paraphrase", "NonParaphrase"


@dataclass(frozen=True)
class AgreementRow:
    """Agreement of one selection of judgements (one line of M-Arg's Table 2)."""

    min_trust: float | None
    min_confidence: float | None
    alpha: float | None
    annotators: int
    annotations: int
    units: int
    labels: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def check_judgements(judgements: Iterable[JudgementView]) -> list[JudgementView]:
    """The judgements as a list, each checked to carry a label.

    Raises:
        ModelError: A judgement has no label.
    """
    out = list(judgements)
    for k, j in enumerate(out):
        if j.label is None:
            raise ModelError(f"judgement {k} of {j.annotator} on {j.relation} has no label")
    return out


@dataclass(frozen=True)
class JudgementFilter:
    """Which judgements an agreement figure counts; a judgement without a filtered attribute is dropped.

    Attributes:
        min_trust: Keep ``trust >= min_trust``.
        min_confidence: Keep ``confidence >= min_confidence``.
        include_tainted: Keep judgements marked tainted (M-Arg drops them by default, as the paper).
    """

    min_trust: float | None = None
    min_confidence: float | None = None
    include_tainted: bool = False

    def keeps(self, j: JudgementView) -> bool:
        """Whether ``j`` passes the filter."""
        if j.tainted and not self.include_tainted:
            return False
        if self.min_trust is not None and (j.trust is None or j.trust < self.min_trust):
            return False
        return self.min_confidence is None or (j.confidence is not None and j.confidence >= self.min_confidence)

    def select(self, judgements: Iterable[JudgementView]) -> list[JudgementView]:
        """The judgements passing the filter, in order."""
        return [j for j in judgements if self.keeps(j)]


def value_counts(judgements: Iterable[JudgementView]) -> tuple[list[str], list[str], list[list[int]]]:
    """Units, label domain and the units x labels count matrix (sorted, deterministic)."""
    per_unit: dict[str, Counter[str]] = defaultdict(Counter)
    for j in judgements:
        per_unit[j.relation][str(j.label)] += 1
    units = sorted(per_unit)
    labels = sorted({label for counts in per_unit.values() for label in counts})
    return units, labels, [[per_unit[u][label] for label in labels] for u in units]


def nominal_alpha(judgements: Sequence[JudgementView]) -> float | None:
    """Krippendorff's alpha (nominal) over units; ``None`` when undefined.

    Alpha is undefined without at least one unit judged twice or with a single label overall (no
    expected disagreement).
    """
    import krippendorff
    import numpy as np

    _, labels, counts = value_counts(judgements)
    pairable = [row for row in counts if sum(row) >= 2]
    if len(labels) < 2 or not pairable:
        return None
    if sum(1 for k in range(len(labels)) if any(row[k] for row in pairable)) < 2:
        return None
    try:
        alpha = float(krippendorff.alpha(value_counts=np.array(pairable), level_of_measurement="nominal"))
    except (ValueError, ZeroDivisionError) as e:
        raise ModelError(f"Krippendorff's alpha failed on {len(pairable)} units: {e}") from e
    return alpha if math.isfinite(alpha) else None


def agreement_row(judgements: Iterable[JudgementView], filters: JudgementFilter | None = None) -> AgreementRow:
    """Alpha and counts of the judgements passing ``filters`` (default: every untainted judgement)."""
    filters = filters or JudgementFilter()
    chosen = filters.select(judgements)
    return AgreementRow(
        min_trust=filters.min_trust,
        min_confidence=filters.min_confidence,
        alpha=nominal_alpha(chosen),
        annotators=len({j.annotator for j in chosen}),
        annotations=len(chosen),
        units=len({j.relation for j in chosen}),
        labels=dict(sorted(Counter(str(j.label) for j in chosen).items())),
    )


def marg_table(
    judgements: Sequence[JudgementView],
    trusts: Sequence[float] = MARG_TRUST,
    confidences: Sequence[float] = MARG_CONFIDENCE,
    include_tainted: bool = False,
) -> list[AgreementRow]:
    """M-Arg Table 2: one row per (minimum trust, minimum self-confidence)."""
    return [agreement_row(judgements, JudgementFilter(t, c, include_tainted)) for t in trusts for c in confidences]


@dataclass(frozen=True)
class MargAgreement:
    """M-Arg's agreement: the overall row plus the filtered rows (Table 2's grid, or the one filter given).

    Attributes:
        include_tainted: Whether judgements marked tainted were kept.
        overall: Every (untainted) judgement.
        filters: One row per filter.
    """

    include_tainted: bool
    overall: AgreementRow
    filters: list[AgreementRow]
    corpus: str = "m-arg"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "corpus": self.corpus,
            "include_tainted": self.include_tainted,
            "overall": self.overall.as_dict(),
            "filters": [r.as_dict() for r in self.filters],
        }


@dataclass(frozen=True)
class ContextdepAgreement:
    """ContextDeP's agreement: alpha over Paraphrase/NonParaphrase, counts and majority-vote accuracy."""

    alpha: float | None
    annotators: int
    annotations: int
    units: int
    labels: dict[str, int]
    majority_paraphrase_units: int
    majority_vote_accuracy: float | None
    corpus: str = "contextdep"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``corpus`` first)."""
        return {"corpus": self.corpus, **{k: v for k, v in asdict(self).items() if k != "corpus"}}


@dataclass(frozen=True)
class CorpusAgreement:
    """The agreement of any other corpus with judgements: one row under the given filters."""

    corpus: str
    row: AgreementRow

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form: the corpus and the row's fields."""
        return {"corpus": self.corpus, **self.row.as_dict()}


Agreement = MargAgreement | ContextdepAgreement | CorpusAgreement
"""The agreement of a corpus, in the view that fits it."""


def marg_agreement(judgements: Sequence[JudgementView], filters: JudgementFilter | None = None) -> MargAgreement:
    """Overall alpha plus the filtered rows: ``filters``, or the paper's grid when it sets no threshold."""
    filters = filters or JudgementFilter()
    tainted = filters.include_tainted
    overall = agreement_row(judgements, JudgementFilter(include_tainted=tainted))
    if filters.min_trust is None and filters.min_confidence is None:
        rows = marg_table(judgements, include_tainted=tainted)
    else:
        rows = [agreement_row(judgements, filters)]
    return MargAgreement(tainted, overall, rows)


def majority_labels(
    judgements: Iterable[JudgementView],
    positive: str = PARAPHRASE,
    negative: str = NON_PARAPHRASE,
    threshold: float = 0.5,
) -> dict[str, str]:
    """Per unit: ``positive`` when its share of ``positive`` labels is at least ``threshold``."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for j in judgements:
        counts[j.relation][str(j.label)] += 1
    return {
        unit: positive if c[positive] / sum(c.values()) >= threshold else negative for unit, c in sorted(counts.items())
    }


def majority_vote_accuracy(
    judgements: Sequence[JudgementView],
    positive: str = PARAPHRASE,
    negative: str = NON_PARAPHRASE,
    threshold: float = 0.5,
) -> float | None:
    """Share of judgements equal to their unit's majority label (``None`` without judgements)."""
    if not judgements:
        return None
    majority = majority_labels(judgements, positive, negative, threshold)
    return sum(1 for j in judgements if j.label == majority[j.relation]) / len(judgements)


def contextdep_agreement(judgements: Sequence[JudgementView]) -> ContextdepAgreement:
    """ContextDeP: alpha over Paraphrase/NonParaphrase, counts and majority-vote accuracy."""
    row = agreement_row(judgements, JudgementFilter(include_tainted=True))
    majority = majority_labels(judgements)
    return ContextdepAgreement(
        alpha=row.alpha,
        annotators=row.annotators,
        annotations=row.annotations,
        units=row.units,
        labels=row.labels,
        majority_paraphrase_units=sum(1 for label in majority.values() if label == PARAPHRASE),
        majority_vote_accuracy=majority_vote_accuracy(judgements),
    )


def check_filters(corpus: str, filters: JudgementFilter) -> None:
    """Refuse filters that ``corpus`` does not record.

    Raises:
        ApiError: Trust or confidence filters on ContextDeP (its judgements carry neither).
    """
    if corpus == "contextdep" and (filters.min_trust is not None or filters.min_confidence is not None):
        raise ApiError("ContextDeP judgements carry no trust or confidence; drop --min-trust/--min-confidence")


def corpus_agreement(judgements: Sequence[JudgementView], corpus: str, filters: JudgementFilter) -> Agreement:
    """Krippendorff's alpha of a corpus's checked judgements, in the view that fits the corpus.

    M-Arg gives the overall alpha plus the Table-2 grid of trust/confidence filters (or the one
    filter given); ContextDeP adds the majority-vote accuracy; any other corpus with judgements
    gives one row under the given filters.
    """
    if corpus == "contextdep":
        return contextdep_agreement(judgements)
    if corpus == "m-arg":
        return marg_agreement(judgements, filters)
    return CorpusAgreement(corpus, agreement_row(judgements, filters))


@dataclass(frozen=True)
class FilteredAgreement:
    """Krippendorff's alpha of a corpus's judgements, overall and with the requested filters.

    Attributes:
        corpus: The corpus.
        overall: Every untainted judgement.
        filtered: Those passing the filters.
    """

    corpus: str
    overall: AgreementRow
    filtered: AgreementRow


def filtered_agreement(judgements: Sequence[JudgementView], corpus: str, filters: JudgementFilter) -> FilteredAgreement:
    """Alpha of every untainted judgement and of those passing ``filters``."""
    return FilteredAgreement(corpus, agreement_row(judgements), agreement_row(judgements, filters))


THRESHOLDS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""The trust and confidence thresholds the agreement plot is drawn at."""


def threshold_curves(
    judgements: Sequence[JudgementView], thresholds: Sequence[float] = THRESHOLDS
) -> dict[str, list[tuple[float, float | None]]]:
    """Alpha at each minimum trust and at each minimum confidence (those the judgements record; one
    point of every judgement when they record neither); nothing without judgements."""
    if not judgements:
        return {}
    curves: dict[str, list[tuple[float, float | None]]] = {}
    if any(j.trust is not None for j in judgements):
        curves["min trust"] = [(t, agreement_row(judgements, JudgementFilter(min_trust=t)).alpha) for t in thresholds]
    if any(j.confidence is not None for j in judgements):
        curves["min confidence"] = [
            (t, agreement_row(judgements, JudgementFilter(min_confidence=t)).alpha) for t in thresholds
        ]
    if not curves:
        curves["all judgements"] = [(0.0, agreement_row(judgements).alpha)]
    return curves
