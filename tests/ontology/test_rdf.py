"""RDF export: IRIs, datatypes, materialised mappings, streaming reads and the CLI."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
from neo4j import Driver

from graphstore import cypher
from graphstore.store import GraphStore
from ontology.errors import OntologyError
from ontology.rdf import ONTOLOGY_IRI, PREFIXES, Exported, RdfMapper, ontology_triples, write_export
from ontology.views import EdgeView, NodeView, RelationView

AW, AIF, XSD = PREFIXES["aw"], PREFIXES["aif"], PREFIXES["xsd"]
SCI, MARG, QT30 = PREFIXES["sciarg"], PREFIXES["marg"], PREFIXES["qt30"]
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
BASE = "https://example.org/argweb/"


def node(
    node_id: str,
    labels: list[str],
    props: dict[str, Any],
    premises: tuple[str, ...] = (),
    conclusions: tuple[str, ...] = (),
) -> Exported:
    """A node view, or a relation view when it has premises or conclusions."""
    view = NodeView(node_id, tuple(labels), props)
    return RelationView(view, premises, conclusions) if premises or conclusions else view


def _triples(items: Iterator[ox.Triple]) -> set[tuple[str, str, str]]:
    return {(str(t.subject), str(t.predicate), str(t.object)) for t in items}


def _types(mapper: RdfMapper, row: Exported) -> set[str]:
    return {
        t.object.value
        for t in mapper.node_triples(row)
        if t.predicate.value == RDF_TYPE and isinstance(t.object, ox.NamedNode)
    }


def _literals(mapper: RdfMapper, row: Exported) -> set[tuple[str, str, str]]:
    return {
        (t.predicate.value, t.object.value, t.object.datatype.value)
        for t in mapper.node_triples(row)
        if isinstance(t.object, ox.Literal)
    }


# -- pure mapping ----------------------------------------------------------------------------------


def test_iris_are_stable_quoted_and_reversible() -> None:
    mapper = RdfMapper(BASE)
    for node_id in ("molweni:1056:edu:0", "stac:s1-league1-game3~2:rel:4", "qt30:nodeset1:a b/c?d#e", "x:é"):
        iri = mapper.iri(node_id)
        assert iri == RdfMapper(BASE).iri(node_id)
        assert iri.startswith(BASE)
        ox.NamedNode(iri)  # valid IRI
        assert not any(c in iri[len(BASE) :] for c in " /?#")
        assert mapper.node_id(iri) == node_id
    assert mapper.iri("molweni:1:edu:0") == BASE + "molweni:1:edu:0"
    with pytest.raises(OntologyError, match="not under"):
        mapper.node_id("https://elsewhere.org/x")


@pytest.mark.parametrize("base", ["not an iri", "https://example.org/no-separator", "relative/", "http://a b/"])
def test_bad_base_iri_is_refused(base: str) -> None:
    with pytest.raises(OntologyError, match="base IRI"):
        RdfMapper(base)


@pytest.mark.parametrize(
    ("corpus", "labels", "scheme_class"),
    [
        ("sciarg", ["Node", "Relation", "SchemeNode", "Attack"], SCI + "contradicts"),
        ("m-arg", ["Node", "Relation", "SchemeNode", "Attack"], MARG + "Attack"),
        ("qt30", ["Node", "Relation", "SchemeNode", "Attack"], QT30 + "CA"),
    ],
)
def test_every_scheme_attack_is_an_attack_and_an_aif_conflict(
    corpus: str, labels: list[str], scheme_class: str
) -> None:
    row = node(f"{corpus}:r1", labels, {"id": f"{corpus}:r1", "corpus": corpus, "scheme_class": scheme_class})
    types = _types(RdfMapper(BASE), row)
    assert {AW + "Attack", AIF + "CA-node", AIF + "S-node", AW + "Relation", scheme_class} <= types
    # Equivalent scheme classes are materialised too (sciarg:contradicts = marg:Attack = qt30:CA).
    assert {SCI + "contradicts", MARG + "Attack", QT30 + "CA"} <= types
    assert AW + "Support" not in types


def test_sense_and_scheme_class_materialise_the_sdrt_alignment() -> None:
    row = node(
        "molweni:1:rel:0",
        ["Node", "Relation", "SchemeNode", "Transition", "DiscourseRelation"],
        {"corpus": "molweni", "scheme_class": PREFIXES["molweni"] + "QAP", "sense": "QuestionAnswerPair"},
    )
    types = _types(RdfMapper(BASE), row)
    assert {AW + "QuestionAnswerPair", PREFIXES["stac"] + "Question_answer_pair", AIF + "TA-node"} <= types
    assert AW + "Comment" not in types


def test_properties_map_to_declared_datatype_properties() -> None:
    mapper = RdfMapper(BASE)
    row = node(
        "m-arg:n00001:L",
        ["Node", "Locution"],
        {
            "id": "m-arg:n00001:L",
            "corpus": "m-arg",
            "position": 3,
            "start_time": 1.5,
            "tokens": ["I", "said", '"no"'],
            "highlights": [0.0, 0.5, 1.0],
            "text": 'I said "no"\nthen left',
        },
    )
    s = BASE + "m-arg:n00001:L"
    got = _literals(mapper, row)
    assert (AW + "position", "3", XSD + "integer") in got
    assert (AW + "startTime", "1.5", XSD + "double") in got
    assert (AW + "tokens", json.dumps(["I", "said", '"no"'], separators=(",", ":")), XSD + "string") in got
    assert (AW + "highlights", "[0.0,0.5,1.0]", XSD + "string") in got
    assert (AW + "text", 'I said "no"\nthen left', XSD + "string") in got
    assert all(str(t.subject) == f"<{s}>" for t in mapper.node_triples(row))
    judgement = node("m-arg:j", ["Node", "Judgement"], {"corpus": "m-arg", "tainted": False, "trust": 1})
    got = _literals(mapper, judgement)
    assert (AW + "tainted", "false", XSD + "boolean") in got
    assert (AW + "trust", "1.0", XSD + "double") in got


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (node("x:1", ["Node", "Gadget"], {"corpus": "x"}), "label 'Gadget'"),
        (node("x:1", ["Node"], {"corpus": "x", "colour": "red"}), "property 'colour'"),
        (node("x:1", ["Node"], {"corpus": "x", "scheme_class": "https://x.org/C"}), "class https://x.org/C"),
        (node("x:1", ["Node"], {"corpus": "x", "sense": "Gossip"}), "sense 'Gossip'"),
        (node("x:1", ["Node"], {"corpus": "x", "position": "third"}), "xsd:integer"),
        (node("x:1", ["Node"], {"corpus": "x", "confidence": [1, 2]}), "xsd:double"),
    ],
)
def test_undeclared_terms_and_ill_typed_values_are_errors_naming_the_node(row: Exported, message: str) -> None:
    with pytest.raises(OntologyError, match="node x:1") as info:
        list(RdfMapper(BASE).node_triples(row))
    assert message in str(info.value)
    with pytest.raises(OntologyError, match="type not declared"):
        list(RdfMapper(BASE).edge_triples(EdgeView("a", "KNOWS", "b")))


def test_relations_link_premises_and_conclusions_with_scheme_roles() -> None:
    mapper = RdfMapper(BASE)
    sciarg = node(
        "sciarg:A01:R1",
        ["Node", "Relation", "SchemeNode", "Support"],
        {"corpus": "sciarg", "scheme_class": SCI + "supports"},
        premises=("sciarg:A01:T2",),
        conclusions=("sciarg:A01:T1",),
    )
    got = _triples(mapper.node_triples(sciarg))
    r, t1, t2 = (f"<{BASE}sciarg:A01:{k}>" for k in ("R1", "T1", "T2"))
    assert (r, f"<{AW}premise>", t2) in got
    assert (r, f"<{SCI}arg1>", t2) in got
    assert (r, f"<{AW}conclusion>", t1) in got
    assert (r, f"<{SCI}arg2>", t1) in got
    molweni = node(
        "molweni:1:rel:0",
        ["Node", "Relation", "SchemeNode", "Transition", "DiscourseRelation"],
        {"corpus": "molweni", "sense": "Comment"},
        premises=("molweni:1:edu:0",),
        conclusions=("molweni:1:edu:1",),
    )
    got = _triples(mapper.node_triples(molweni))
    r, x = f"<{BASE}molweni:1:rel:0>", f"<{BASE}molweni:1:edu:0>"
    # stac:x is owl:equivalentProperty molweni:x, so both are asserted.
    assert {(r, f"<{PREFIXES['molweni']}x>", x), (r, f"<{PREFIXES['stac']}x>", x)} <= got
    assert not any(p == f"<{SCI}arg1>" for _, p, _ in got)


def test_edges_map_to_object_properties() -> None:
    got = _triples(RdfMapper(BASE).edge_triples(EdgeView("qt30:m:1", "SPOKEN_BY", "qt30:person:Ann", "qt30")))
    assert got == {(f"<{BASE}qt30:m:1>", f"<{AW}spokenBy>", f"<{BASE}qt30:person:Ann>")}


# -- streaming writer ------------------------------------------------------------------------------

ROWS = [
    node("qt30:m", ["Node", "Discourse", "Dialogue"], {"id": "qt30:m", "corpus": "qt30"}),
    node("qt30:m:1", ["Node", "Locution"], {"id": "qt30:m:1", "corpus": "qt30", "text": "A : yes"}),
    node("sciarg:d", ["Node", "Discourse", "Document"], {"id": "sciarg:d", "corpus": "sciarg"}),
]
EDGES = [EdgeView("qt30:m:1", "PART_OF", "qt30:m", "qt30")]


@pytest.mark.parametrize("fmt", ["nt", "ttl", "nq"])
def test_write_export_formats_parse_back(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"x.{fmt}"
    report = write_export(out, iter(ROWS), iter(EDGES), fmt=fmt, mapper=RdfMapper(BASE))
    parsed = list(ox.parse(path=out))
    assert len(parsed) == report.triples
    assert report.nodes == 3 and report.relationships == 1
    assert report.ontology_triples == sum(1 for _ in ontology_triples())
    graphs = Counter(str(q.graph_name) for q in parsed)
    if fmt == "nq":
        assert set(graphs) == {f"<{ONTOLOGY_IRI}>", f"<{BASE}graph/qt30>", f"<{BASE}graph/sciarg>"}
        assert graphs[f"<{ONTOLOGY_IRI}>"] == report.ontology_triples
    else:
        assert set(graphs) == {"DEFAULT"}
    assert not list(tmp_path.glob(".*.part"))


def test_failed_export_leaves_no_file(tmp_path: Path) -> None:
    out = tmp_path / "x.nt"
    bad = [*ROWS, node("x:bad", ["Node"], {"corpus": "x", "colour": "red"})]
    with pytest.raises(OntologyError, match="node x:bad"):
        write_export(out, iter(bad), iter(EDGES), mapper=RdfMapper(BASE))
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(OntologyError, match="format"):
        write_export(out, iter(ROWS), iter(EDGES), fmt="rdfxml")


# -- from Neo4j ------------------------------------------------------------------------------------


def _rel_counts(driver: Driver) -> list[dict[str, object]]:
    rows = GraphStore(driver).run(cypher.rel_type_counts())
    out: Counter[str] = Counter()
    for row in rows:
        out[str(row["type"])] += int(row["n"])
    return [{"type": k, "n": v} for k, v in out.items()]


# -- CLI -------------------------------------------------------------------------------------------
