"""REST graph endpoints: health, corpora, dialogues, documents, nodes, relations, search, agreement."""

# No ``from __future__ import annotations`` here: :func:`_discourse_list` builds its route's
# parameter annotations from its argument, and FastAPI must see them as objects, not as strings
# to resolve in this module's globals.

import socket
from collections.abc import Callable
from typing import Annotated, NamedTuple
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, FastAPI, Query, Request, Response
from pydantic import BaseModel

from api.json_response import model_json
from api.liveness import PROBE_S, LatestCheck
from api.routes import deps
from api.routes.schemas import (
    Agreement,
    Comparison,
    Corpus,
    CorpusDetail,
    Discourse,
    DiscoursePage,
    DiscourseSummary,
    Health,
    Hit,
    Neighbors,
    Node,
    NodeDetail,
    Problem,
    Relation,
    RelationPage,
    SearchPage,
    SemanticSearchPage,
)
from api.services.agreement import filtered as corpus_agreement
from api.services.graph import bolt_uri
from api.services.query import sparql_store
from api.services.semantic import search as semantic_search
from graphstore import browsing, comparisons
from graphstore.browsing import BrowseService
from ontology.errors import ApiError, ArgwebError, DatabaseUnavailableError
from ontology.sparql import SparqlStore
from ontology.sparql_remote import RemoteStore
from ontology.sparql_remote import health as sparql_health
from ontology.terms import Label, Prop

router = APIRouter()


def fast(model: BaseModel) -> Response:
    """A response model serialised by pydantic (non-finite numbers as strings, see :mod:`api.json_response`).

    The route keeps ``response_model`` for the OpenAPI document; returning a ready response skips
    FastAPI's second validation of what the service already built from typed views.
    """
    return Response(model_json(model), media_type="application/json")


Browse = Annotated[BrowseService, Depends(deps.browse_service)]
ERRORS: dict[int | str, dict[str, object]] = {
    400: {"model": Problem, "description": "Invalid parameter"},
    404: {"model": Problem, "description": "Not in the graph"},
    503: {"model": Problem, "description": "Neo4j unreachable"},
}
Cursor = Annotated[str | None, Query(description="next_cursor of the previous page", max_length=2000)]
Text = Annotated[str | None, Query(max_length=500)]


@router.get(
    "/health",
    response_model=Health,
    tags=["service"],
    responses={503: {"model": Problem, "description": "Neo4j unreachable"}},
)
async def health(request: Request, response: Response) -> Health:
    """Whether Neo4j and the SPARQL store answer: 503 while Neo4j is away; 200 with ``status``
    ``degraded`` when only the SPARQL store is missing (the graph routes still work).

    Answered within a second under load: a check still running then is not waited for, and the
    last completed one is answered, with its age in seconds in the ``Age`` header."""
    state = request.app.state
    if getattr(state, "health", None) is None:
        app = request.app
        state.health = LatestCheck(lambda: _health(app), lambda: _reachable(app))
    result, age = await state.health.answer()
    if age:
        response.headers["Age"] = str(int(age))
    return result


def _reachable(app: FastAPI) -> None:
    """Raise unless Neo4j's Bolt port accepts a connection (a stopped or killed server refuses at once)."""
    uri = bolt_uri(app.state.settings, start=False)  # no embedded server running: raises
    address = urlsplit(uri)
    host, port = address.hostname or "127.0.0.1", address.port or 7687
    try:
        socket.create_connection((host, port), timeout=PROBE_S).close()
    except OSError as e:
        raise DatabaseUnavailableError(f"cannot connect to Neo4j at {host}:{port}: {e}") from e


def _health(app: FastAPI) -> Health:
    cfg = app.state.settings
    BrowseService(app.state.graph.driver(), cfg.neo4j_database, cfg.cypher_timeout).ping()  # unreachable: 503
    store = sparql_store(cfg)
    if isinstance(store, RemoteStore):
        sparql = sparql_health(store)
    else:
        try:
            with SparqlStore(store, read_only=True) as embedded:
                embedded.ask("ASK { }")
            sparql = "ok"
        except ArgwebError as e:
            sparql = f"unavailable: {e}"
    return Health(status="ok" if sparql == "ok" else "degraded", neo4j="ok", sparql=sparql)


@router.get("/corpora", response_model=list[Corpus], responses=ERRORS, tags=["graph"])
def corpora(service: Browse) -> list[Corpus]:
    """Every corpus in the graph with its load status."""
    return [Corpus.of(c) for c in service.corpora()]


@router.get("/corpora/{name}", response_model=CorpusDetail, responses=ERRORS, tags=["graph"])
def corpus(name: str, service: Browse) -> CorpusDetail:
    """A corpus with node counts per label and relation counts per kind (and sense, origin)."""
    info = service.corpus(name)
    return CorpusDetail(**Corpus.of(info).model_dump(), labels=info.labels, relations=info.relations)


def _discourse_page(page: browsing.Page) -> DiscoursePage:
    items = []
    for node, units in page.items:
        local = node.get(Prop.LOCAL_ID)
        items.append(
            DiscourseSummary(
                id=node.id,
                kind=node.kind,
                corpus=node.corpus,
                local_id=None if local is None else str(local),
                units=units,
            )
        )
    return DiscoursePage(items=items, next_cursor=page.next_cursor)


class _Paging(NamedTuple):
    cursor: str | None
    limit: int


def _paging(cursor: Cursor = None, limit: Annotated[int, Query(ge=1, le=browsing.MAX_PAGE)] = 50) -> _Paging:
    return _Paging(cursor, limit)


def _dialogue_filter(
    corpus: Text = None,
    speaker: Text = None,
    q: Annotated[str | None, Query(max_length=500, description="part of the id or of an utterance")] = None,
) -> browsing.DiscourseFilter:
    """Dialogues, filtered by corpus, speaker (id, name or AIF person id) and text, in id order."""
    return browsing.DiscourseFilter(Label.Dialogue, corpus, speaker, q)


def _document_filter(corpus: Text = None, q: Text = None) -> browsing.DiscourseFilter:
    """Documents (e.g. Sci-Arg papers), filtered by corpus and text, in id order."""
    return browsing.DiscourseFilter(Label.Document, corpus, q=q)


def _discourse_list(path: str, filters: Callable[..., browsing.DiscourseFilter]) -> None:
    """Add the list route ``GET path`` of what ``filters`` selects, a page at a time.

    ``filters`` declares the route's own query parameters and gives its description; the paging
    parameters (``cursor``, ``limit``) follow them. Both are dependencies, so that FastAPI lists
    the parameters in that order.
    """

    def route(
        service: Browse,
        where: Annotated[browsing.DiscourseFilter, Depends(filters)],
        page: Annotated[_Paging, Depends(_paging)],
    ) -> DiscoursePage:
        return _discourse_page(service.discourses(where, page.cursor, page.limit))

    route.__doc__ = filters.__doc__
    # The route's name makes its operationId (``dialogues_dialogues_get``): name it after the path
    # as a function of its own would be, so that clients generated from the OpenAPI keep working.
    router.get(path, response_model=DiscoursePage, responses=ERRORS, tags=["graph"], name=path.strip("/"))(route)


_discourse_list("/dialogues", _dialogue_filter)


@router.get("/dialogues/{dialogue_id:path}", response_model=Discourse, responses=ERRORS, tags=["graph"])
def dialogue(dialogue_id: str, service: Browse) -> Response:
    """A dialogue: utterances in order, propositions, gold and predicted relations."""
    return fast(Discourse.of(service.discourse(dialogue_id, Label.Dialogue)))


_discourse_list("/documents", _document_filter)


@router.get("/documents/{document_id:path}", response_model=Discourse, responses=ERRORS, tags=["graph"])
def document(document_id: str, service: Browse) -> Response:
    """A document: sentences or argument components in order, and its relations."""
    return fast(Discourse.of(service.discourse(document_id, Label.Document)))


@router.get("/discourses/{discourse_id:path}/comparison", response_model=Comparison, responses=ERRORS, tags=["graph"])
def discourse_comparison(
    discourse_id: str,
    service: Browse,
    run: Annotated[
        str | None, Query(max_length=500, description="prediction run id (default: the newest on the map)")
    ] = None,
) -> Response:
    """A prediction run's relations on a map against the map's gold relations: each predicted
    relation marked (match, other type, unmatched), the gold edges missed, and precision, recall
    and F1 per relation type and micro (rules: docs/graph-model.md, "Predicted against gold")."""
    return fast(Comparison.of(comparisons.map_comparison(service.reader, discourse_id, run)))


@router.get("/discourses/{discourse_id:path}", response_model=Discourse, responses=ERRORS, tags=["graph"])
def discourse(discourse_id: str, service: Browse) -> Response:
    """A dialogue or a document, whichever the id names (used by the graph page)."""
    return fast(Discourse.of(service.discourse(discourse_id)))


@router.get("/nodes/{node_id:path}/neighbors", response_model=Neighbors, responses=ERRORS, tags=["graph"])
def neighbors(
    node_id: str,
    service: Browse,
    rel: Annotated[list[str] | None, Query(description="relationship types to follow (all when absent)")] = None,
    direction: Annotated[str, Query(pattern="^(out|in|both)$")] = "both",
    depth: Annotated[int, Query(ge=1, le=3)] = 1,
    limit: Annotated[int, Query(ge=1, le=browsing.MAX_PAGE, description="paths at most")] = 200,
) -> Response:
    """Nodes and relationships within ``depth`` hops (1-3) of a node."""
    return fast(Neighbors.of(service.neighbors(node_id, rel or (), direction, depth, limit)))


@router.get("/nodes/{node_id:path}", response_model=NodeDetail, responses=ERRORS, tags=["graph"])
def node(node_id: str, service: Browse) -> NodeDetail:
    """A node with its properties, speaker and dialogues/documents."""
    view, speaker_id, speaker, discourses = service.node(node_id)
    return NodeDetail(**Node.of(view).model_dump(), speaker_id=speaker_id, speaker=speaker, discourses=discourses)


@router.get("/relations", response_model=RelationPage, responses=ERRORS, tags=["graph"])
def relations(
    service: Browse,
    type: Annotated[str | None, Query(description="relation class: " + ", ".join(browsing.RELATION_KINDS))] = None,
    origin: Annotated[str | None, Query(pattern="^(gold|predicted)$")] = None,
    model: Text = None,
    min_score: Annotated[float | None, Query(ge=0.0, le=1.0)] = None,
    corpus: Text = None,
    sense: Annotated[str | None, Query(description="discourse sense, e.g. QuestionAnswerPair")] = None,
    cursor: Cursor = None,
    limit: Annotated[int, Query(ge=1, le=browsing.MAX_PAGE)] = 100,
) -> Response:
    """Relations (gold and predicted) by class, origin, model, score, corpus and sense, in id order."""
    filters = browsing.RelationFilter(type, origin, model, min_score, corpus, sense)
    page = service.relations(filters, cursor, limit)
    return fast(RelationPage(items=[Relation.of(r) for r in page.items], next_cursor=page.next_cursor))


@router.get("/search", response_model=SearchPage | SemanticSearchPage, responses=ERRORS, tags=["graph"])
def search(
    request: Request,
    service: Browse,
    q: Annotated[
        str,
        Query(
            min_length=1,
            max_length=500,
            description='words to find ("a quoted phrase" in that order, word* as a prefix), '
            "or the text to match in meaning",
        ),
    ],
    corpus: Text = None,
    cursor: Cursor = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    semantic: Annotated[
        bool, Query(description="by meaning: the nearest locutions/propositions in the vector index (one page)")
    ] = False,
) -> Response:
    """Full-text search over utterances, propositions and dialogue/document ids (Neo4j full-text index),
    or with ``semantic=true`` the ``limit`` locutions and propositions nearest in meaning (Neo4j vector
    indexes; 404 until the graph is embedded with ``argweb embed``)."""
    if semantic:
        if cursor is not None:
            raise ApiError("semantic search answers one page: raise limit instead of passing a cursor")
        hits = semantic_search(request.app.state.graph, deps.settings(request), q, k=limit, corpus=corpus)
        return fast(SemanticSearchPage(items=hits))
    page = service.search(q, corpus, cursor, limit)
    return fast(SearchPage(items=[Hit.of(h) for h in page.items], next_cursor=page.next_cursor))


@router.get("/agreement/{corpus}", response_model=Agreement, responses=ERRORS, tags=["graph"])
def agreement(
    corpus: str,
    service: Browse,
    min_trust: Annotated[float | None, Query(ge=0.0, le=1.0)] = None,
    # M-Arg self-confidence is a 1-5 rating, unlike trust (0-1): no upper bound here.
    min_confidence: Annotated[
        float | None, Query(ge=0.0, description="keep judgements with self-confidence >= this (M-Arg: 1-5)")
    ] = None,
) -> Agreement:
    """Krippendorff's alpha of the stored annotator judgements, overall and filtered."""
    result = corpus_agreement(service.judgements(corpus), corpus, min_trust, min_confidence)
    return Agreement.model_validate(result, from_attributes=True)
