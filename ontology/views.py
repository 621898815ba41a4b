"""The read model: typed views of what is stored in the graph.

Records (``ontology.records``) are what loaders produce and the store writes; views are what every
reader gets back — the RDF and AIF exports, the audio units, the agreement code, the model datasets
and the API schemas. They are plain frozen dataclasses (cheap to build by the million) whose
property access goes through the generated :class:`~ontology.terms.Prop` keys, so a renamed
property fails in one place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ontology.terms import LABEL_ANCESTORS, Label, Prop

_ORDER: dict[str, int] = {label.value: len(ancestors) for label, ancestors in LABEL_ANCESTORS.items()}


def most_specific(labels: Sequence[str]) -> str:
    """The deepest ontology class among Neo4j labels (ties broken by name, unknown labels last)."""
    known = [lab for lab in labels if lab in _ORDER]
    if not known:
        return sorted(labels)[0] if labels else Label.Node.value
    return max(sorted(known), key=lambda lab: _ORDER[lab])


def _node_property(key: Prop, doc: str) -> Any:
    """A read-only attribute of a view that wraps a node: the node's property ``key`` (None if unset)."""
    return property(lambda self: self.node.get(key), doc=doc)


@dataclass(frozen=True, slots=True)
class NodeView:
    """One stored node.

    Attributes:
        id: Graph id (``<corpus>:<local parts>``).
        labels: Its Neo4j labels.
        props: Its properties, keyed by :class:`Prop` values.
    """

    id: str
    labels: tuple[str, ...]
    props: Mapping[str, Any] = field(default_factory=dict)

    def get(self, key: Prop, default: Any = None) -> Any:
        """A property by its ontology key."""
        return self.props.get(key.value, default)

    @property
    def kind(self) -> str:
        """The most specific ontology class of the node."""
        return most_specific(self.labels)

    @property
    def corpus(self) -> str | None:
        """The corpus the node belongs to."""
        return self.get(Prop.CORPUS)

    @property
    def text(self) -> str | None:
        """Its text (units) or None."""
        return self.get(Prop.TEXT)

    def has(self, label: Label) -> bool:
        """Whether the node carries ``label``."""
        return label.value in self.labels


@dataclass(frozen=True, slots=True)
class EdgeView:
    """One stored relationship ``(source)-[type]->(target)``.

    Attributes:
        source: Id of the start node.
        type: Relationship type.
        target: Id of the end node.
        corpus: Corpus of the relationship, if recorded.
        id: Relationship id (AIF edges), if any.
    """

    source: str
    type: str
    target: str
    corpus: str | None = None
    id: str | None = None


@dataclass(frozen=True, slots=True)
class _OfNode:
    """A view built around one stored node (its first field), identified by the node's id."""

    node: NodeView

    @property
    def id(self) -> str:
        """Graph id."""
        return self.node.id


@dataclass(frozen=True, slots=True)
class UnitView(_OfNode):
    """A locution, proposition or sentence of a dialogue or document, in reading order.

    Attributes:
        node: The stored node.
        speaker_id: Id of its speaker node (locutions), if any.
        speaker: Speaker name, if any.
        discourse: Id of the dialogue or document it was read as part of, if known.
    """

    speaker_id: str | None = None
    speaker: str | None = None
    discourse: str | None = None

    @property
    def text(self) -> str:
        """Its text ('' when none is stored)."""
        return self.node.text or ""

    position = _node_property(Prop.POSITION, "Position in its dialogue or document.")


@dataclass(frozen=True, slots=True)
class RelationView(_OfNode):
    """A reified relation (AIF S-node, discourse relation, non-relation) with its ends.

    Attributes:
        node: The relation node.
        sources: Ids of the nodes with an AIF edge into the relation (premises / discourse source).
        targets: Ids of the nodes the relation points to (conclusions / discourse target).
    """

    sources: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """Unified relation class (``Support``, ``Attack``, ``DiscourseRelation`` ...)."""
        return self.node.kind

    @property
    def origin(self) -> str:
        """``gold`` or ``predicted``."""
        return str(self.node.get(Prop.ORIGIN, "gold"))

    scheme_label = _node_property(Prop.SCHEME_LABEL, "The label as the corpus (or the model) spells it.")
    sense = _node_property(Prop.SENSE, "Unified SDRT sense of a discourse relation.")
    score = _node_property(Prop.SCORE, "Model score (confidence in [0, 1]) of a predicted relation.")
    model = _node_property(Prop.MODEL, "Name of the model that predicted it.")
    model_version = _node_property(Prop.MODEL_VERSION, "Version of that model.")
    run_id = _node_property(Prop.RUN_ID, "Prediction run that wrote it.")


@dataclass(frozen=True, slots=True)
class DiscourseView(_OfNode):
    """A dialogue or document with its units in order and the relations among them.

    Attributes:
        node: The Dialogue / Document node.
        units: Its locutions, propositions or sentences, ordered by position then id.
        relations: Relations whose ends lie in it (gold and predicted).
    """

    units: tuple[UnitView, ...] = ()
    relations: tuple[RelationView, ...] = ()

    @property
    def corpus(self) -> str | None:
        """Its corpus."""
        return self.node.corpus

    local_id = _node_property(Prop.LOCAL_ID, "Id in the corpus files.")


@dataclass(frozen=True, slots=True)
class JudgementView:
    """One annotator's judgement of a relation or pair.

    Attributes:
        relation: Id of the judged relation or pair node.
        annotator: Id of the annotator node.
        label: The label chosen.
        trust: The annotator's trust score (crowd platforms), if any.
        confidence: The annotator's confidence, if any.
        props: Every stored property of the judgement.
    """

    relation: str
    annotator: str
    label: str | None = None
    trust: float | None = None
    confidence: float | None = None
    props: Mapping[str, Any] = field(default_factory=dict)

    def get(self, key: Prop, default: Any = None) -> Any:
        """A property by its ontology key."""
        return self.props.get(key.value, default)

    @property
    def tainted(self) -> bool | None:
        """Whether the platform flagged the judgement as unreliable (M-Arg), if recorded."""
        return self.get(Prop.TAINTED)


@dataclass(frozen=True, slots=True)
class SemanticHit:
    """A locution or proposition found by meaning (a neighbour in the vector index).

    Attributes:
        id: Graph id of the node.
        label: ``Proposition`` or ``Locution``.
        corpus: Its corpus.
        discourse: Id of the dialogue or document it is part of (the first by id), if any.
        text: Its text.
        score: Cosine similarity of its embedding and the query's, in [-1, 1].
    """

    id: str
    label: str
    corpus: str | None
    discourse: str | None
    text: str | None
    score: float


@dataclass(frozen=True)
class CorpusCounts:
    """What one corpus holds (``(none)``: nodes of no corpus), as counted by :meth:`GraphStore.stats`.

    Attributes:
        labels: Nodes per label.
        relationships: Relationships per type.
        relations: Relation nodes per kind (``Class`` or ``Class:scheme``).
        summary: Discourses, dialogues, documents, locutions, propositions and relations.
        status: Its marker's status (``loading`` or ``complete``); None when it has no marker.
        source: Where its marker says it was loaded from.
        marked: Whether the corpus has a marker (a corpus node); the counts of ``(none)`` have none.
    """

    labels: dict[str, int]
    relationships: dict[str, int]
    relations: dict[str, int]
    summary: dict[str, int]
    status: str | None = None
    source: str | None = None
    marked: bool = False

    def as_dict(self) -> dict[str, object]:
        """The JSON form (``status`` and ``source`` only for a marked corpus, in the store's key order)."""
        out: dict[str, object] = {
            "labels": self.labels,
            "relationships": self.relationships,
            "relations": self.relations,
        }
        if self.marked:
            out["status"] = self.status
            out["source"] = self.source
        out["summary"] = self.summary
        return out


@dataclass(frozen=True)
class GraphStats:
    """Counts per label, relationship type and corpus (``argweb corpus stats``, ``GET /stats``).

    Attributes:
        labels: Nodes per label over the whole graph.
        relationships: Relationships per type over the whole graph.
        corpora: The counts of each corpus, by corpus id (sorted).
    """

    labels: dict[str, int]
    relationships: dict[str, int]
    corpora: dict[str, CorpusCounts]

    @classmethod
    def from_counts(cls, counts: Mapping[str, Any]) -> GraphStats:
        """The stats of the mapping :meth:`graphstore.store.GraphStore.stats` returns."""
        return cls(
            labels=dict(counts["labels"]),
            relationships=dict(counts["relationships"]),
            corpora={
                name: CorpusCounts(
                    labels=dict(entry["labels"]),
                    relationships=dict(entry["relationships"]),
                    relations=dict(entry["relations"]),
                    summary=dict(entry["summary"]),
                    status=entry.get("status"),
                    source=entry.get("source"),
                    marked="status" in entry,
                )
                for name, entry in counts["corpora"].items()
            },
        )

    def as_dict(self) -> dict[str, object]:
        """The JSON form, key for key what the store counted."""
        return {
            "labels": self.labels,
            "relationships": self.relationships,
            "corpora": {name: entry.as_dict() for name, entry in self.corpora.items()},
        }


@dataclass(frozen=True)
class RelationCount:
    """Relations of one type in one corpus, gold and predicted side by side.

    Attributes:
        corpus: Corpus id (``(none)``: relations of no corpus).
        type: ``Class``, or ``Class:sense`` for a discourse relation.
        gold: Gold relations.
        predicted: Predicted relations (of the runs asked about, when some were named).
        other_runs: Predicted relations of every other run (0 when no runs were named).
    """

    corpus: str
    type: str
    gold: int = 0
    predicted: int = 0
    other_runs: int = 0
