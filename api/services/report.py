"""What a corpus dashboard draws (:mod:`api.dashboard`): the graph's counts of the corpus
(:meth:`graphstore.browsing.BrowseService.corpus_counts`), the agreement of its judgements against
thresholds (:mod:`gnn.agreement`) and each prediction run against gold (:mod:`graphstore.comparisons`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from graphstore import comparisons
from graphstore.browsing import BrowseService
from graphstore.comparisons import CorpusComparison

THRESHOLDS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""The trust and confidence thresholds the agreement plot is drawn at."""


@dataclass
class CorpusData:
    """Everything the plots of one corpus need."""

    corpus: str
    relations: dict[str, Counter[str]] = field(default_factory=dict)
    speakers: list[tuple[str, int]] = field(default_factory=list)
    topics: dict[str, Counter[str]] = field(default_factory=dict)
    agreement: dict[str, list[tuple[float, float | None]]] = field(default_factory=dict)
    comparisons: list[CorpusComparison] = field(default_factory=list)


def corpus_data(service: BrowseService, corpus: str, with_comparisons: bool = True) -> CorpusData:
    """Read the dashboard figures of ``corpus``.

    Args:
        service: Reads the graph.
        corpus: The corpus.
        with_comparisons: Also compare each prediction run with gold (a read of the corpus's
            relations; the plots other than ``predicted-against-gold`` do without).

    Raises:
        NotFoundError: No such corpus.
    """
    from gnn import agreement as ag

    service.corpus(corpus)
    counts = service.corpus_counts(corpus)
    data = CorpusData(corpus, counts.relations, counts.speakers, counts.topics)
    js = ag.check_judgements(service.judgements(corpus))
    if js:
        has_trust = any(j.trust is not None for j in js)
        has_conf = any(j.confidence is not None for j in js)
        if has_trust:
            data.agreement["min trust"] = [
                (t, ag.agreement_row(js, ag.JudgementFilter(min_trust=t)).alpha) for t in THRESHOLDS
            ]
        if has_conf:
            data.agreement["min confidence"] = [
                (t, ag.agreement_row(js, ag.JudgementFilter(min_confidence=t)).alpha) for t in THRESHOLDS
            ]
        if not (has_trust or has_conf):
            data.agreement["all judgements"] = [(0.0, ag.agreement_row(js).alpha)]
    if with_comparisons and data.relations.get("predicted"):
        data.comparisons = comparisons.corpus_comparisons(service.reader, corpus)
    return data
