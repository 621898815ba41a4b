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
