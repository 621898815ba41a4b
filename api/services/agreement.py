"""Inter-annotator agreement of the judgements stored in the graph (measured by :mod:`gnn.agreement`)."""

from __future__ import annotations

from api.services.graph import Graph
from gnn import agreement as ag
from graphstore.judgements import judgements as stored_judgements
from ontology.errors import NotFoundError
from ontology.views import JudgementView


def agreement(graph: Graph, corpus: str, filters: ag.JudgementFilter | None = None) -> ag.Agreement:
    """Krippendorff's alpha of a corpus's judgements, in the view that fits the corpus
    (:func:`gnn.agreement.corpus_agreement`).

    Raises:
        ApiError: Filters the corpus does not record (ContextDeP has no trust or confidence).
        NotFoundError: No judgements stored for the corpus.
    """
    filters = filters or ag.JudgementFilter()
    ag.check_filters(corpus, filters)
    judgements = ag.check_judgements(stored_judgements(graph.store(), corpus))
    if not judgements:
        raise NotFoundError(f"no judgements stored for corpus {corpus!r}; ingest its per-annotator files first")
    return ag.corpus_agreement(judgements, corpus, filters)


def filtered(
    judgements: list[JudgementView], corpus: str, min_trust: float | None, min_confidence: float | None
) -> ag.FilteredAgreement:
    """Krippendorff's alpha of judgements read by the browse routes, overall and with the given filters.

    Raises:
        NotFoundError: No judgements stored for the corpus.
    """
    checked = ag.check_judgements(judgements)
    if not checked:
        raise NotFoundError(f"no judgements stored for corpus {corpus!r}")
    return ag.filtered_agreement(checked, corpus, ag.JudgementFilter(min_trust, min_confidence))
