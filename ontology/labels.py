"""The one label space of relation models: argument relations, no relation and the discourse senses.

Every relation model (argument mining, discourse parsing) predicts a :class:`RelationLabel`;
the write path maps it onto the ontology class it is stored as. The argument labels are the
unified AIF scheme classes (support = RA, attack = CA, rephrase = MA), ``same_unit`` (two spans
that are parts of one discontinuous unit, Sci-Arg's *parts_of_same*) and ``none`` (an explicit
non-relation); the discourse labels are the 16 unified SDRT senses of :class:`~ontology.terms.Sense`,
with the same values. ``tests/ontology/test_labels.py`` checks the enum against the ontology, so a
sense added to or removed from ``argweb.ttl`` fails there.
"""

from __future__ import annotations

from enum import StrEnum

from ontology.errors import OntologyError
from ontology.terms import LABEL_ANCESTORS, SCHEME_TERMS, Label, Sense


class RelationLabel(StrEnum):
    """What a relation model predicts between two units."""

    SUPPORT = "support"
    ATTACK = "attack"
    REPHRASE = "rephrase"
    SAME_UNIT = "same_unit"
    NONE = "none"
    # The discourse senses take their values from the generated Sense enum, so the two cannot drift.
    Acknowledgement = Sense.Acknowledgement.value
    Alternation = Sense.Alternation.value
    Background = Sense.Background.value
    ClarificationQuestion = Sense.ClarificationQuestion.value
    Comment = Sense.Comment.value
    Conditional = Sense.Conditional.value
    Continuation = Sense.Continuation.value
    Contrast = Sense.Contrast.value
    Correction = Sense.Correction.value
    Elaboration = Sense.Elaboration.value
    Explanation = Sense.Explanation.value
    Narration = Sense.Narration.value
    Parallel = Sense.Parallel.value
    QuestionAnswerPair = Sense.QuestionAnswerPair.value
    QuestionElaboration = Sense.QuestionElaboration.value
    Result = Sense.Result.value


ARGUMENT_LABELS: dict[RelationLabel, Label] = {
    RelationLabel.SUPPORT: Label.Support,
    RelationLabel.ATTACK: Label.Attack,
    RelationLabel.REPHRASE: Label.Rephrase,
    RelationLabel.SAME_UNIT: Label.SameUnit,
    RelationLabel.NONE: Label.NonRelation,
}
"""Argument labels and the ontology class each is stored as."""

DISCOURSE_LABELS: tuple[RelationLabel, ...] = tuple(label for label in RelationLabel if label not in ARGUMENT_LABELS)
"""The discourse senses, in declaration order."""


def relation_label(value: str) -> RelationLabel:
    """Parse a label as a model or a user writes it.

    Argument labels are matched case-insensitively (``Support``, ``SUPPORT``); senses exactly.

    Raises:
        OntologyError: Not a label of the space, listing the valid ones.
    """
    try:
        return RelationLabel(value.lower() if value.lower() in {a.value for a in ARGUMENT_LABELS} else value)
    except ValueError as e:
        raise OntologyError(f"unknown relation label {value!r}; labels: {', '.join(RelationLabel)}") from e


def is_discourse(label: RelationLabel) -> bool:
    """Whether ``label`` is a discourse sense (stored as a ``DiscourseRelation``)."""
    return label not in ARGUMENT_LABELS


def ontology_class(label: RelationLabel) -> Label:
    """The ontology class a relation of ``label`` is stored as (``Support``, ``DiscourseRelation`` ...)."""
    return ARGUMENT_LABELS.get(label, Label.DiscourseRelation)


def sense(label: RelationLabel) -> Sense | None:
    """The unified SDRT sense of a discourse label (None for argument labels)."""
    return None if label in ARGUMENT_LABELS else Sense(label.value)


def node_labels(label: RelationLabel) -> tuple[Label, ...]:
    """All Neo4j labels of a relation node of ``label``, most specific first."""
    cls = ontology_class(label)
    return (cls, *LABEL_ANCESTORS[cls])


def from_relation(kind: str, sense_name: str | None = None) -> RelationLabel:
    """The label of a stored relation, from its most specific class and (discourse) sense.

    The inverse of :func:`ontology_class` / :func:`sense`, used to turn gold relations into
    training targets.

    Raises:
        OntologyError: The class has no label (``Illocution``, ``SameUnit`` ...), or a discourse
            relation has no known sense.
    """
    if kind == Label.DiscourseRelation.value and sense_name is not None:
        try:
            return RelationLabel(Sense(sense_name).value)
        except ValueError as e:
            raise OntologyError(f"unknown discourse sense {sense_name!r}") from e
    for label, cls in ARGUMENT_LABELS.items():
        if cls.value == kind:
            return label
    raise OntologyError(f"relation class {kind!r} (sense {sense_name!r}) has no relation label")


def scheme_label(corpus: str, raw: str) -> RelationLabel:
    """The relation label of a corpus-scheme relation (QT30 ``RA`` -> support, M-Arg ``Neither`` -> none).

    Read from the ontology's scheme mappings (:data:`ontology.terms.SCHEME_TERMS`), so no module
    keeps its own copy of what a scheme's labels mean.

    Raises:
        OntologyError: ``raw`` is not a relation of ``corpus``'s scheme.
    """
    for term in SCHEME_TERMS:
        if term.corpus == corpus and term.raw == raw:
            if term.sense is not None:
                return RelationLabel(term.sense.value)
            for label, cls in ARGUMENT_LABELS.items():
                if cls == term.label:
                    return label
    raise OntologyError(f"{raw!r} is not a relation of the {corpus} scheme")


def scheme_raw(corpus: str, label: RelationLabel) -> str:
    """The label ``corpus``'s scheme writes for ``label`` (support in M-Arg -> ``Support``).

    Raises:
        OntologyError: The scheme has no relation of that label.
    """
    for term in SCHEME_TERMS:
        if term.corpus == corpus and term.sense is None and ARGUMENT_LABELS.get(label) == term.label:
            return term.raw
    raise OntologyError(f"the {corpus} scheme has no {label.value} relation")


def scheme_class_of(corpus: str, raw: str | None, label: RelationLabel) -> str | None:
    """The corpus-scheme class (IRI) of a relation ``label`` that ``corpus``'s scheme writes ``raw``.

    What a gold relation of that corpus carries as ``scheme_class``, so that a prediction can be
    found by the same scheme class (QT30 ``CA`` predicted between QT30 propositions). ``None`` when
    ``raw`` is missing, is not a relation of that scheme, or means another relation than ``label``
    (a model's name for its label in another scheme).
    """
    if raw is None:
        return None
    try:
        named = scheme_label(corpus, raw)
    except OntologyError:
        return None  # unknown to the scheme, or a term that is no relation (a QT30 YA, a Sci-Arg claim)
    if named != label:
        return None
    return next(term.iri for term in SCHEME_TERMS if term.corpus == corpus and term.raw == raw)
