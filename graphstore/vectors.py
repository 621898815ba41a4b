"""Sentence embeddings of locutions and propositions in Neo4j, and kNN search over them.

Pure Cypher builders plus :class:`VectorStore`, which runs them on an injected driver. Neo4j 5.x
vector indexes cover one label each, so there is one index per embedded label
(:data:`VECTOR_INDEXES`), both with cosine similarity; a query over both labels asks each index
and merges by score. No label is added for the semantic layer: node counts per label (``argweb
stats``) stay what the corpora made them.

Each embedded node carries three properties declared in the ontology: ``embedding`` (float32
list, written with ``db.create.setNodeVectorProperty``), ``embedding_model`` (model name and
weight fingerprint) and ``embedding_key`` (sha1 of the embedded text). A node is embedded again
only when its model or its text changed, so a re-run writes nothing.

Scores are cosine similarities in [-1, 1]: the index reports ``(1 + cos) / 2`` and the builders
convert it back, so exact and approximate answers compare directly.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from neo4j import Driver

from graphstore.store import GraphStore
from ontology.errors import ApiError, InvalidQueryError, NotFoundError
from ontology.progress import SILENT, Reporter
from ontology.terms import Label, Prop, RelType
from ontology.views import SemanticHit

EMBEDDED_LABELS: tuple[Label, ...] = (Label.Proposition, Label.Locution)
"""Labels whose nodes get embeddings, propositions first (they carry the argument content)."""

VECTOR_INDEXES: dict[Label, str] = {
    Label.Proposition: "proposition_embedding",
    Label.Locution: "locution_embedding",
}
"""One Neo4j vector index per embedded label."""


def embedded_labels(names: Sequence[str | Label] | None) -> tuple[Label, ...]:
    """The embedded labels a caller named (case-insensitive, each once, in the order given); all when none.

    Raises:
        ApiError: A name that is not an embedded label.
    """
    if not names:
        return EMBEDDED_LABELS
    out = []
    for name in names:
        label = next((lab for lab in EMBEDDED_LABELS if lab.value.lower() == str(name).lower()), None)
        if label is None:
            raise ApiError(f"unknown label {name!r}; semantic search covers {', '.join(EMBEDDED_LABELS)}")
        out.append(label)
    return tuple(dict.fromkeys(out))


EMB, EMB_MODEL, EMB_KEY = Prop.EMBEDDING.value, Prop.EMBEDDING_MODEL.value, Prop.EMBEDDING_KEY.value

# How much deeper than k the approximate index is asked when a corpus filter follows it.
FILTER_OVERFETCH = 10
MAX_K = 1000


def _label(label: Label) -> str:
    if label not in VECTOR_INDEXES:
        # An invariant: callers pass EMBEDDED_LABELS (user label names are checked by the semantic service).
        raise ValueError(f"{label} has no vector index; embedded labels are {', '.join(EMBEDDED_LABELS)}")
    return f"`{Label(label).value}`"


def create_index(label: Label, dimensions: int) -> str:
    """Schema statement of the cosine vector index over ``embedding`` of ``label`` (idempotent)."""
    if not 1 <= dimensions <= 4096:
        # The encoder the user configured decides the dimensions: a client's mistake, not a bug.
        raise ApiError(f"vector dimensions must lie in 1..4096, not {dimensions}: choose another encoder")
    target = _label(label)
    return (
        f"CREATE VECTOR INDEX {VECTOR_INDEXES[label]} IF NOT EXISTS FOR (n:{target}) ON n.{EMB} "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dimensions)}, "
        "`vector.similarity_function`: 'cosine'}}"
    )


def index_state() -> str:
    """The argweb vector indexes with state, population and configured dimensions."""
    return (
        "SHOW VECTOR INDEXES YIELD name, state, populationPercent, options "
        "WHERE name IN $names "
        "RETURN name, state, populationPercent AS population, "
        "options.indexConfig.`vector.dimensions` AS dimensions ORDER BY name"
    )


def await_indexes() -> str:
    """Wait (up to ``$seconds``) until every index is online."""
    return "CALL db.awaitIndexes($seconds)"


def embedding_page(label: Label, corpus: bool = False) -> str:
    """One page of ``label`` nodes with a text, in id order after ``$after`` (``$limit`` rows).

    Rows: ``id``, ``text``, ``model`` and ``key`` (of the stored embedding, null when none).
    With ``corpus`` restricted to ``$corpus``.
    """
    where = " AND n.corpus = $corpus" if corpus else ""
    return (
        f"MATCH (n:{_label(label)}) WHERE n.id > $after{where} AND n.{Prop.TEXT.value} IS NOT NULL "
        "WITH n ORDER BY n.id LIMIT $limit "
        f"RETURN n.id AS id, n.{Prop.TEXT.value} AS text, n.{EMB_MODEL} AS model, n.{EMB_KEY} AS key"
    )


def write_embeddings(label: Label) -> str:
    """Store ``$rows`` = ``[{id, vec, key}]`` on ``label`` nodes, with ``$model``; returns ``written``.

    ``setNodeVectorProperty`` stores the vector as float32 (half the size of a Cypher float list)
    and checks its values.
    """
    return (
        f"UNWIND $rows AS row MATCH (n:`{Label.Node.value}` {{id: row.id}}) WHERE n:{_label(label)} "
        f"CALL db.create.setNodeVectorProperty(n, '{EMB}', row.vec) "
        f"SET n.{EMB_MODEL} = $model, n.{EMB_KEY} = row.key "
        "RETURN count(n) AS written"
    )


def embedding_counts() -> str:
    """Nodes per embedded label and corpus: with a text, with an embedding, and of which model."""
    labels = " OR ".join(f"n:{_label(label)}" for label in EMBEDDED_LABELS)
    return (
        f"MATCH (n:`{Label.Node.value}`) WHERE ({labels}) AND n.{Prop.TEXT.value} IS NOT NULL "
        f"RETURN n.corpus AS corpus, [x IN labels(n) WHERE x IN $labels][0] AS label, "
        f"n.{EMB_MODEL} AS model, count(*) AS n ORDER BY corpus, label, model"
    )


def embedded_per_corpus(label: Label) -> str:
    """Embedded ``label`` nodes per corpus: rows ``corpus``, ``n``."""
    return f"MATCH (n:{_label(label)}) WHERE n.{EMB_MODEL} IS NOT NULL RETURN n.corpus AS corpus, count(*) AS n"


def embedded_texts(label: Label) -> str:
    """Every embedded ``label`` node's ``id``, ``corpus`` and ``text``, in id order."""
    return (
        f"MATCH (n:{_label(label)}) WHERE n.{EMB_MODEL} IS NOT NULL "
        f"RETURN n.id AS id, n.corpus AS corpus, n.{Prop.TEXT.value} AS text ORDER BY id"
    )


def _hit_return(var: str, score: str) -> str:
    part_of = f"`{RelType.PART_OF.value}`"
    return (
        f"RETURN {var}.id AS id, [x IN labels({var}) WHERE x IN $labels][0] AS label, {var}.corpus AS corpus, "
        f"COLLECT {{ MATCH ({var})-[:{part_of}]->(d:`{Label.Discourse.value}`) RETURN d.id ORDER BY d.id }}[0] "
        f"AS discourse, {var}.{Prop.TEXT.value} AS text, {score} AS score"
    )


def knn(label: Label) -> str:
    """Approximate nearest ``label`` nodes of each query vector, from the vector index.

    Parameters: ``$queries`` = ``[{q, vec}]`` (``q`` the query's index), ``$fetch`` (neighbours
    asked from the index per query), ``$k`` (kept per query after filtering), ``$corpus`` (keep
    only this corpus, or null), ``$exclude`` (drop this corpus, or null), ``$exclude_ids`` (node
    ids never returned, e.g. the query nodes themselves), ``$labels``.
    Rows: ``q`` and the hit, best first within each query.
    """
    return (
        "UNWIND $queries AS query "
        f"CALL db.index.vector.queryNodes('{VECTOR_INDEXES[label]}', $fetch, query.vec) YIELD node, score "
        "WITH query, node, score WHERE ($corpus IS NULL OR node.corpus = $corpus) "
        "AND ($exclude IS NULL OR node.corpus <> $exclude) AND NOT node.id IN $exclude_ids "
        "WITH query, node, score ORDER BY query.q, score DESC, node.id "
        "WITH query, collect({node: node, score: score})[..$k] AS hits "
        "UNWIND hits AS hit WITH query, hit.node AS node, hit.score AS score "
        f"{_hit_return('node', '2 * score - 1')}, query.q AS q ORDER BY q, score DESC, id"
    )


def exact(label: Label) -> str:
    """Exact nearest ``label`` nodes of ``$corpus`` for each query vector (a scan of the corpus).

    Used when a corpus is too small a share of the graph for the filtered index answer to be
    complete. Same parameters and rows as :func:`knn` (``$fetch`` unused).
    """
    return (
        "UNWIND $queries AS query "
        "CALL (query) { "
        f"MATCH (n:{_label(label)}) WHERE n.corpus = $corpus AND n.{EMB} IS NOT NULL "
        "AND NOT n.id IN $exclude_ids "
        f"WITH n, vector.similarity.cosine(n.{EMB}, query.vec) AS score "
        "ORDER BY score DESC, n.id LIMIT $k RETURN n, score } "
        f"{_hit_return('n', '2 * score - 1')}, query.q AS q ORDER BY q, score DESC, id"
    )


def remove_embeddings(label: Label) -> str:
    """Remove the embedding properties from ``label`` nodes (of ``$corpus``, or all when null)."""
    return (
        f"MATCH (n:{_label(label)}) WHERE n.{EMB_MODEL} IS NOT NULL AND ($corpus IS NULL OR n.corpus = $corpus) "
        "CALL (n) { "
        f"REMOVE n.{EMB}, n.{EMB_MODEL}, n.{EMB_KEY} }} IN TRANSACTIONS OF 5000 ROWS"
    )


@dataclass
class LabelEmbeddings:
    """How many nodes of one label of one corpus have a text, how many are embedded, and by which model.

    Attributes:
        nodes: Nodes with a text.
        embedded: Of them, those with an embedding.
        models: Embedded nodes per embedding model tag.
    """

    nodes: int = 0
    embedded: int = 0
    models: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class EmbeddingStatus:
    """The vector indexes and the embeddings of the graph (``argweb embed --status``).

    Attributes:
        indexes: The argweb vector indexes that exist, by name (state, population, dimensions).
        corpora: Per corpus (``(none)``: nodes of no corpus) and label, the embedded nodes.
    """

    indexes: dict[str, dict[str, Any]]
    corpora: dict[str, dict[str, LabelEmbeddings]]

    def as_dict(self) -> dict[str, object]:
        """The JSON form."""
        return {
            "indexes": self.indexes,
            "corpora": {
                corpus: {label: asdict(counts) for label, counts in labels.items()}
                for corpus, labels in self.corpora.items()
            },
        }


@dataclass(frozen=True)
class PendingNode:
    """A node whose embedding is missing or stale: id and the text to embed."""

    id: str
    text: str


class Embedder(Protocol):
    """What embedding the graph asks of a text encoder (:class:`gnn.encoder.TextEncoder` is one)."""

    @property
    def dim(self) -> int:
        """Dimensions of a vector."""
        ...

    def cache_key(self) -> str:
        """Readable name and weight fingerprint: what ``embedding_model`` records."""
        ...

    def cached(self, texts: Sequence[str]) -> Mapping[str, Any]:
        """The vectors its on-disk cache holds for ``texts``, by text key."""
        ...

    def encode(self, texts: Sequence[str]) -> Any:
        """One vector (with ``tolist()``) per text."""
        ...


@dataclass
class EmbedReport:
    """What :meth:`VectorStore.embed` did, per label.

    Attributes:
        model: Model tag written to the nodes.
        pending: Nodes whose embedding was missing or stale.
        written: Nodes written.
        encode_seconds: Time spent encoding (cache reads included).
        write_seconds: Time spent writing the vectors (index updates included).
        index_seconds: Time waiting for the vector indexes to come online.
        uncached: Pending nodes left without a vector because the encoder cache had none for
            their text (only when asked to write from the cache alone).
    """

    model: str
    pending: dict[str, int] = field(default_factory=dict)
    written: dict[str, int] = field(default_factory=dict)
    encode_seconds: float = 0.0
    write_seconds: float = 0.0
    index_seconds: float = 0.0
    uncached: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready summary."""
        return {
            "model": self.model,
            "pending": self.pending,
            "written": self.written,
            "uncached": self.uncached,
            "encode_seconds": round(self.encode_seconds, 2),
            "write_seconds": round(self.write_seconds, 2),
            "index_seconds": round(self.index_seconds, 2),
        }


class VectorStore:
    """Embeddings and vector indexes of the graph, through an injected Neo4j driver.

    Args:
        driver: An open ``neo4j`` driver.
        database: Database name.
        batch_size: Nodes per write transaction (each row carries one vector).
    """

    def __init__(self, driver: Driver, database: str = "neo4j", batch_size: int = 2000) -> None:
        self.store = GraphStore(driver, database, batch_size)
        self.batch_size = batch_size

    # -- schema ----------------------------------------------------------------------------

    def indexes(self) -> dict[str, dict[str, Any]]:
        """The argweb vector indexes that exist, by name: state, population (%) and dimensions."""
        rows = self.store.read(index_state(), names=list(VECTOR_INDEXES.values()))
        return {r["name"]: r for r in rows}

    def ensure_indexes(self, dimensions: int, wait_seconds: int = 600) -> None:
        """Create the vector indexes (idempotent) and wait until they are online.

        Raises:
            ApiError: An index exists with other dimensions (another embedding model): remove the
                embeddings first (``argweb embed --remove``).
        """
        existing = self.indexes()
        for label, name in VECTOR_INDEXES.items():
            have = existing.get(name)
            if have is not None and have.get("dimensions") not in (None, dimensions):
                raise ApiError(
                    f"vector index {name} has {have['dimensions']} dimensions, the encoder {dimensions}; "
                    "remove the embeddings first (argweb embed --remove)"
                )
            if have is None:
                self.store.run(create_index(label, dimensions))
        self.store.run(await_indexes(), seconds=wait_seconds)

    def drop_indexes(self) -> None:
        """Drop the vector indexes (idempotent)."""
        for name in VECTOR_INDEXES.values():
            self.store.run(f"DROP INDEX {name} IF EXISTS")

    # -- writes ----------------------------------------------------------------------------

    def pending(
        self, label: Label, model: str, keys: Any, corpus: str | None = None, page: int = 20_000
    ) -> Iterator[list[PendingNode]]:
        """Pages of ``label`` nodes whose embedding is missing, of another model, or of another text.

        Args:
            label: An embedded label.
            model: The current model's name and fingerprint.
            keys: ``text -> key`` function (sha1 of the text, as the encoder's cache uses).
            corpus: Only this corpus.
            page: Nodes read per round trip.
        """
        after = ""
        query = embedding_page(label, corpus is not None)
        while True:
            rows = self.store.read(query, after=after, limit=page, corpus=corpus)
            if not rows:
                return
            after = rows[-1]["id"]
            out = [
                PendingNode(r["id"], r["text"])
                for r in rows
                if r["text"] and (r["model"] != model or r["key"] != keys(r["text"]))
            ]
            if out:
                yield out

    def write(self, label: Label, model: str, rows: Sequence[dict[str, Any]]) -> int:
        """Store ``rows`` = ``[{id, vec, key}]`` in batches; returns the number of nodes written."""
        query = write_embeddings(label)
        written = 0
        for s in range(0, len(rows), self.batch_size):
            result = self.store.run(query, rows=list(rows[s : s + self.batch_size]), model=model)
            written += int(result[0]["written"]) if result else 0
        return written

    def embed(
        self,
        encoder: Embedder,
        keys: Callable[[str], str],
        corpus: str | None = None,
        reporter: Reporter = SILENT,
        *,
        cached_only: bool = False,
    ) -> EmbedReport:
        """Embed every locution and proposition with a text whose embedding is missing or stale.

        Idempotent: a node already embedded from the same text by the same model is not written
        again. The vector indexes are created first (with the encoder's dimensions) and awaited last.

        Args:
            encoder: Encodes the texts (its ``cache_key()`` is the model tag written).
            keys: ``text -> key`` function (the encoder cache's key of a text).
            corpus: Only this corpus.
            reporter: Log lines and progress.
            cached_only: Write only the vectors the encoder cache holds and encode nothing; the
                nodes left are counted in ``uncached``.

        Raises:
            ApiError: The vector indexes exist with other dimensions.
        """
        tag = encoder.cache_key()
        report = EmbedReport(tag)
        self.ensure_indexes(encoder.dim)
        for label in EMBEDDED_LABELS:
            report.pending[label.value] = 0
            report.written[label.value] = 0
            report.uncached[label.value] = 0
            for page in self.pending(label, tag, keys, corpus):
                report.pending[label.value] += len(page)
                with reporter.progress(f"embedding {label.value.lower()}s", len(page)) as advance:
                    for s in range(0, len(page), 4096):
                        chunk = page[s : s + 4096]
                        t0 = time.perf_counter()
                        if cached_only:
                            found = encoder.cached([n.text for n in chunk])
                            keep = [n for n in chunk if keys(n.text) in found]
                            report.uncached[label.value] += len(chunk) - len(keep)
                            pairs = [(n, found[keys(n.text)]) for n in keep]
                        else:
                            pairs = list(zip(chunk, encoder.encode([n.text for n in chunk]), strict=True))
                        t1 = time.perf_counter()
                        rows = [{"id": n.id, "vec": v.tolist(), "key": keys(n.text)} for n, v in pairs]
                        report.written[label.value] += self.write(label, tag, rows)
                        report.encode_seconds += t1 - t0
                        report.write_seconds += time.perf_counter() - t1
                        advance(len(chunk))
        t0 = time.perf_counter()
        self.ensure_indexes(encoder.dim)
        report.index_seconds = time.perf_counter() - t0
        left = sum(report.uncached.values())
        reporter.log(
            f"embedded {sum(report.written.values())} of {sum(report.pending.values())} pending node(s) with {tag}"
            + (f"; {left} without a cached vector (`argweb embed` encodes them)" if left else "")
        )
        return report

    def remove(self, corpus: str | None = None) -> None:
        """Remove embeddings (of one corpus, or all) and, for all, the vector indexes."""
        for label in EMBEDDED_LABELS:
            self.store.run_auto(remove_embeddings(label), corpus=corpus)
        if corpus is None:
            self.drop_indexes()

    def counts(self) -> list[dict[str, Any]]:
        """Rows ``corpus, label, model, n``: embedded-label nodes with a text, by embedding model (null = none)."""
        return self.store.read(embedding_counts(), labels=[label.value for label in EMBEDDED_LABELS])

    def require_indexes(self, labels: Sequence[Label]) -> None:
        """Refuse a search over ``labels`` while one of their vector indexes is missing.

        Raises:
            NotFoundError: A vector index is missing (nothing embedded yet).
        """
        present = self.indexes()
        missing = [VECTOR_INDEXES[label] for label in labels if VECTOR_INDEXES[label] not in present]
        if missing:
            raise NotFoundError(
                f"no vector index {', '.join(missing)} in the graph: "
                "run `argweb run` (it embeds what its predictions encoded) or `argweb embed` first"
            )

    def neighbours(
        self,
        vectors: Sequence[Sequence[float]],
        *,
        k: int,
        corpus: str | None = None,
        exclude_corpus: str | None = None,
        labels: Sequence[Label] = EMBEDDED_LABELS,
    ) -> list[list[SemanticHit]]:
        """The ``k`` nearest embedded nodes of each vector over ``labels``, best first.

        A corpus filter is applied to a deeper index answer (``FILTER_OVERFETCH`` x ``k``); a query
        that still finds fewer than ``k`` nodes of the corpus is answered by an exact scan of the
        corpus, so ``corpus`` never silently returns too few hits.

        Raises:
            NotFoundError: A vector index is missing (nothing embedded yet).
        """
        merged: list[list[SemanticHit]] = [[] for _ in vectors]
        for label in labels:
            try:
                found = self.nearest(label, vectors, k, corpus=corpus, exclude_corpus=exclude_corpus)
            except InvalidQueryError:
                self.require_indexes([label])
                raise
            short = [i for i, hits in enumerate(found) if corpus is not None and len(hits) < k]
            if short:
                exact = self.nearest(label, [vectors[i] for i in short], k, corpus=corpus, exact_scan=True)
                for i, hits in zip(short, exact, strict=True):
                    found[i] = hits
            for i, hits in enumerate(found):
                merged[i].extend(hits)
        return [sorted(hits, key=lambda h: (-h.score, h.id))[:k] for hits in merged]

    def status(self) -> EmbeddingStatus:
        """The vector indexes and, per corpus and label, how many nodes are embedded and by which model."""
        corpora: dict[str, dict[str, LabelEmbeddings]] = {}
        for r in self.counts():
            entry = corpora.setdefault(r["corpus"] or "(none)", {}).setdefault(r["label"], LabelEmbeddings())
            entry.nodes += int(r["n"])
            if r["model"] is not None:
                entry.embedded += int(r["n"])
                entry.models[r["model"]] = int(r["n"])
        return EmbeddingStatus(self.indexes(), corpora)

    # -- reads -----------------------------------------------------------------------------

    def corpus_sizes(self, label: Label) -> dict[str, int]:
        """Embedded nodes of ``label`` per corpus."""
        return {r["corpus"]: int(r["n"]) for r in self.store.read(embedded_per_corpus(label))}

    def embedded(self, label: Label) -> list[dict[str, Any]]:
        """Rows ``id, corpus, text`` of every embedded ``label`` node, in id order."""
        return self.store.read(embedded_texts(label))

    def nearest(
        self,
        label: Label,
        vectors: Sequence[Sequence[float]],
        k: int,
        *,
        corpus: str | None = None,
        exclude_corpus: str | None = None,
        exclude_ids: Sequence[str] = (),
        exact_scan: bool = False,
    ) -> list[list[SemanticHit]]:
        """The ``k`` nearest ``label`` nodes of each vector, best first.

        Args:
            label: An embedded label.
            vectors: Query vectors (the index's dimensions).
            k: Neighbours per query (1..1000).
            corpus: Keep only this corpus.
            exclude_corpus: Drop this corpus.
            exclude_ids: Node ids never returned.
            exact_scan: With ``corpus``: scan the corpus instead of filtering the index answer
                (exact, for corpora that are a small share of the label).

        Raises:
            ApiError: ``k`` outside 1..1000, or ``exact_scan`` without ``corpus``.
        """
        if not 1 <= k <= MAX_K:
            raise ApiError(f"k must lie in 1..{MAX_K}, not {k}")
        if exact_scan and corpus is None:
            raise ApiError("an exact scan needs a corpus")
        if not vectors:
            return []
        filtered = corpus is not None or exclude_corpus is not None or bool(exclude_ids)
        fetch = min(k * FILTER_OVERFETCH + len(exclude_ids), 10 * MAX_K) if filtered else k
        queries = [{"q": i, "vec": [float(x) for x in v]} for i, v in enumerate(vectors)]
        rows = self.store.read(
            exact(label) if exact_scan else knn(label),
            queries=queries,
            fetch=fetch,
            k=k,
            corpus=corpus,
            exclude=exclude_corpus,
            exclude_ids=list(exclude_ids),
            labels=[lab.value for lab in EMBEDDED_LABELS],
        )
        out: list[list[SemanticHit]] = [[] for _ in vectors]
        for r in rows:
            out[int(r["q"])].append(
                SemanticHit(r["id"], r["label"], r["corpus"], r["discourse"], r["text"], float(r["score"]))
            )
        return out
