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
class UnitView:
    """A locution, proposition or sentence of a dialogue or document, in reading order.

    Attributes:
        node: The stored node.
        speaker_id: Id of its speaker node (locutions), if any.
        speaker: Speaker name, if any.
    """

    node: NodeView
    speaker_id: str | None = None
    speaker: str | None = None

    @property
    def id(self) -> str:
        """Graph id."""
        return self.node.id

    @property
    def text(self) -> str:
        """Its text ('' when none is stored)."""
        return self.node.text or ""

    @property
    def position(self) -> int | None:
        """Position in its dialogue or document."""
        return self.node.get(Prop.POSITION)


@dataclass(frozen=True, slots=True)
class RelationView:
    """A reified relation (AIF S-node, discourse relation, non-relation) with its ends.

    Attributes:
        node: The relation node.
        sources: Ids of the nodes with an AIF edge into the relation (premises / discourse source).
        targets: Ids of the nodes the relation points to (conclusions / discourse target).
    """

    node: NodeView
    sources: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        """Graph id."""
        return self.node.id

    @property
    def kind(self) -> str:
        """Unified relation class (``Support``, ``Attack``, ``DiscourseRelation`` ...)."""
        return self.node.kind

    @property
    def origin(self) -> str:
        """``gold`` or ``predicted``."""
        return str(self.node.get(Prop.ORIGIN, "gold"))

    @property
    def scheme_label(self) -> str | None:
        """The label as the corpus (or the model) spells it."""
        return self.node.get(Prop.SCHEME_LABEL)

    @property
    def sense(self) -> str | None:
        """Unified SDRT sense of a discourse relation."""
        return self.node.get(Prop.SENSE)

    @property
    def score(self) -> float | None:
        """Model score of a predicted relation."""
        return self.node.get(Prop.SCORE)

    @property
    def model(self) -> str | None:
        """Name of the model that predicted it."""
        return self.node.get(Prop.MODEL)

    @property
    def model_version(self) -> str | None:
        """Version of that model."""
        return self.node.get(Prop.MODEL_VERSION)

    @property
    def run_id(self) -> str | None:
        """Prediction run that wrote it."""
        return self.node.get(Prop.RUN_ID)


@dataclass(frozen=True, slots=True)
class DiscourseView:
    """A dialogue or document with its units in order and the relations among them.

    Attributes:
        node: The Dialogue / Document node.
        units: Its locutions, propositions or sentences, ordered by position then id.
        relations: Relations whose ends lie in it (gold and predicted).
    """

    node: NodeView
    units: tuple[UnitView, ...] = ()
    relations: tuple[RelationView, ...] = ()

    @property
    def id(self) -> str:
        """Graph id."""
        return self.node.id

    @property
    def corpus(self) -> str | None:
        """Its corpus."""
        return self.node.corpus

    @property
    def local_id(self) -> str | None:
        """Id in the corpus files."""
        return self.node.get(Prop.LOCAL_ID)


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
