"""Predicted against gold: the one matching of a prediction run's edges with the annotation.

Used by the map comparison (``GET /discourses/{id}/comparison``, the explorer's compare view) and
by the corpus figures (``argweb corpus stats --predicted``, the dashboard), so that every place
counts the same way. The rules (docs/graph-model.md, "Predicted against gold"):

* An **edge** is a directed pair ``source -> target`` with a **type**: the relation's ontology
  class, with its sense for a discourse relation (``Support``, ``DiscourseRelation:Elaboration``).
  A relation with several sources or targets (a linked argument) gives one edge per
  source-target pair.
* The **scope** of a run is the classes it predicts (``NonRelation`` left out: a "no relation"
  prediction claims no edge). Gold relations of other classes (``Illocution``, ``Transition`` for
  a Support/Attack model) are not compared.
* A predicted edge **matches** when gold has an edge with the same ends and the same type; it is
  **other type** when gold has the same ends with another type in scope; else **unmatched**.
  A gold edge that no prediction matches is **missed**.
* Per type: ``matched`` = predicted edges of the type that match, ``precision`` = matched /
  predicted, ``recall`` = matched / gold, ``F1`` their harmonic mean (None when a denominator
  is 0). Repeated edges (same ends and type) count once. Micro figures sum the counts over
  types, and over maps for a corpus.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ontology.terms import Label

Edge = tuple[str, str, str]
"""``(source id, target id, type)``."""

MATCH = "match"
OTHER_TYPE = "other_type"
UNMATCHED = "unmatched"
MISSED = "missed"
FOUND = "found"
PARTLY = "partly"


def edge_type(kind: str, sense: str | None) -> str:
    """The type an edge is compared by: the class, with the sense of a discourse relation."""
    return f"{kind}:{sense}" if sense else kind


def type_class(edge_type_: str) -> str:
    """The ontology class of an edge type (``DiscourseRelation:Elaboration`` -> ``DiscourseRelation``)."""
    return edge_type_.split(":", 1)[0]


def run_scope(classes: Iterable[str]) -> frozenset[str]:
    """The classes a run is compared on: those it predicts, ``NonRelation`` left out."""
    return frozenset(type_class(c) for c in classes) - {Label.NonRelation.value}


@dataclass(frozen=True)
class ComparedRelation:
    """A stored relation as the comparison sees it.

    Attributes:
        id: Relation node id.
        type: Edge type (:func:`edge_type`).
        sources: Ids of its sources.
        targets: Ids of its targets.
    """

    id: str
    type: str
    sources: tuple[str, ...]
    targets: tuple[str, ...]

    def edges(self) -> list[Edge]:
        """Its directed source-target pairs with its type."""
        return [(s, t, self.type) for s in self.sources for t in self.targets if s != t]


@dataclass(frozen=True)
class TypeScore:
    """Counts and scores of one edge type (or of all: ``type`` = ``micro``).

    Attributes:
        type: Edge type.
        gold: Gold edges of the type.
        predicted: Predicted edges of the type.
        matched: Predicted edges of the type that gold has (same ends, same type).
        other_type: Predicted edges of the type whose ends gold links with another type.
        missed: Gold edges of the type no prediction matches (``gold - matched``).
        precision: ``matched / predicted`` (None without predictions).
        recall: ``matched / gold`` (None without gold edges).
        f1: Harmonic mean of the two (None when either is None or both are 0).
    """

    type: str
    gold: int
    predicted: int
    matched: int
    other_type: int
    missed: int
    precision: float | None
    recall: float | None
    f1: float | None


def score(type_: str, gold: int, predicted: int, matched: int, other_type: int) -> TypeScore:
    """A :class:`TypeScore` from its counts."""
    precision = matched / predicted if predicted else None
    recall = matched / gold if gold else None
    f1 = (
        2 * precision * recall / (precision + recall)
        if precision is not None and recall is not None and precision + recall > 0
        else None
    )
    return TypeScore(type_, gold, predicted, matched, other_type, gold - matched, precision, recall, f1)


@dataclass(frozen=True)
class Counts:
    """Raw per-type counts, summable over maps: ``type -> (gold, predicted, matched, other type)``."""

    by_type: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)

    def __add__(self, other: Counts) -> Counts:
        out = dict(self.by_type)
        for k, v in other.by_type.items():
            a = out.get(k, (0, 0, 0, 0))
            out[k] = (a[0] + v[0], a[1] + v[1], a[2] + v[2], a[3] + v[3])
        return Counts(out)

    def types(self) -> list[TypeScore]:
        """Scores per type, by type name."""
        return [score(k, *v) for k, v in sorted(self.by_type.items())]

    def micro(self) -> TypeScore:
        """Scores over all types (counts summed)."""
        sums = [sum(v[i] for v in self.by_type.values()) for i in range(4)]
        return score("micro", *sums)


@dataclass(frozen=True)
class MissedEdge:
    """A gold edge no prediction matches.

    Attributes:
        relation: The gold relation it belongs to.
        source: Its source id.
        target: Its target id.
        type: Its edge type.
    """

    relation: str
    source: str
    target: str
    type: str


@dataclass(frozen=True)
class Matching:
    """The comparison of one run's predicted relations with the gold relations in scope.

    Attributes:
        counts: Per-type counts.
        marks: Mark of each relation compared: predicted ``match`` / ``other_type`` /
            ``unmatched``; gold ``found`` (every edge matched), ``partly`` or ``missed``.
        missed: The gold edges no prediction matches.
    """

    counts: Counts
    marks: dict[str, str]
    missed: list[MissedEdge]


def compare(gold: Sequence[ComparedRelation], predicted: Sequence[ComparedRelation], scope: frozenset[str]) -> Matching:
    """Match predicted relations with gold ones (the rules of the module docstring).

    Args:
        gold: Gold relations (those of classes outside ``scope`` are ignored).
        predicted: The run's predicted relations (likewise).
        scope: Classes compared (:func:`run_scope`).
    """
    gold = [r for r in gold if type_class(r.type) in scope]
    predicted = [r for r in predicted if type_class(r.type) in scope]
    gold_edges = {e for r in gold for e in r.edges()}
    pred_edges = {e for r in predicted for e in r.edges()}
    gold_ends = {(s, t) for s, t, _ in gold_edges}
    matched_edges = gold_edges & pred_edges
    by_type: dict[str, list[int]] = {}
    for _, _, t in gold_edges:
        by_type.setdefault(t, [0, 0, 0, 0])[0] += 1
    for s, t, k in pred_edges:
        row = by_type.setdefault(k, [0, 0, 0, 0])
        row[1] += 1
        if (s, t, k) in matched_edges:
            row[2] += 1
        elif (s, t) in gold_ends:
            row[3] += 1
    marks: dict[str, str] = {}
    for r in predicted:
        edges = r.edges()
        if edges and all(e in matched_edges for e in edges):
            marks[r.id] = MATCH
        elif any((s, t) in gold_ends for s, t, _ in edges):
            marks[r.id] = OTHER_TYPE
        else:
            marks[r.id] = UNMATCHED
    missed: list[MissedEdge] = []
    seen: set[Edge] = set()
    for r in sorted(gold, key=lambda g: g.id):
        edges = r.edges()
        if not edges:
            continue
        found = [e in matched_edges for e in edges]
        marks[r.id] = FOUND if all(found) else PARTLY if any(found) else MISSED
        for e, ok in zip(edges, found, strict=True):
            if not ok and e not in seen:
                seen.add(e)
                missed.append(MissedEdge(r.id, *e))
    return Matching(Counts({k: (v[0], v[1], v[2], v[3]) for k, v in by_type.items()}), marks, missed)
