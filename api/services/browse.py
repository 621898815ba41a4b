"""What the browse routes compute beyond the graph reads (:mod:`graphstore.browsing`): the
annotator agreement of a corpus's stored judgements, measured by :mod:`gnn.agreement`."""

from __future__ import annotations

from dataclasses import dataclass

from gnn import agreement as ag
from gnn.agreement import AgreementRow
from ontology.errors import NotFoundError
from ontology.views import JudgementView


@dataclass(frozen=True)
class CorpusAgreement:
    """Krippendorff's alpha of a corpus's judgements, overall and with the requested filters.

    Attributes:
        corpus: The corpus.
        overall: Every untainted judgement.
        filtered: Those passing the filters.
    """

    corpus: str
    overall: AgreementRow
    filtered: AgreementRow


def agreement(
    judgements: list[JudgementView], corpus: str, min_trust: float | None, min_confidence: float | None
) -> CorpusAgreement:
    """Krippendorff's alpha of stored judgements, overall and with the given filters.

    Raises:
        NotFoundError: No judgements stored for the corpus.
    """
    checked = ag.check_judgements(judgements)
    if not checked:
        raise NotFoundError(f"no judgements stored for corpus {corpus!r}")
    overall = ag.agreement_row(checked)
    filtered = ag.agreement_row(checked, ag.JudgementFilter(min_trust, min_confidence))
    return CorpusAgreement(corpus, overall, filtered)
