"""The ontology: HermiT consistency, the declared-terms contract with the store, documentation."""

from __future__ import annotations

import pytest
from rdflib import OWL, RDF, RDFS, Graph, Literal, URIRef

from ontology import codegen, records
from ontology.errors import OntologyError
from ontology.formats.registry import CORPORA
from ontology.rdf import PREFIXES, load_vocabulary
from ontology.reasoning import ReasonerReport, check_consistency, run_hermit
from ontology.terms import LABEL_IRI, PROP_IRI, REL_TYPE_IRI, SCHEME_TERMS, SENSE_IRI, Label, Prop, RelType

AW = PREFIXES["aw"]
OURS = tuple(iri for name, iri in PREFIXES.items() if name not in ("owl", "rdf", "rdfs", "xsd"))


@pytest.fixture(scope="module")
def hermit() -> ReasonerReport:
    return check_consistency()


def _declared(g: Graph, annotation: str) -> dict[str, str]:
    return {str(o): str(s) for s, o in g.subject_objects(URIRef(AW + annotation))}


# -- reasoning -------------------------------------------------------------------------------------


@pytest.mark.slow  # the OWL reasoner (HermiT) runs in a JVM: half a minute or more
def test_hermit_says_consistent_and_coherent(hermit: ReasonerReport) -> None:
    assert hermit.consistent
    assert hermit.unsatisfiable == ()
    assert hermit.classes >= 90


@pytest.mark.slow  # the OWL reasoner (HermiT) runs in a JVM: half a minute or more
def test_hermit_catches_an_inconsistent_instance() -> None:
    # Support and Attack are disjoint; sciarg:contradicts is Attack, qt30:RA is Support.
    data = Graph()
    x = URIRef("https://w3id.org/argweb/data/test:x")
    data.add((x, RDF.type, URIRef(PREFIXES["sciarg"] + "contradicts")))
    data.add((x, RDF.type, URIRef(PREFIXES["qt30"] + "RA")))
    report = run_hermit(data=[data])
    assert not report.consistent
    with pytest.raises(OntologyError, match="inconsistent"):
        check_consistency(data=[data])


@pytest.mark.slow  # the OWL reasoner (HermiT) runs in a JVM: half a minute or more
def test_materialised_closure_equals_what_hermit_infers(hermit: ReasonerReport) -> None:
    vocab = load_vocabulary()
    ours = {c: closure - {c} for c, closure in vocab.classes.items() if c.startswith(OURS)}
    inferred = {c: ups for c, ups in hermit.ancestors.items() if c.startswith(OURS)}
    assert ours.keys() == inferred.keys()
    diff = {c: (ours[c] ^ inferred[c]) for c in ours if ours[c] != inferred[c]}
    assert diff == {}
    # The headline alignment: one query class finds every scheme's attacks.
    attack = AW + "Attack"
    for scheme_class in ("sciarg#contradicts", "m-arg#Attack", "qt30#CA"):
        assert attack in vocab.classes[f"https://w3id.org/argweb/scheme/{scheme_class}"]


def test_mappings_of_the_issue(onto: Graph) -> None:
    sciarg, molweni, stac, marg = (PREFIXES[p] for p in ("sciarg", "molweni", "stac", "marg"))
    assert (URIRef(sciarg + "contradicts"), OWL.equivalentClass, URIRef(AW + "Attack")) in onto
    assert (URIRef(sciarg + "data"), RDFS.subClassOf, URIRef(AW + "Premise")) in onto
    assert (URIRef(sciarg + "semantically_same"), RDFS.subClassOf, URIRef(AW + "Rephrase")) in onto
    assert (URIRef(molweni + "QAP"), OWL.equivalentClass, URIRef(stac + "Question_answer_pair")) in onto
    assert (URIRef(marg + "Neither"), RDFS.subClassOf, URIRef(AW + "NonRelation")) in onto
    assert (URIRef(stac + "x"), OWL.equivalentProperty, URIRef(molweni + "x")) in onto


# -- documentation ---------------------------------------------------------------------------------


def test_every_term_has_an_english_label_and_comment(onto: Graph) -> None:
    kinds = (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty, OWL.AnnotationProperty, OWL.Ontology)
    terms = {s for kind in kinds for s in onto.subjects(RDF.type, kind) if isinstance(s, URIRef)}
    terms |= {s for s in onto.subjects(RDF.type, URIRef(AW + "AnnotationScheme")) if isinstance(s, URIRef)}
    assert len(terms) > 150
    missing = []
    for term in terms:
        for prop in (RDFS.label, RDFS.comment):
            values = [v for v in onto.objects(term, prop) if isinstance(v, Literal) and v.language == "en"]
            if not values or not str(values[0]).strip():
                missing.append(f"{term} {prop}")
    assert missing == []


def test_no_iri_is_two_kinds_of_property(onto: Graph) -> None:
    kinds = (OWL.ObjectProperty, OWL.DatatypeProperty, OWL.AnnotationProperty)
    seen: dict[URIRef, list[URIRef]] = {}
    for kind in kinds:
        for s in onto.subjects(RDF.type, kind):
            seen.setdefault(URIRef(str(s)), []).append(kind)
    assert {s: k for s, k in seen.items() if len(k) > 1} == {}


def test_generated_terms_are_up_to_date() -> None:
    assert codegen.render() == codegen.TERMS_FILE.read_text(encoding="utf-8"), "run python -m ontology.codegen"


# -- the declared-terms contract -------------------------------------------------------------------


def _node_record_classes() -> list[type[records.NodeRecord]]:
    out: list[type[records.NodeRecord]] = []
    todo: list[type[records.NodeRecord]] = [records.NodeRecord]
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo.extend(cls.__subclasses__())
    return [c for c in out if c.__module__ == records.__name__]


def test_every_term_the_code_writes_is_declared(onto: Graph) -> None:
    labels = _declared(onto, "neo4jLabel")
    types = _declared(onto, "neo4jType")
    props = _declared(onto, "neo4jProperty")
    assert {label.value for label in Label} == set(labels)
    assert {t.value for t in RelType} == set(types)
    assert {p.value for p in Prop} == set(props)
    assert {label.value: iri for label, iri in LABEL_IRI.items()} == labels
    assert {t.value: iri for t, iri in REL_TYPE_IRI.items()} == types
    assert {p.value: iri for p, iri in PROP_IRI.items()} == props
    datatype_props = {str(s) for s in onto.subjects(RDF.type, OWL.DatatypeProperty)}
    assert set(props.values()) <= datatype_props
    object_props = {str(s) for s in onto.subjects(RDF.type, OWL.ObjectProperty)}
    assert set(types.values()) <= object_props

    fields: dict[str, str] = {}
    for cls in _node_record_classes():
        for name in cls.model_fields:
            if name not in cls.NON_PROPERTIES:
                fields[name] = cls.__name__
    undeclared = {name: owner for name, owner in fields.items() if name not in props}
    assert undeclared == {}
    edge_keys = set(records.EdgeRecord(type=RelType.AIF_EDGE, source="a", target="b", corpus="c", id="e").properties())
    assert edge_keys | {"batch"} <= set(props)
    # Keys the store itself writes (ingest bookkeeping).
    assert {"batch", "status", "ingest_run", "counts"} <= set(props)


def test_every_scheme_class_and_sense_is_declared_both_ways(onto: Graph) -> None:
    classes = {str(s) for s in onto.subjects(RDF.type, OWL.Class)}
    in_scheme = {str(s) for s in onto.subjects(URIRef(AW + "inScheme"), None) if (s, RDF.type, OWL.Class) in onto}
    assert {t.iri for t in SCHEME_TERMS} == in_scheme
    assert in_scheme <= classes
    assert set(SENSE_IRI.values()) <= classes
    scheme_corpora = {str(o) for o in onto.objects(None, URIRef(AW + "schemeCorpus"))}
    assert {t.corpus for t in SCHEME_TERMS} <= scheme_corpora
    # Every corpus the registry loads has its scheme in the ontology.
    assert set(CORPORA) <= scheme_corpora
