"""The vocabulary a real ingest writes is the ontology's."""

from __future__ import annotations

from pathlib import Path

from neo4j import Driver
from rdflib import OWL, RDF, Graph, URIRef

from graphstore import cypher
from graphstore.export import GraphReader
from graphstore.store import GraphStore
from ontology.rdf import write_export
from ontology.reasoning import check_consistency
from ontology.terms import SCHEME_TERMS, Label, Prop, RelType, Sense
from tests.rdf_support import ingest_samples


def test_everything_the_loaders_wrote_is_declared(driver: Driver, onto: Graph) -> None:
    loaded = ingest_samples(driver)
    assert {"molweni", "stac", "qt30"} <= set(loaded)
    store = GraphStore(driver)
    labels = {r["label"] for r in store.run(cypher.labels_in_use())}
    types = {r["type"] for r in store.run(cypher.rel_types_in_use())}
    node_keys = {r["key"] for r in store.run(cypher.node_keys_in_use())}
    rel_keys = {r["key"] for r in store.run(cypher.rel_keys_in_use())}
    assert labels <= {label.value for label in Label}
    assert types <= {t.value for t in RelType}
    assert (node_keys | rel_keys) <= {p.value for p in Prop}
    assert {"Locution", "Proposition", "Support", "Attack", "DiscourseRelation", "Illocution"} <= labels

    by_iri = {t.iri: t for t in SCHEME_TERMS}
    used = store.run(cypher.scheme_classes_in_use())
    assert used
    for row in used:
        if row["scheme_class"] is not None:
            term = by_iri.get(row["scheme_class"])
            assert term is not None, row
            assert term.corpus == row["corpus"], row
            assert (URIRef(term.iri), RDF.type, OWL.Class) in onto
        if row["sense"] is not None:
            assert row["sense"] in {s.value for s in Sense}, row


def test_exported_sample_is_consistent_with_the_ontology(driver: Driver, tmp_path: Path) -> None:
    """HermiT on the ontology plus real instances: disjointness and ranges hold for loaded data."""
    ingest_samples(driver)
    reader = GraphReader(driver, page_size=500)
    out = tmp_path / "sample.nt"
    report = write_export(out, reader.nodes(), reader.relationships(), include_ontology=False)
    assert report.nodes > 300
    hermit = check_consistency(data=[out])
    assert hermit.consistent
    assert hermit.individuals == report.nodes
