"""Cross-corpus links: support, attack and rephrase edges between propositions of different corpora.

Candidates come from the vector index: for each proposition, its ``k`` nearest propositions of
the other corpora. How a candidate pair is labelled (rephrase by cosine, else the QT30 relation
classifier's out-of-context label, :meth:`gnn.relations.task.RelationsTask.predict`) and which are
kept is :mod:`gnn.links`; here the index is read and the models are loaded. ``write`` stores the
links as ONE prediction run (model ``cross-corpus-links``; origin predicted, never gold, scores
rounded) through the one prediction job (:class:`api.services.predictions.PredictionJob`). The run
id is derived from the model versions, the parameters and the pairs, so running the same link job
again writes nothing.
"""

from __future__ import annotations

import json

from api.services import predictions, tasks
from api.services.graph import Graph
from api.services.semantic import encoder, model_tag
from api.settings import Settings
from gnn.links import MODEL, LinkOptions, LinkReport, find_candidates, label_candidates, sample_propositions
from graphstore.vectors import VectorStore
from ontology.labels import RelationLabel
from ontology.progress import SILENT, Reporter
from ontology.terms import Label
from ontology.views import SemanticHit

TASK = "cross-corpus-relations"


def link_across_corpora(
    graph: Graph,
    settings: Settings,
    options: LinkOptions | None = None,
    *,
    write: bool = False,
    reporter: Reporter = SILENT,
) -> LinkReport:
    """Predict relations between each proposition and its nearest propositions of other corpora.

    Args:
        graph: The graph (propositions must be embedded: ``argweb embed``).
        settings: Encoder and model settings.
        options: Candidates and thresholds (defaults: k 3, threshold 0.5, rephrase cosine 0.9).
        write: Store the links as one prediction run.
        reporter: Progress and log lines.

    Raises:
        ApiError: Options out of range. NotFoundError: Nothing embedded.
    """
    opts = options or LinkOptions()
    opts.check()
    k, threshold, rephrase_cosine, limit = opts.k, opts.threshold, opts.rephrase_cosine, opts.limit
    from api.services.semantic import _require_index
    from gnn.task import TextPair

    store = VectorStore(graph.driver(), settings.neo4j_database)
    _require_index(store, [Label.Proposition])
    enc = encoder(settings)
    card = tasks.load(settings, "relations").card
    version = f"{card.written_version}+{model_tag(enc)}"
    props = sample_propositions(store.embedded(Label.Proposition), limit)
    report = LinkReport(propositions=len(props), threshold=threshold, model_version=version)

    def nearest(vectors: list[list[float]], corpus: str) -> list[list[SemanticHit]]:
        return store.nearest(Label.Proposition, vectors, k, exclude_corpus=corpus)

    with reporter.progress("nearest propositions of other corpora", len(props)) as advance:
        cands = find_candidates(props, enc.encode, nearest, advance)
    report.candidates = len(cands)
    reporter.log(f"{len(cands)} candidate pairs; labelling them")

    def classify(pairs: list[TextPair]) -> list[tuple[RelationLabel, float]]:
        return [(RelationLabel(p.label), p.score) for p in tasks.predict(settings, "relations", pairs)]

    links = label_candidates(cands, classify, opts)
    report.keep(links, opts.sample_size)
    if write and links:
        params = {"k": k, "threshold": threshold, "rephrase_cosine": rephrase_cosine, "limit": limit}
        content = json.dumps([version, params, [(x.source, x.target, x.label.value) for x in links]])
        job = predictions.PredictionJob(TASK, MODEL, version, ("xlink", content), params)
        run, done = job.write(graph, [x.relation() for x in links], "cross-corpus links", reporter)
        report.run_id, report.written = run.run_id, done.written if done else 0
    return report
