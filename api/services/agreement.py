"""Inter-annotator agreement of the judgements stored in the graph."""

from __future__ import annotations

from api.services.graph import Graph
from gnn import agreement as ag
from graphstore.judgements import judgements as stored_judgements
from ontology.errors import ApiError, NotFoundError


def agreement(graph: Graph, corpus: str, filters: ag.JudgementFilter | None = None) -> ag.Agreement:
    """Krippendorff's alpha of a corpus's judgements, in the view that fits the corpus.

    M-Arg gives the overall alpha plus the Table-2 grid of trust/confidence filters (or the one
    filter given); ContextDeP adds the majority-vote accuracy; any other corpus with judgements
    gives one row under the given filters.

    Raises:
        ApiError: Filters the corpus does not record (ContextDeP has no trust or confidence).
        NotFoundError: No judgements stored for the corpus.
    """
    filters = filters or ag.JudgementFilter()
    if corpus == "contextdep" and (filters.min_trust is not None or filters.min_confidence is not None):
        raise ApiError("ContextDeP judgements carry no trust or confidence; drop --min-trust/--min-confidence")
    judgements = ag.check_judgements(stored_judgements(graph.store(), corpus))
    if not judgements:
        raise NotFoundError(f"no judgements stored for corpus {corpus!r}; ingest its per-annotator files first")
    if corpus == "contextdep":
        return ag.contextdep_agreement(judgements)
    if corpus == "m-arg":
        return ag.marg_agreement(judgements, filters)
    return ag.CorpusAgreement(corpus, ag.agreement_row(judgements, filters))
