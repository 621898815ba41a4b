"""What a corpus dashboard draws (:mod:`api.dashboard`): the graph's counts of the corpus
(:meth:`graphstore.browsing.BrowseService.corpus_counts`), the agreement of its judgements against
thresholds (:func:`gnn.agreement.threshold_curves`) and each prediction run against gold
(:mod:`graphstore.comparisons`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from graphstore import comparisons
from graphstore.browsing import BrowseService
from graphstore.comparisons import CorpusComparison


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
    data.agreement = ag.threshold_curves(ag.check_judgements(service.judgements(corpus)))
    if with_comparisons and data.relations.get("predicted"):
        data.comparisons = comparisons.corpus_comparisons(service.reader, corpus)
    return data
