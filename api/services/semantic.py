"""The semantic layer: embeddings of locutions and propositions in Neo4j, search by meaning.

Shared by the CLI (``argweb embed``, ``argweb search --semantic``), the HTTP API
(``GET /search?semantic=true``), the main job and the cross-corpus linker
(:mod:`api.services.links`). Texts are encoded with :class:`gnn.encoder.TextEncoder` (the offline
all-MiniLM-L6-v2 by default); the vectors live on the nodes and in Neo4j vector indexes
(:mod:`graphstore.vectors`), never in a side file.

The encoder is loaded once per process and kept: a query embedding costs a forward pass of a few
milliseconds, not a model load. Graph embedding reads the on-disk embedding cache of
``settings.embeddings_dir``; query embeddings skip it (one query text never pays for reading
tens of thousands of cached vectors).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from api.services.graph import Graph
from api.settings import Settings
from graphstore.vectors import EMBEDDED_LABELS, EmbeddingStatus, EmbedReport, VectorStore, embedded_labels
from ontology.errors import ApiError
from ontology.progress import SILENT, Reporter
from ontology.terms import Label
from ontology.views import SemanticHit

if TYPE_CHECKING:
    from gnn.encoder import TextEncoder

MAX_K = 100
_ENCODERS: dict[tuple[str, bool], TextEncoder] = {}
_LOCK = threading.Lock()


def encoder(settings: Settings, *, cached: bool = True) -> TextEncoder:
    """The process-wide text encoder (loaded on first use, then kept).

    Args:
        settings: Where the embedding cache lives.
        cached: Use the on-disk cache (graph embedding) or not (query texts).
    """
    from gnn.encoder import TextEncoder

    key = (str(settings.embeddings_dir), cached)
    with _LOCK:
        enc = _ENCODERS.get(key)
        if enc is None:
            enc = TextEncoder(cache_dir=settings.embeddings_dir if cached else None, batch_size=128)
            _ENCODERS[key] = enc
        return enc


def model_tag(enc: TextEncoder) -> str:
    """What ``embedding_model`` records: readable name and weight fingerprint."""
    return enc.cache_key()


def _vectors(graph: Graph) -> VectorStore:
    return VectorStore(graph.driver(), graph.settings.neo4j_database)


def embed_graph(
    graph: Graph,
    settings: Settings,
    corpus: str | None = None,
    reporter: Reporter = SILENT,
    *,
    cached_only: bool = False,
) -> EmbedReport:
    """Embed the graph's texts whose embedding is missing or stale with the configured encoder.

    The work (idempotent, indexes first) is :meth:`graphstore.vectors.VectorStore.embed`.

    Args:
        graph: The graph.
        settings: Embedding cache and batch sizes.
        corpus: Only this corpus.
        reporter: Log lines and progress.
        cached_only: Write only the vectors the encoder cache holds (what the prediction models
            encoded with the same encoder) and encode nothing: the main job's bounded step. The
            nodes left are counted in ``uncached``; a later full embedding writes them.

    Raises:
        ApiError: The vector indexes exist with other dimensions.
        DatabaseUnavailableError: Neo4j is away.
    """
    from gnn.encoder import text_key

    return _vectors(graph).embed(encoder(settings), text_key, corpus, reporter, cached_only=cached_only)


def remove_embeddings(graph: Graph, corpus: str | None = None) -> None:
    """Remove embeddings (of one corpus; for the whole graph also the vector indexes)."""
    _vectors(graph).remove(corpus)


def embedding_status(graph: Graph) -> EmbeddingStatus:
    """Vector indexes and, per corpus and label, how many nodes are embedded and by which model."""
    return _vectors(graph).status()


def _query_vectors(settings: Settings, texts: Sequence[str]) -> list[list[float]]:
    from gnn.query_embedding import check_queries, embed_queries

    checked = check_queries(texts)  # before the encoder loads (seconds)
    return embed_queries(encoder(settings, cached=False), checked)


def _require_index(store: VectorStore, labels: Sequence[Label]) -> None:
    """:meth:`VectorStore.require_indexes` under the name the cross-corpus linker imports."""
    store.require_indexes(labels)


def neighbours(
    graph: Graph,
    vectors: Sequence[Sequence[float]],
    *,
    k: int,
    corpus: str | None = None,
    exclude_corpus: str | None = None,
    labels: Sequence[Label] = EMBEDDED_LABELS,
) -> list[list[SemanticHit]]:
    """The ``k`` nearest embedded nodes of each vector over ``labels``, best first
    (:meth:`graphstore.vectors.VectorStore.neighbours`).

    Raises:
        NotFoundError: A vector index is missing (nothing embedded yet).
    """
    return _vectors(graph).neighbours(vectors, k=k, corpus=corpus, exclude_corpus=exclude_corpus, labels=labels)


def search(
    graph: Graph,
    settings: Settings,
    text: str,
    *,
    k: int = 10,
    corpus: str | None = None,
    labels: Sequence[str | Label] | None = None,
) -> list[SemanticHit]:
    """Locutions and propositions nearest in meaning to ``text``, best first.

    Args:
        graph: The graph.
        settings: Encoder settings.
        text: The query (up to :data:`gnn.query_embedding.MAX_QUERY_CHARS` characters).
        k: Number of hits (1..100).
        corpus: Only this corpus.
        labels: ``Proposition`` and/or ``Locution`` (default both).

    Raises:
        ApiError: Empty or oversized query, ``k`` out of range, unknown label.
        NotFoundError: Nothing embedded yet (no vector index).
    """
    return _lookup(graph, settings, [text], k, labels, corpus=corpus)[0]


def nearest(
    graph: Graph,
    settings: Settings,
    texts: Sequence[str],
    *,
    k: int = 3,
    exclude_corpus: str | None = None,
    labels: Sequence[str | Label] | None = None,
) -> list[list[SemanticHit]]:
    """For each text, the ``k`` nearest stored locutions/propositions (of other corpora than ``exclude_corpus``).

    The batch form of :func:`search` for live mining: all texts are encoded in one pass and
    looked up in one query per vector index.

    Raises:
        ApiError: An empty or oversized text, ``k`` out of range, unknown label.
        NotFoundError: Nothing embedded yet (no vector index).
    """
    return _lookup(graph, settings, texts, k, labels, exclude_corpus=exclude_corpus)


def _lookup(
    graph: Graph,
    settings: Settings,
    texts: Sequence[str],
    k: int,
    labels: Sequence[str | Label] | None,
    corpus: str | None = None,
    exclude_corpus: str | None = None,
) -> list[list[SemanticHit]]:
    """:func:`neighbours` of the embedded ``texts``, arguments checked first."""
    if not 1 <= k <= MAX_K:
        raise ApiError(f"k must lie in 1..{MAX_K}, not {k}")
    chosen = embedded_labels(labels)
    if not texts:
        return []
    # Before the encoder loads (seconds): an unembedded graph is answered at once.
    _vectors(graph).require_indexes(chosen)
    vectors = _query_vectors(settings, texts)
    return neighbours(graph, vectors, k=k, corpus=corpus, exclude_corpus=exclude_corpus, labels=chosen)
