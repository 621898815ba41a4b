"""Browsing the graph: corpora, dialogues and documents, nodes, neighbourhoods, relations, search.

The reads over the Cypher of :mod:`graphstore.browse`, shared by the HTTP routes and any other
reader. Every method reads in READ access mode through :class:`~graphstore.readonly.ReadRunner`
and returns the read model of :mod:`ontology.views`.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Generic, TypeVar

from neo4j import Driver

from graphstore import browse, cypher
from graphstore.judgements import judgements as stored_judgements
from graphstore.readonly import ReadOnlyStore, ReadRunner
from graphstore.store import require_whole
from ontology.errors import ApiError, NotFoundError
from ontology.terms import LABEL_ANCESTORS, Label, Prop, RelType, Sense
from ontology.views import DiscourseView, EdgeView, JudgementView, NodeView, RelationView, UnitView

MAX_PAGE = 500
MAX_SEARCH_OFFSET = 10_000
# Properties that are bookkeeping (of the ingest; of the semantic layer: a 384-float vector), not data.
_HIDDEN = frozenset({"batch", Prop.EMBEDDING.value, Prop.EMBEDDING_MODEL.value, Prop.EMBEDDING_KEY.value})
RELATION_KINDS: tuple[str, ...] = (
    *sorted(label.value for label, ancestors in LABEL_ANCESTORS.items() if Label.Relation in ancestors),
    Label.Relation.value,
)
SENSES: tuple[str, ...] = tuple(sorted(s.value for s in Sense))
_LUCENE_OPERATORS = frozenset({"AND", "OR", "NOT", "TO"})
_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')


_T = TypeVar("_T")
_C = TypeVar("_C", str, int)


@dataclass(frozen=True)
class Page(Generic[_T]):
    """One page of a list and the cursor of the next one (None on the last page)."""

    items: list[_T]
    next_cursor: str | None = None


@dataclass(frozen=True)
class CorpusInfo:
    """A corpus marker with its counts."""

    id: str
    name: str | None
    status: str | None
    source: str | None
    labels: dict[str, int] = field(default_factory=dict)
    relations: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Neighbourhood:
    """Nodes and relationships around a node."""

    center: str
    nodes: list[NodeView]
    edges: list[EdgeView]
    truncated: bool


@dataclass(frozen=True)
class CorpusCounts:
    """What a corpus dashboard counts in the graph.

    Attributes:
        relations: Origin (``gold``, ``predicted``) -> relation kind (``Kind:sense`` for a discourse
            sense) -> relations.
        speakers: The speakers with the most utterances, most first, as (speaker, utterances).
        topics: Topic -> relation kind -> relations.
    """

    relations: dict[str, Counter[str]]
    speakers: list[tuple[str, int]]
    topics: dict[str, Counter[str]]


@dataclass(frozen=True)
class SearchHit:
    """A full-text hit."""

    node: NodeView
    score: float
    discourses: list[str]


@dataclass(frozen=True)
class RelationFilter:
    """Which relations a listing keeps; every field left None keeps all.

    Raises:
        ApiError: Unknown relation kind, origin or sense, or a score outside [0, 1] (on construction).
    """

    kind: str | None = None
    origin: str | None = None
    model: str | None = None
    min_score: float | None = None
    corpus: str | None = None
    sense: str | None = None

    def __post_init__(self) -> None:
        if self.kind is not None and self.kind not in RELATION_KINDS:
            raise ApiError(f"unknown relation type {self.kind!r}; expected one of {', '.join(RELATION_KINDS)}")
        if self.origin not in (None, "gold", "predicted"):
            raise ApiError(f"origin must be gold or predicted, not {self.origin!r}")
        if self.sense is not None and self.sense not in SENSES:
            raise ApiError(f"unknown discourse sense {self.sense!r}; expected one of {', '.join(SENSES)}")
        if self.min_score is not None and not 0.0 <= self.min_score <= 1.0:
            raise ApiError(f"min_score must lie in [0, 1], not {self.min_score}")

    @property
    def label(self) -> Label:
        """The relation class to match (``Relation``, all of them, without a kind)."""
        return Label(self.kind) if self.kind else Label.Relation

    def query(self) -> str:
        """The Cypher of :func:`graphstore.browse.relations` with this filter's tests only."""
        return browse.relations(
            self.label,
            corpus=self.corpus is not None,
            origin=self.origin,
            model=self.model is not None,
            min_score=self.min_score is not None,
            sense=self.sense is not None,
        )

    def params(self) -> dict[str, Any]:
        """The query parameters of :func:`graphstore.browse.relations` (all but the label)."""
        return {name: value for name, value in asdict(self).items() if name != "kind"}


@dataclass(frozen=True)
class DiscourseFilter:
    """Which dialogues/documents a listing keeps; every field left None keeps all.

    Attributes:
        kind: ``Dialogue`` or ``Document`` (None: both).
        corpus: Corpus id.
        speaker: Speaker id, name or AIF person id (dialogues only: documents have none).
        q: Part of the id or of a unit's text.
    """

    kind: Label | None = None
    corpus: str | None = None
    speaker: str | None = None
    q: str | None = None


def encode_cursor(value: str | int) -> str:
    """An opaque cursor for ``value`` (the last id of a page, or an offset)."""
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, kind: type[_C]) -> _C | None:
    """The value of a cursor made by :func:`encode_cursor`.

    Raises:
        ApiError: The cursor was not made here.
    """
    if cursor is None:
        return None
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, UnicodeDecodeError) as e:
        raise ApiError("invalid cursor: pass the next_cursor of the previous page unchanged") from e
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ApiError("invalid cursor: pass the next_cursor of the previous page unchanged")
    return value


def node_view(row: dict[str, Any]) -> NodeView:
    """A node view from a ``{id, labels, props}`` row."""
    props = {k: v for k, v in (row.get("props") or {}).items() if k not in _HIDDEN}
    return NodeView(id=str(row["id"]), labels=tuple(sorted(row.get("labels") or ())), props=props)


def relation_view(row: dict[str, Any]) -> RelationView:
    """A relation view from a ``{id, labels, props, sources, targets}`` row."""
    return RelationView(
        node=node_view(row), sources=tuple(sorted(row["sources"] or ())), targets=tuple(sorted(row["targets"] or ()))
    )


def _page_size(limit: int) -> int:
    if not 1 <= limit <= MAX_PAGE:
        raise ApiError(f"limit must be between 1 and {MAX_PAGE}, not {limit}")
    return limit


_QUOTED = re.compile(r'"([^"]*)"|(\S+)')


def _literal(word: str) -> str:
    return _LUCENE_SPECIAL.sub(r"\\\1", word)


def lucene_terms(text: str) -> str:
    """``text`` as literal Lucene terms, so any input is a valid query.

    Special characters are escaped, the operator words ``AND``, ``OR``, ``NOT`` and ``TO`` become
    plain words (the analyser lower-cases terms anyway), a word ending in ``*`` stays a prefix
    (``vacc*``, matched without regard to case; a lone ``*`` is dropped, as Lucene cannot start a
    term with a wildcard), and words in double quotes stay a phrase (``"the cost of living"``:
    those words in that order). A quote without its partner is a literal character.
    """
    words = []
    for match in _QUOTED.finditer(text):
        phrase, word = match.group(1), match.group(2)
        if phrase is not None:
            inner = " ".join(_literal(w) for w in phrase.split())
            if inner:
                words.append(f'"{inner}"')
            continue
        stem = word.rstrip("*")
        if not stem:
            continue
        prefix = stem != word
        # Prefix terms skip the analyser, so they are lower-cased here as the indexed terms are.
        if prefix or stem in _LUCENE_OPERATORS:
            stem = stem.lower()
        words.append(_literal(stem) + ("*" if prefix else ""))
    return " ".join(words)


class BrowseService:
    """Read-only access to the graph for the API.

    Every method that serves the content of a corpus checks, after reading it, that none of the
    corpora it read is half-loaded (:func:`graphstore.store.require_whole`, the rule exports follow
    too): a corpus marked ``loading`` is refused (409), never served in part.

    Args:
        driver: An open Neo4j driver.
        database: Database name.
        timeout: Seconds any one read may take.
        undo: Called with the half-loaded corpora whose ingest was interrupted (its process is gone)
            that a read met: the API undoes them in the background, so that they are served again
            without waiting for a restart or the next ingest.
    """

    def __init__(
        self,
        driver: Driver,
        database: str = "neo4j",
        timeout: float = 10.0,
        undo: Callable[[list[str]], Any] | None = None,
    ) -> None:
        self.reader = ReadRunner(driver, database, timeout)
        self.undo = undo

    def _rows(self, query: str, **params: Any) -> list[dict[str, Any]]:
        return self.reader.rows(query, "read", **params)

    def _whole(self, corpora: Iterable[str | None]) -> None:
        """Refuse the read when a corpus it served is half-loaded (checked after the read: a load that
        started meanwhile is seen too).

        Raises:
            CorpusIncompleteError: Naming the corpus and what to do.
        """
        touched = {c for c in corpora if c}
        if touched:
            markers = self._rows(cypher.incomplete_corpora(), corpus=None)
            require_whole(markers, touched, "refusing to serve it", self.undo)

    def ping(self) -> None:
        """Raise when Neo4j cannot answer."""
        self._rows(cypher.ping())

    # -- corpora ---------------------------------------------------------------------------------

    def corpora(self) -> list[CorpusInfo]:
        """Every corpus marker."""
        return [
            CorpusInfo(id=r["id"], name=r["name"], status=r["status"], source=r["source"])
            for r in self._rows(cypher.corpora())
        ]

    def require_corpus(self, name: str) -> None:
        """Raise unless ``name`` is a corpus in the graph (the one 404 rule of every listing).

        Raises:
            NotFoundError: No such corpus.
        """
        rows = self._rows(cypher.corpus_exists(), corpus=name)
        if not rows or not rows[0]["found"]:
            raise NotFoundError(f"no corpus {name!r} in the graph")

    def corpus(self, name: str) -> CorpusInfo:
        """One corpus with node counts per label and relation counts per kind (and sense).

        Raises:
            NotFoundError: No such corpus.
        """
        found = [c for c in self.corpora() if c.id == name]
        if not found:
            raise NotFoundError(f"no corpus {name!r} in the graph")
        labels = {r["label"]: r["n"] for r in self._rows(browse.corpus_summary(), corpus=name)}
        relations: dict[str, int] = {}
        for r in self._rows(browse.corpus_relations(), corpus=name):
            kind = NodeView("", tuple(r["labels"])).kind
            key = f"{kind}:{r['sense']}" if r["sense"] else kind
            if r["origin"] != "gold":
                key += f" ({r['origin']})"
            relations[key] = relations.get(key, 0) + r["n"]
        c = found[0]
        self._whole([name])
        return CorpusInfo(c.id, c.name, c.status, c.source, labels, dict(sorted(relations.items())))

    def corpus_counts(self, corpus: str, speakers: int = 25) -> CorpusCounts:
        """Relations per origin and kind, the ``speakers`` busiest speakers and relations per topic of ``corpus``."""
        relations: dict[str, Counter[str]] = defaultdict(Counter)
        for r in self._rows(browse.corpus_relations(), corpus=corpus):
            kind = NodeView("", tuple(r["labels"])).kind
            relations[r["origin"]][f"{kind}:{r['sense']}" if r["sense"] else kind] += r["n"]
        busiest = [
            (str(r["speaker"]), int(r["n"])) for r in self._rows(browse.speaker_units(), corpus=corpus, limit=speakers)
        ]
        topics: dict[str, Counter[str]] = defaultdict(Counter)
        for r in self._rows(browse.topic_relations(), corpus=corpus):
            topics[str(r["topic"])][NodeView("", tuple(r["labels"])).kind] += r["n"]
        return CorpusCounts(dict(relations), busiest, dict(topics))

    # -- dialogues and documents ---------------------------------------------------------------------

    def discourses(
        self, filters: DiscourseFilter | None = None, cursor: str | None = None, limit: int = 50
    ) -> Page[tuple[NodeView, int]]:
        """A page of dialogues/documents as ``(NodeView, unit count)`` pairs."""
        filters = filters or DiscourseFilter()
        size = _page_size(limit)
        after = decode_cursor(cursor, str) or ""
        if filters.corpus:
            self.require_corpus(filters.corpus)
        given = {"corpus": filters.corpus, "speaker": filters.speaker, "q": filters.q}
        params = {"after": after, "limit": size + 1} | {k: v for k, v in given.items() if v}
        query = browse.discourses(filters.kind, bool(filters.speaker), bool(filters.q), bool(filters.corpus))
        rows = self._rows(query, **params)
        items = [(node_view(r), int(r["units"])) for r in rows[:size]]
        self._whole([filters.corpus, *(node.corpus for node, _ in items)])
        return Page(items, encode_cursor(items[-1][0].id) if len(rows) > size else None)

    def discourse(self, ref: str, kind: Label | None = None) -> DiscourseView:
        """A dialogue or document with its units in order and its gold and predicted relations.

        Raises:
            NotFoundError: No such discourse (of that kind).
        """
        found = self._rows(browse.discourse_node(), id=ref)
        nodes = [node_view(r) for r in found]
        if kind is not None:
            nodes = [n for n in nodes if n.has(kind)]
        if not nodes:
            what = {Label.Dialogue: "dialogue", Label.Document: "document"}.get(kind, "dialogue or document")  # type: ignore[arg-type]
            raise NotFoundError(f"no {what} {ref!r} in the graph")
        head = nodes[0]
        units = [
            UnitView(node_view(r), r["speaker_id"], r["speaker"])
            for r in self._rows(browse.discourse_units(), id=head.id)
        ]
        units.sort(key=lambda u: (u.position is None, u.position if isinstance(u.position, int) else 0, u.id))
        relations = sorted(
            (relation_view(r) for r in self._rows(browse.discourse_relations(), id=head.id)), key=lambda r: r.id
        )
        self._whole([head.corpus, *(u.node.corpus for u in units), *(r.node.corpus for r in relations)])
        return DiscourseView(head, tuple(units), tuple(relations))

    # -- nodes -------------------------------------------------------------------------------------

    def node(self, node_id: str) -> tuple[NodeView, str | None, str | None, list[str]]:
        """A node with its speaker id, speaker name and discourses.

        Raises:
            NotFoundError: No such node.
        """
        rows = self._rows(browse.node(), id=node_id)
        if not rows:
            raise NotFoundError(f"no node {node_id!r} in the graph")
        r = rows[0]
        view = node_view(r)
        self._whole([view.corpus])
        return view, r["speaker_id"], r["speaker"], sorted(r["discourses"] or [])

    def neighbors(
        self, node_id: str, rel: Sequence[str] = (), direction: str = "both", depth: int = 1, limit: int = 200
    ) -> Neighbourhood:
        """Nodes and relationships within ``depth`` hops (at most ``limit`` paths).

        Raises:
            ApiError: Unknown relationship type, direction, or depth outside 1..3.
            NotFoundError: No such node.
        """
        if direction not in ("out", "in", "both"):
            raise ApiError(f"direction must be out, in or both, not {direction!r}")
        if not 1 <= depth <= 3:
            raise ApiError(f"depth must be 1, 2 or 3, not {depth}")
        size = _page_size(limit)
        known = {t.value: t for t in RelType}
        types = []
        for name in rel:
            if name not in known:
                raise ApiError(f"unknown relationship type {name!r}; expected one of {', '.join(sorted(known))}")
            types.append(known[name])
        rows = self._rows(browse.neighbors(types, direction, depth), id=node_id, limit=size)
        if not rows or not rows[0]["nodes"]:
            center, *_ = self.node(node_id)  # raises NotFoundError when the node is missing
            return Neighbourhood(node_id, [center], [], False)
        nodes = sorted((node_view(n) for n in rows[0]["nodes"]), key=lambda n: n.id)
        edges = sorted(
            (EdgeView(e["source"], e["type"], e["target"], e.get("corpus"), e.get("id")) for e in rows[0]["edges"]),
            key=lambda e: (e.source, e.type, e.target),
        )
        self._whole([*(n.corpus for n in nodes), *(e.corpus for e in edges)])
        return Neighbourhood(node_id, nodes, edges, truncated=bool(rows[0]["truncated"]))

    # -- relations ---------------------------------------------------------------------------------

    def relations(
        self, filters: RelationFilter | None = None, cursor: str | None = None, limit: int = 100
    ) -> Page[RelationView]:
        """A page of relations (gold and predicted) with their ends, those ``filters`` keeps."""
        filters = filters or RelationFilter()
        size = _page_size(limit)
        after = decode_cursor(cursor, str) or ""
        if filters.corpus is not None:
            self.require_corpus(filters.corpus)
        rows = self._rows(filters.query(), **filters.params(), after=after, limit=size + 1)
        items = [relation_view(r) for r in rows[:size]]
        self._whole([filters.corpus, *(r.node.corpus for r in items)])
        return Page(items, encode_cursor(items[-1].id) if len(rows) > size else None)

    # -- search ------------------------------------------------------------------------------------

    def search(self, q: str, corpus: str | None = None, cursor: str | None = None, limit: int = 20) -> Page[SearchHit]:
        """Full-text search over unit and discourse texts (words of ``q``, all literal).

        Raises:
            ApiError: Empty query, or paging deeper than the search allows.
        """
        size = _page_size(limit)
        terms = lucene_terms(q)
        if not terms:
            raise ApiError("q must contain at least one word")
        offset = decode_cursor(cursor, int) or 0
        if not 0 <= offset <= MAX_SEARCH_OFFSET:
            raise ApiError(f"search pages stop at {MAX_SEARCH_OFFSET} hits; refine the query")
        params: dict[str, Any] = {"q": terms, "skip": offset, "limit": size + 1}
        if corpus is not None:
            self.require_corpus(corpus)
            params["corpus"] = corpus
        try:
            rows = self._rows(browse.search(corpus is not None), **params)
        except ApiError as e:
            # Lucene may still refuse a query (too many terms a prefix expands to): say so plainly
            # rather than passing on the parser's message.
            raise ApiError(f"q {q!r} cannot be searched: use plain words, or a word ending in * for a prefix") from e
        items = [SearchHit(node_view(r), float(r["score"]), sorted(r["discourses"] or [])) for r in rows[:size]]
        more = len(rows) > size and offset + size <= MAX_SEARCH_OFFSET
        return Page(items, encode_cursor(offset + size) if more else None)

    # -- agreement ---------------------------------------------------------------------------------

    def judgements(self, corpus: str) -> list[JudgementView]:
        """Every judgement of ``corpus`` (read in READ access mode)."""
        found = stored_judgements(ReadOnlyStore(self.reader.driver, self.reader.database, self.reader.timeout), corpus)
        self._whole([corpus])
        return found
