"""Cross-corpus links, the model side: which neighbour pairs are candidates and how each is labelled.

Candidates are pairs (query -> neighbour) of propositions of different corpora, found in the
vector index by the caller; each unordered pair counts once. A pair is labelled:

* **rephrase** when the two embeddings are nearly the same direction (cosine >= ``rephrase_cosine``),
  scored by that cosine: the QT30 relation model, asked out of dialogue context, gives even close
  paraphrases a rephrase (MA) probability under 1%, so the encoder decides paraphrase;
* otherwise by the relation classifier the caller passes (support, attack or none, and its
  probability).

Pairs labelled ``none`` or scored under ``threshold`` are dropped. Storing the rest as a prediction
run is the caller's part.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gnn.task import TextPair
from ontology.errors import ApiError
from ontology.labels import RelationLabel
from ontology.records import PredictedRelation, prediction_score
from ontology.views import SemanticHit

MODEL = "cross-corpus-links"
REPHRASE_BY = "encoder-cosine"
CLASSIFIER_BY = "relation-classifier"


Candidate = tuple[dict[str, Any], SemanticHit]
"""A query proposition (id, corpus, text) and one of its neighbours of another corpus."""
Classifier = Callable[[list[TextPair]], list[tuple[RelationLabel, float]]]
"""Labels and probabilities of out-of-context text pairs, one per pair, in order."""
Nearest = Callable[[list[list[float]], str], list[list[SemanticHit]]]
"""The ``k`` nearest propositions of other corpora than the one named, per vector (the vector index)."""
BATCH = 256
"""Propositions encoded and looked up at a time."""


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

    def relation(self) -> PredictedRelation:
        """The link as a predicted relation to store (a rephrase by cosine says so in its scheme label)."""
        scheme = "cosine" if self.by == REPHRASE_BY else None
        return PredictedRelation(
            source=self.source, target=self.target, label=self.label, score=self.score, scheme_label=scheme
        )

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
    """What a cross-corpus link job found (and wrote)."""

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

    def keep(self, links: list[Link], sample_size: int) -> None:
        """Take ``links`` (best first) with their counts per label and per corpus pair and a seeded sample."""
        self.links = links
        self.counts = dict(sorted(Counter(x.label.value for x in links).items()))
        self.pairs_by_corpora = dict(
            sorted(Counter("->".join((x.source_corpus, x.target_corpus)) for x in links).items())
        )
        self.sample = random.Random(1).sample(links, min(sample_size, len(links))) if links else []


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


def sample_propositions(rows: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    """``rows``, or a seeded sample of ``limit`` of them spread over every corpus (not the first ids of one)."""
    if limit is not None and limit < len(rows):
        return sorted(random.Random(0).sample(rows, limit), key=lambda r: r["id"])
    return rows


def add_candidates(
    found: list[Candidate],
    seen: set[tuple[str, str]],
    queries: Sequence[dict[str, Any]],
    hits: Sequence[Sequence[SemanticHit]],
) -> None:
    """Append each query's neighbours to ``found``, an unordered pair once (``seen`` holds the pairs so far)."""
    for query, near in zip(queries, hits, strict=True):
        for hit in near:
            a, b = sorted((query["id"], hit.id))
            if (a, b) not in seen:
                seen.add((a, b))
                found.append((query, hit))


def find_candidates(
    props: Sequence[dict[str, Any]],
    encode: Callable[[list[str]], Any],
    nearest: Nearest,
    advance: Callable[[int], None] | None = None,
) -> list[Candidate]:
    """Each proposition's nearest propositions of the other corpora, an unordered pair once.

    Args:
        props: Propositions (``id``, ``corpus``, ``text``).
        encode: Texts to vectors (rows of an array).
        nearest: The vector index's lookup, asked once per corpus of each batch.
        advance: Told how many propositions each batch looked up.
    """
    seen: set[tuple[str, str]] = set()
    cands: list[Candidate] = []
    for s in range(0, len(props), BATCH):
        chunk = props[s : s + BATCH]
        vecs = encode([p["text"] for p in chunk])
        by_corpus: dict[str, list[int]] = {}
        for i, p in enumerate(chunk):
            by_corpus.setdefault(p["corpus"], []).append(i)
        for corpus, idx in by_corpus.items():
            add_candidates(cands, seen, [chunk[i] for i in idx], nearest([vecs[i].tolist() for i in idx], corpus))
        if advance is not None:
            advance(len(chunk))
    return cands


def label_candidates(candidates: list[Candidate], classify: Classifier, options: LinkOptions) -> list[Link]:
    """The kept links of ``candidates``, best first: rephrases by cosine, the rest by ``classify``.

    Args:
        candidates: Query propositions and their neighbours.
        classify: The relation classifier, asked only for pairs under the rephrase cosine.
        options: Rephrase cosine and threshold.
    """
    asked = [i for i, (_, hit) in enumerate(candidates) if hit.score < options.rephrase_cosine]
    pairs = [TextPair(candidates[i][0]["text"], candidates[i][1].text or "") for i in asked]
    by_index = dict(zip(asked, classify(pairs), strict=True))
    links: list[Link] = []
    for i, (src, hit) in enumerate(candidates):
        if i in by_index:
            label, score = by_index[i]
            by = CLASSIFIER_BY
        else:
            label, score, by = RelationLabel.REPHRASE, min(max(hit.score, 0.0), 1.0), REPHRASE_BY
        if label is RelationLabel.NONE or score < options.threshold:
            continue
        ends = (src["id"], src["corpus"], src["text"], hit.id, hit.corpus or "", hit.text or "")
        links.append(Link(*ends, label, prediction_score(score), hit.score, by))
    links.sort(key=lambda x: (-x.score, x.source, x.target))
    return links
