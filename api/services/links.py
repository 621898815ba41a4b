"""Cross-corpus links: support, attack and rephrase edges between propositions of different corpora.

Candidates come from the vector index: for each proposition, its ``k`` nearest propositions of
the other corpora. Each candidate pair (query -> neighbour) is then labelled:

* **rephrase** when the two embeddings are nearly the same direction (cosine >= ``rephrase_cosine``),
  scored by that cosine: the QT30 relation model, asked out of dialogue context, gives even close
  paraphrases a rephrase (MA) probability under 1%, so the encoder decides paraphrase;
* otherwise the QT30 relation classifier's label (support, attack or none) and its probability
  (the relations task's out-of-context pairs, :meth:`gnn.relations.task.RelationsTask.predict`).

Pairs labelled ``none`` or scored under ``threshold`` are dropped. ``write`` stores the rest as ONE
prediction run (model ``cross-corpus-links``; origin predicted, never gold, scores rounded) through
the one prediction job (:class:`api.services.predictions.PredictionJob`). The run id is derived from
the model versions, the parameters and the pairs, so running the same link job again writes nothing.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from api.services import predictions, tasks
from api.services.graph import Graph
from api.services.semantic import encoder, model_tag
from api.settings import Settings
from graphstore.vectors import VectorStore
from ontology.errors import ApiError
from ontology.labels import RelationLabel
from ontology.progress import SILENT, Reporter
from ontology.records import PredictedRelation, prediction_score
from ontology.terms import Label

MODEL = "cross-corpus-links"
TASK = "cross-corpus-relations"
BATCH = 256


@dataclass(frozen=True)
class Link:
    """One predicted cross-corpus relation with both texts."""

    source: str
    source_corpus: str
    source_text: str
    target: str
    target_corpus: str
    target_text: str
    label: RelationLabel
    score: float
    cosine: float
    by: str

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            **self.__dict__,
            "label": self.label.value,
            "score": prediction_score(self.score),
            "cosine": round(self.cosine, 4),
        }


@dataclass
class LinkReport:
    """What :func:`link_across_corpora` found (and wrote)."""

    propositions: int = 0
    candidates: int = 0
    threshold: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)
    pairs_by_corpora: dict[str, int] = field(default_factory=dict)
    sample: list[Link] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    run_id: str | None = None
    written: int = 0
    model: str = MODEL
    model_version: str = ""

    def as_dict(self, all_links: bool = False) -> dict[str, object]:
        """JSON-ready summary (every link only when asked)."""
        out: dict[str, object] = {
            "propositions": self.propositions,
            "candidates": self.candidates,
            "threshold": self.threshold,
            "counts": self.counts,
            "pairs_by_corpora": self.pairs_by_corpora,
            "sample": [s.as_dict() for s in self.sample],
            "model": self.model,
            "model_version": self.model_version,
            "run_id": self.run_id,
            "written": self.written,
        }
        if all_links:
            out["links"] = [s.as_dict() for s in self.links]
        return out


def _propositions(store: VectorStore, limit: int | None) -> list[dict[str, Any]]:
    rows = store.embedded(Label.Proposition)
    if limit is not None and limit < len(rows):
        # A seeded sample spread over every corpus, not the first ids of one.
        rows = sorted(random.Random(0).sample(rows, limit), key=lambda r: r["id"])
    return rows


@dataclass(frozen=True)
class LinkOptions:
    """How candidates are found and which links are kept.

    Attributes:
        k: Nearest propositions of other corpora per proposition (1..50).
        threshold: Minimum score of a kept link, in [0, 1].
        rephrase_cosine: Cosine from which a pair is a rephrase.
        limit: Consider only this many propositions (a seeded sample); None = all.
        sample_size: Links shown with their texts.
    """

    k: int = 3
    threshold: float = 0.5
    rephrase_cosine: float = 0.9
    limit: int | None = None
    sample_size: int = 5

    def check(self) -> None:
        """Raise :class:`ApiError` for values out of range."""
        if not 1 <= self.k <= 50:
            raise ApiError(f"k must lie in 1..50, not {self.k}")
        if not 0.0 <= self.threshold <= 1.0 or not 0.0 < self.rephrase_cosine <= 1.0:
            raise ApiError("threshold must lie in [0, 1] and the rephrase cosine in (0, 1]")
        if self.limit is not None and self.limit < 1:
            raise ApiError(f"limit must be positive, not {self.limit}")


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
    version = f"{card.version}+{model_tag(enc)}"
    props = _propositions(store, limit)
    report = LinkReport(propositions=len(props), threshold=threshold, model_version=version)
    seen: set[tuple[str, str]] = set()
    cands: list[tuple[dict[str, Any], Any]] = []
    with reporter.progress("nearest propositions of other corpora", len(props)) as advance:
        for s in range(0, len(props), BATCH):
            chunk = props[s : s + BATCH]
            vecs = enc.encode([p["text"] for p in chunk])
            by_corpus: dict[str, list[int]] = {}
            for i, p in enumerate(chunk):
                by_corpus.setdefault(p["corpus"], []).append(i)
            for corpus, idx in by_corpus.items():
                found = store.nearest(Label.Proposition, [vecs[i].tolist() for i in idx], k, exclude_corpus=corpus)
                for i, hits in zip(idx, found, strict=True):
                    for hit in hits:
                        key = tuple(sorted((chunk[i]["id"], hit.id)))
                        if key not in seen:
                            seen.add(key)
                            cands.append((chunk[i], hit))
            advance(len(chunk))
    report.candidates = len(cands)
    reporter.log(f"{len(cands)} candidate pairs; labelling them")
    to_classify = [i for i, (_, hit) in enumerate(cands) if hit.score < rephrase_cosine]
    asked = [TextPair(cands[i][0]["text"], cands[i][1].text or "") for i in to_classify]
    labelled = [(RelationLabel(p.label), p.score) for p in tasks.predict(settings, "relations", asked)]
    by_index = dict(zip(to_classify, labelled, strict=True))
    links: list[Link] = []
    for i, (src, hit) in enumerate(cands):
        if i in by_index:
            label, score = by_index[i]
            by = "relation-classifier"
        else:
            label, score, by = RelationLabel.REPHRASE, min(max(hit.score, 0.0), 1.0), "encoder-cosine"
        if label is RelationLabel.NONE or score < threshold:
            continue
        ends = (src["id"], src["corpus"], src["text"], hit.id, hit.corpus or "", hit.text or "")
        links.append(Link(*ends, label, prediction_score(score), hit.score, by))
    links.sort(key=lambda x: (-x.score, x.source, x.target))
    report.links = links
    report.counts = dict(sorted(Counter(x.label.value for x in links).items()))
    report.pairs_by_corpora = dict(
        sorted(Counter("->".join((x.source_corpus, x.target_corpus)) for x in links).items())
    )
    report.sample = random.Random(1).sample(links, min(opts.sample_size, len(links))) if links else []
    if write and links:
        params = {"k": k, "threshold": threshold, "rephrase_cosine": rephrase_cosine, "limit": limit}
        content = json.dumps([version, params, [(x.source, x.target, x.label.value) for x in links]])
        job = predictions.PredictionJob(TASK, MODEL, version, ("xlink", content), params)
        run, present = job.pick(graph)
        rows = [
            PredictedRelation(
                source=x.source,
                target=x.target,
                label=x.label,
                score=x.score,
                scheme_label="cosine" if x.by == "encoder-cosine" else None,
            )
            for x in links
        ]
        report.run_id = run.run_id
        if present is None:
            report.written = job.write(graph, rows, "cross-corpus links", reporter, run).report.written
    return report
