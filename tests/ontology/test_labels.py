"""The relation label space is checked against the ontology; prediction records validate their input."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ontology.errors import LoaderError, OntologyError
from ontology.labels import (
    ARGUMENT_LABELS,
    DISCOURSE_LABELS,
    RelationLabel,
    from_relation,
    is_discourse,
    node_labels,
    ontology_class,
    relation_label,
    scheme_class_of,
    sense,
)
from ontology.records import (
    CorpusBundle,
    CorpusRecord,
    PredictedRelation,
    PredictionRun,
    RelationRecord,
    new_run_id,
    relation_from_scheme,
    scheme_term,
)
from ontology.terms import LABEL_ANCESTORS, SCHEME_TERMS, Label, Sense


def test_every_label_maps_onto_a_declared_class_or_sense() -> None:
    assert len(RelationLabel) == 5 + 16
    assert set(DISCOURSE_LABELS) == {RelationLabel(s.value) for s in Sense}
    for label in RelationLabel:
        cls = ontology_class(label)
        assert cls in LABEL_ANCESTORS and Label.Relation in (cls, *LABEL_ANCESTORS[cls])
        if is_discourse(label):
            assert cls is Label.DiscourseRelation and sense(label) == Sense(label.value)
        else:
            assert sense(label) is None and label.value.islower()
    assert ontology_class(RelationLabel.SUPPORT) is Label.Support
    assert ontology_class(RelationLabel.ATTACK) is Label.Attack
    assert ontology_class(RelationLabel.REPHRASE) is Label.Rephrase
    assert ontology_class(RelationLabel.NONE) is Label.NonRelation
    assert ontology_class(RelationLabel.SAME_UNIT) is Label.SameUnit
    assert node_labels(RelationLabel.SUPPORT) == (Label.Support, Label.SchemeNode, Label.Relation, Label.Node)
    assert node_labels(RelationLabel.Elaboration)[0] is Label.DiscourseRelation


def test_every_gold_scheme_class_has_a_label_and_back() -> None:
    # Gold relations turn into training targets through from_relation: every argument or
    # discourse scheme class of every corpus must have one.
    for term in SCHEME_TERMS:
        if term.label in set(ARGUMENT_LABELS.values()) or term.label is Label.DiscourseRelation:
            label = from_relation(term.label.value, term.sense.value if term.sense else None)
            assert ontology_class(label) is term.label, term
    for label in RelationLabel:
        s = sense(label)
        assert from_relation(ontology_class(label).value, s.value if s else None) is label
    with pytest.raises(OntologyError, match="has no relation label"):
        from_relation("Illocution")


def test_parsing_labels() -> None:
    assert relation_label("Support") is RelationLabel.SUPPORT
    assert relation_label("QuestionAnswerPair") is RelationLabel.QuestionAnswerPair
    with pytest.raises(OntologyError, match=r"unknown relation label 'QAP'; labels: support, attack"):
        relation_label("QAP")


def test_prediction_records_validate() -> None:
    run = PredictionRun(model="rgcn", model_version="1.0", task="relations", parameters={"k": [1, 2]})
    assert run.run_id == run.run_id.strip() and run.node_id == f"pred:{run.run_id}"
    assert run.relation_id(3) == f"pred:{run.run_id}:3" and run.created_at.endswith("Z")
    assert new_run_id() != new_run_id()
    with pytest.raises(ValidationError, match="run_id"):
        PredictionRun(run_id="a b:c", model="m", model_version="1", task="t")
    with pytest.raises(ValidationError, match="plain JSON"):
        PredictionRun(model="m", model_version="1", task="t", parameters={"x": object()})
    with pytest.raises(ValidationError, match="model_version"):
        PredictionRun(model="m", model_version="", task="t")
    ok = PredictedRelation(source="a", target="b", label="Elaboration", score=1.0)  # type: ignore[arg-type]
    assert ok.label is RelationLabel.Elaboration
    for bad in (1.5, -0.1, float("nan")):
        with pytest.raises(ValidationError, match="score"):
            PredictedRelation(source="a", target="b", label=RelationLabel.SUPPORT, score=bad)
    with pytest.raises(ValidationError, match="label"):
        PredictedRelation(source="a", target="b", label="supports", score=0.5)  # type: ignore[arg-type]


def test_gold_and_predicted_relations_are_told_apart_by_their_properties() -> None:
    common = {"id": "x:r", "corpus": "x", "kind": Label.Support}
    with pytest.raises(ValidationError, match="a gold relation carries no model output"):
        RelationRecord(**common, score=0.5)
    with pytest.raises(ValidationError, match="a predicted relation needs"):
        RelationRecord(**common, origin="predicted", score=0.5)
    provenance = {"model": "m", "model_version": "1", "run_id": "r"}
    with pytest.raises(ValidationError, match="not an annotator confidence"):
        RelationRecord(**common, origin="predicted", score=0.5, confidence=0.5, **provenance)
    RelationRecord(**common, origin="predicted", score=0.5, **provenance)
    RelationRecord(**common, confidence=0.8)  # the crowd aggregate of a gold relation


def test_a_corpus_bundle_refuses_model_output() -> None:
    predicted = RelationRecord(
        id="x:r",
        corpus="x",
        kind=Label.Support,
        origin="predicted",
        score=0.5,
        model="m",
        model_version="1",
        run_id="r",
    )
    bundle = CorpusBundle(CorpusRecord(id="x", corpus="x", name="x"), [predicted], origin="test")
    with pytest.raises(LoaderError, match=r"predicted relations \['x:r'\] in a corpus bundle"):
        bundle.validate()


def test_relation_factory_types_from_the_scheme() -> None:
    qap = relation_from_scheme("molweni", "QAP", "f.json: relation 0", id="molweni:r", corpus="molweni")
    assert (qap.kind, qap.sense, qap.scheme_label, qap.origin) == (
        Label.DiscourseRelation,
        "QuestionAnswerPair",
        "QAP",
        "gold",
    )
    assert qap.scheme_class == "https://w3id.org/argweb/scheme/molweni#QAP"
    ra = relation_from_scheme("qt30", "RA", "m.json: node 7", scheme_label="Default Inference", id="q:7", corpus="q")
    # An AIF S-node that names no scheme keeps no scheme label (it is not its node type).
    bare = relation_from_scheme("qt30", "CA", "m.json: node 8", scheme_label=None, id="q:8", corpus="q")
    assert (bare.kind, bare.scheme_label) == (Label.Attack, None)
    assert (ra.kind, ra.scheme_label, ra.sense) == (Label.Support, "Default Inference", None)
    with pytest.raises(LoaderError, match=r"^f\.json: relation 1: unknown molweni label 'Foo'"):
        relation_from_scheme("molweni", "Foo", "f.json: relation 1", id="molweni:r1", corpus="molweni")
    with pytest.raises(LoaderError, match=r"(?s)^f\.json: relation 2: .*votes"):
        relation_from_scheme("m-arg", "Support", "f.json: relation 2", id="m:r", corpus="m", votes="many")


def test_scheme_labels_come_from_the_ontology_mappings() -> None:
    from ontology.labels import scheme_label, scheme_raw

    assert [scheme_label("qt30", t) for t in ("RA", "CA", "MA")] == [
        RelationLabel.SUPPORT,
        RelationLabel.ATTACK,
        RelationLabel.REPHRASE,
    ]
    assert scheme_label("sciarg", "parts_of_same") is RelationLabel.SAME_UNIT
    assert scheme_label("m-arg", "Neither") is RelationLabel.NONE
    assert scheme_label("molweni", "QAP") is scheme_label("stac", "Question-answer_pair")
    assert scheme_raw("m-arg", RelationLabel.ATTACK) == "Attack"
    with pytest.raises(OntologyError, match="not a relation of the qt30 scheme"):
        scheme_label("qt30", "XA")
    with pytest.raises(OntologyError, match="no rephrase relation"):
        scheme_raw("m-arg", RelationLabel.REPHRASE)


def test_a_prediction_named_in_its_corpus_scheme_gets_that_scheme_class() -> None:
    assert scheme_class_of("qt30", "CA", RelationLabel.ATTACK) == scheme_term("qt30", "CA").iri
    assert scheme_class_of("sciarg", "supports", RelationLabel.SUPPORT) == scheme_term("sciarg", "supports").iri
    # No name, a name outside the scheme, or a name that means another label: no scheme class.
    assert scheme_class_of("qt30", None, RelationLabel.ATTACK) is None
    assert scheme_class_of("qt30", "none", RelationLabel.NONE) is None
    assert scheme_class_of("qt30", "RA", RelationLabel.ATTACK) is None
    assert scheme_class_of("no-such-corpus", "CA", RelationLabel.ATTACK) is None
    # Scheme terms that are no relations.
    assert scheme_class_of("qt30", "YA", RelationLabel.SUPPORT) is None
    assert scheme_class_of("sciarg", "own_claim", RelationLabel.SUPPORT) is None
