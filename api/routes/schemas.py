"""Response models of the HTTP API, built from the read views of :mod:`ontology.views`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from graphstore.browsing import CorpusInfo, Neighbourhood, SearchHit
from graphstore.comparisons import MapComparison
from ontology.terms import Prop
from ontology.views import DiscourseView, EdgeView, NodeView, RelationView, SemanticHit, UnitView


class Problem(BaseModel):
    """An RFC 9457 problem detail (``application/problem+json``)."""

    type: str = Field(description="URI naming the kind of problem.")
    title: str
    status: int
    detail: str
    instance: str | None = None


class Node(BaseModel):
    """A graph node."""

    id: str
    kind: str = Field(description="Most specific ontology class.")
    labels: list[str]
    corpus: str | None = None
    text: str | None = None
    properties: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, view: NodeView) -> Node:
        return cls(
            id=view.id,
            kind=view.kind,
            labels=list(view.labels),
            corpus=view.corpus,
            text=view.text,
            properties=dict(view.props),
        )


class NodeDetail(Node):
    """A node with its speaker and the dialogues/documents it is part of."""

    speaker_id: str | None = None
    speaker: str | None = None
    discourses: list[str] = Field(default_factory=list)


class Unit(BaseModel):
    """A locution, proposition or sentence of a dialogue/document, in reading order."""

    id: str
    kind: str
    text: str
    position: int | None = None
    speaker_id: str | None = None
    speaker: str | None = None
    timestamp: str | None = None
    start_time: float | None = None
    end_time: float | None = None
    properties: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, view: UnitView) -> Unit:
        node = view.node
        pos = view.position
        start, end = node.get(Prop.START_TIME), node.get(Prop.END_TIME)
        stamp = node.get(Prop.TIMESTAMP)
        return cls(
            id=view.id,
            kind=node.kind,
            text=view.text,
            position=pos if isinstance(pos, int) else None,
            speaker_id=view.speaker_id,
            speaker=node.get(Prop.SPEAKER) or view.speaker,
            timestamp=None if stamp is None else str(stamp),
            start_time=float(start) if isinstance(start, int | float) else None,
            end_time=float(end) if isinstance(end, int | float) else None,
            properties=dict(node.props),
        )


class Relation(BaseModel):
    """A reified relation (gold or predicted) with its sources and targets."""

    id: str
    kind: str
    corpus: str | None = None
    origin: str = Field(description="gold or predicted")
    scheme_label: str | None = None
    sense: str | None = None
    score: float | None = Field(default=None, description="Model score of a predicted relation.")
    model: str | None = None
    model_version: str | None = None
    run_id: str | None = None
    sources: list[str]
    targets: list[str]
    text: str | None = None
    source_tokens: list[int] | None = Field(default=None, description="Highlighted token positions of the source.")
    target_tokens: list[int] | None = Field(default=None, description="Highlighted token positions of the target.")

    @classmethod
    def of(cls, view: RelationView) -> Relation:
        score = view.score
        source_tokens, target_tokens = view.node.get(Prop.SOURCE_TOKENS), view.node.get(Prop.TARGET_TOKENS)
        return cls(
            id=view.id,
            kind=view.kind,
            corpus=view.node.corpus,
            origin=view.origin,
            scheme_label=None if view.scheme_label is None else str(view.scheme_label),
            sense=view.sense,
            score=float(score) if isinstance(score, int | float) else None,
            model=view.model,
            model_version=None if view.model_version is None else str(view.model_version),
            run_id=view.run_id,
            sources=list(view.sources),
            targets=list(view.targets),
            text=view.node.text,
            source_tokens=None if source_tokens is None else [int(t) for t in source_tokens],
            target_tokens=None if target_tokens is None else [int(t) for t in target_tokens],
        )


class Discourse(BaseModel):
    """A dialogue or document: its units in order and its gold and predicted relations."""

    id: str
    kind: str
    corpus: str | None = None
    local_id: str | None = None
    properties: dict[str, Any] = Field(default_factory=dict)
    units: list[Unit]
    relations: list[Relation]

    @classmethod
    def of(cls, view: DiscourseView) -> Discourse:
        return cls(
            id=view.id,
            kind=view.node.kind,
            corpus=view.corpus,
            local_id=None if view.local_id is None else str(view.local_id),
            properties=dict(view.node.props),
            units=[Unit.of(u) for u in view.units],
            relations=[Relation.of(r) for r in view.relations],
        )


class DiscourseSummary(BaseModel):
    """A dialogue or document in a list."""

    id: str
    kind: str
    corpus: str | None = None
    local_id: str | None = None
    units: int


class DiscoursePage(BaseModel):
    """A page of dialogues or documents."""

    items: list[DiscourseSummary]
    next_cursor: str | None = None


class RelationPage(BaseModel):
    """A page of relations."""

    items: list[Relation]
    next_cursor: str | None = None


class Corpus(BaseModel):
    """A corpus and its load status."""

    id: str
    name: str | None = None
    status: str | None = None
    source: str | None = None

    @classmethod
    def of(cls, info: CorpusInfo) -> Corpus:
        return cls(id=info.id, name=info.name, status=info.status, source=info.source)


class CorpusDetail(Corpus):
    """A corpus with node counts per label and relation counts per kind."""

    labels: dict[str, int]
    relations: dict[str, int]


class Neighbors(BaseModel):
    """The nodes and relationships around a node."""

    center: str
    nodes: list[Node]
    # The read view itself: a stored relationship has no field the API adds or hides.
    edges: list[EdgeView]
    truncated: bool = Field(False, description="Paths were left out at the limit (the nearest are kept).")

    @classmethod
    def of(cls, hood: Neighbourhood) -> Neighbors:
        return cls(
            center=hood.center,
            nodes=[Node.of(n) for n in hood.nodes],
            edges=list(hood.edges),
            truncated=hood.truncated,
        )


class Hit(BaseModel):
    """A full-text search hit."""

    node: Node
    score: float
    discourses: list[str]

    @classmethod
    def of(cls, hit: SearchHit) -> Hit:
        return cls(node=Node.of(hit.node), score=hit.score, discourses=hit.discourses)


class SearchPage(BaseModel):
    """A page of search hits, best first."""

    items: list[Hit]
    next_cursor: str | None = None


class SemanticSearchPage(BaseModel):
    """Semantic search hits, best first (one page: ``limit`` nearest nodes)."""

    semantic: bool = True
    items: list[SemanticHit]
    next_cursor: None = None


class AgreementFigures(BaseModel):
    """Krippendorff's alpha of one selection of judgements."""

    min_trust: float | None = None
    min_confidence: float | None = None
    alpha: float | None = None
    annotators: int
    annotations: int
    units: int
    labels: dict[str, int]


class Agreement(BaseModel):
    """Agreement of a corpus overall and with the requested filters."""

    corpus: str
    overall: AgreementFigures
    filtered: AgreementFigures


class Health(BaseModel):
    """Reachability of the backends."""

    status: str = Field(description="ok when every backend answers, else degraded")
    neo4j: str
    sparql: str


class CypherRequest(BaseModel):
    """A read-only Cypher query."""

    query: str = Field(max_length=100_000, examples=["MATCH (n:Locution) RETURN n.id, n.text LIMIT 5"])
    parameters: dict[str, Any] = Field(default_factory=dict)


class Question(BaseModel):
    """A competency question in both query languages (``ontology/cq``)."""

    name: str = Field(description="File stem, e.g. 03-molweni-qap-per-dialogue")
    title: str
    requires: list[str] = Field(description="Corpora the question is about (empty: any)")
    cypher: str
    sparql: str


class CypherResult(BaseModel):
    """Rows of a Cypher query (cut at the row limit)."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool
    row_count: int
    error: str | None = None


class GraphSchemaModel(BaseModel):
    """What a query editor completes: the graph's vocabulary and the ontology's SPARQL terms."""

    labels: list[str] = Field(description="Node labels in the graph")
    relationship_types: list[str] = Field(description="Relationship types in the graph")
    property_keys: list[str] = Field(description="Property keys in the graph")
    prefixes: dict[str, str] = Field(description="SPARQL prefixes predeclared by /sparql, to their namespace IRIs")
    classes: list[str] = Field(description="The ontology's classes, prefixed (aw:Proposition)")
    properties: list[str] = Field(description="The ontology's properties, prefixed (aw:text)")


class AifImport(BaseModel):
    """What an AIF import wrote."""

    id: str = Field(description="Graph id of the imported dialogue.")
    corpus: str
    nodes: int
    edges: int


PROBLEM_TYPE = "application/problem+json"
_PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}


def truthful_openapi(schema: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI document as the API answers: error bodies as ``application/problem+json``.

    FastAPI documents every response under the route's type (JSON, HTML, ...), while the error handlers
    (:mod:`api.problems`) answer ``application/problem+json``; each 4xx/5xx response is rewritten
    to that type with the :class:`Problem` schema. Each operation also gets the 405 its path
    answers to other methods (with the ``Allow`` header naming the methods it takes), and
    ``POST /sparql`` the 415 it answers to a body that is neither a form nor
    ``application/sparql-query``.

    Args:
        schema: The document FastAPI built (changed in place).

    Returns:
        The same document.
    """
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("Problem", Problem.model_json_schema())
    problem_body = {PROBLEM_TYPE: {"schema": _PROBLEM_REF}}
    for path, operations in schema.get("paths", {}).items():
        methods = sorted(m.upper() for m in operations if m in ("get", "post", "put", "patch", "delete"))
        allow = ", ".join([*methods, *(["HEAD"] if "GET" in methods else [])])
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses = operation["responses"]
            for status, response in responses.items():
                if status[:1] in ("4", "5") and "content" in response:
                    # Every handler answers a Problem, 422 included (not FastAPI's HTTPValidationError).
                    response["content"] = {PROBLEM_TYPE: {"schema": _PROBLEM_REF}}
            responses.setdefault(
                "405",
                {
                    "description": "Method not allowed",
                    "headers": {"Allow": {"description": f"methods of {path}", "schema": {"type": "string"}}},
                    "content": dict(problem_body),
                },
            )
            responses["405"].setdefault("headers", {})["Allow"] = {
                "description": f"methods of {path}: {allow}",
                "schema": {"type": "string"},
            }
            if path == "/sparql" and method == "post":
                responses.setdefault(
                    "415",
                    {
                        "description": "Body neither application/x-www-form-urlencoded nor application/sparql-query",
                        "content": dict(problem_body),
                    },
                )
    return schema


class TypeScores(BaseModel):
    """Predicted against gold for one edge type (or all: ``micro``); rules in docs/graph-model.md."""

    type: str = Field(description="Relation class, with the sense of a discourse relation (or 'micro').")
    gold: int = Field(description="Gold edges (source-target pairs) of the type.")
    predicted: int = Field(description="Predicted edges of the type.")
    matched: int = Field(description="Predicted edges gold has with the same ends and type.")
    other_type: int = Field(description="Predicted edges whose ends gold links with another type.")
    missed: int = Field(description="Gold edges no prediction matches.")
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None


class ComparedRun(BaseModel):
    """A prediction run compared with gold."""

    run_id: str
    model: str
    model_version: str
    task: str
    created_at: str
    relations: int = Field(description="Its predicted relations on the map (or in the corpus).")
    classes: list[str] = Field(description="The relation classes it predicts: the classes compared.")


class MissedEdgeOut(BaseModel):
    """A gold edge no prediction of the run matches."""

    relation: str
    source: str
    target: str
    type: str


class Comparison(BaseModel):
    """A run's predicted relations on a map against the map's gold relations."""

    discourse: str
    run: ComparedRun
    runs: list[ComparedRun] = Field(description="Every run with relations on the map, newest first.")
    types: list[TypeScores]
    micro: TypeScores
    marks: dict[str, str] = Field(
        description="Relation id -> match | other_type | unmatched (predicted), found | partly | missed (gold)."
    )
    missed: list[MissedEdgeOut]

    @classmethod
    def of(cls, result: MapComparison) -> Comparison:
        """From the service's comparison."""
        return cls.model_validate(result, from_attributes=True)
