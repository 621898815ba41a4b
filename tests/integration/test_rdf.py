"""RDF export of a real Neo4j graph: paging, corpus filter and the CLI."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyoxigraph as ox
import pytest
from neo4j import Driver
from typer.testing import CliRunner

from graphstore.export import GraphReader
from graphstore.store import GraphStore
from ontology.rdf import ONTOLOGY_IRI, RdfMapper, write_export
from ontology.sparql import python_value
from ontology.terms import Label
from ontology.views import NodeView, RelationView
from tests.conftest import PASSWORD
from tests.ontology.test_rdf import AW, BASE, _rel_counts
from tests.rdf_support import PREDICTION_NODES, ingest_samples


def _node(item: NodeView | RelationView) -> NodeView:
    return item.node if isinstance(item, RelationView) else item


@pytest.fixture(scope="module")
def sample(driver: Driver) -> dict[str, int]:
    return ingest_samples(driver)


def test_reader_pages_through_every_node_and_relationship_once(driver: Driver, sample: dict[str, int]) -> None:
    whole = GraphReader(driver, page_size=10_000)
    paged = GraphReader(driver, page_size=7)
    nodes = [r.id for r in paged.nodes()]
    assert nodes == sorted(nodes)
    assert len(nodes) == len(set(nodes)) == whole.size().nodes == sum(sample.values()) + PREDICTION_NODES
    assert nodes == [r.id for r in whole.nodes()]
    edges = [(e.source, e.type, e.target) for e in paged.relationships()]
    assert len(edges) == len(set(edges)) == whole.size().relationships
    assert Counter(t for _, t, _ in edges) == Counter({r["type"]: r["n"] for r in _rel_counts(driver)})
    one = GraphReader(driver, page_size=5, corpus="stac")
    assert {_node(r).corpus for r in one.nodes()} == {"stac"}
    assert sum(1 for _ in one.nodes()) == sample["stac"] == one.size().nodes
    assert {e.corpus for e in one.relationships()} == {"stac"}


def test_relation_rows_carry_their_aif_ends(driver: Driver, sample: dict[str, int]) -> None:
    rows = {r.id: r for r in GraphReader(driver).nodes()}
    rel = next(r for k, r in rows.items() if k.startswith("molweni:") and ":rel:" in k)
    assert isinstance(rel, RelationView)
    assert len(rel.sources) == 1 and len(rel.targets) == 1
    assert all(":edu:" in x for x in (*rel.sources, *rel.targets))
    predicted = rows["pred:rgcn-sample:0"]
    assert isinstance(predicted, RelationView)
    assert predicted.origin == "predicted" and predicted.model == "rgcn-link"
    assert (predicted.score, predicted.run_id, predicted.model_version) == (0.93, "rgcn-sample", "0.3.1")
    assert len(predicted.sources) == 1 and len(predicted.targets) == 1
    locutions = [r for r in rows.values() if isinstance(r, NodeView) and r.has(Label.Locution)]
    assert locutions and all(isinstance(r, NodeView) for r in rows.values() if ":edu:" in r.id)


def test_export_round_trips_every_node_property_and_relationship(
    driver: Driver, sample: dict[str, int], tmp_path: Path
) -> None:
    reader = GraphReader(driver, page_size=50)
    out = tmp_path / "sample.nq"
    mapper = RdfMapper(BASE)
    report = write_export(out, reader.nodes(), reader.relationships(), fmt="nq", mapper=mapper)
    store = ox.Store()
    store.load(path=str(out), format=ox.RdfFormat.N_QUADS)
    assert len(store) == report.triples
    query = "SELECT ?id WHERE { ?x <" + AW + "id> ?id }"
    result = store.query(query, use_default_graph_as_union=True)
    assert isinstance(result, ox.QuerySolutions)
    ids = {str(python_value(s["id"])) for s in result}
    assert ids == {r.id for r in reader.nodes()}
    size = reader.size()
    assert report.nodes == size.nodes and report.relationships == size.relationships
    # Every stored property value comes back from its own resource.
    for row in map(_node, reader.nodes()):
        for key, value in row.props.items():
            prop, lit = mapper.literal(key, value, row.id)
            assert ox.Quad(mapper.resource(row.id), prop, lit, mapper.graph(row.props.get("corpus"))) in store
    # Every relationship is a triple in its corpus graph.
    for edge in reader.relationships():
        t = next(mapper.edge_triples(edge))
        assert ox.Quad(t.subject, t.predicate, t.object, mapper.graph(edge.corpus)) in store
    graphs = {str(g.value) for g in store.named_graphs()}
    assert graphs == {ONTOLOGY_IRI} | {f"{BASE}graph/{c}" for c in sample}


def test_cli_export_load_and_query(
    driver: Driver, sample: dict[str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from api.cli.main import app

    uri = driver.get_server_info().address
    monkeypatch.setenv("ARGWEB_NEO4J_URI", f"bolt://{uri[0]}:{uri[1]}")
    monkeypatch.setenv("ARGWEB_NEO4J_PASSWORD", PASSWORD)
    monkeypatch.setenv("ARGWEB_DATA_DIR", str(tmp_path / "data"))
    runner = CliRunner()
    out = tmp_path / "graph.ttl"
    result = runner.invoke(app, ["export", "rdf", str(out), "--base", BASE])
    assert result.exit_code == 0, result.output
    assert out.is_file() and (tmp_path / "data" / "oxigraph").is_dir()
    result = runner.invoke(app, ["sparql", "SELECT (COUNT(*) AS ?n) WHERE { ?x a aw:Attack }", "--format", "json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    # The export carries predicted relations too, so compare with every Attack node, not only gold ones.
    attacks = GraphStore(driver).stats(include_predicted=True)["labels"]["Attack"]
    assert int(body["results"]["bindings"][0]["n"]["value"]) == attacks > 0
    query = tmp_path / "q.rq"
    query.write_text("SELECT ?c (COUNT(*) AS ?n) WHERE { ?x a aw:Corpus ; aw:id ?c } GROUP BY ?c ORDER BY ?c")
    result = runner.invoke(app, ["sparql", "--file", str(query), "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "c,n"
    assert sorted(line.split(",")[0] for line in result.stdout.splitlines()[1:]) == sorted(sample)
    result = runner.invoke(app, ["sparql", "SELECT ?c WHERE { ?x a aw:Corpus ; aw:id ?c }"])
    assert result.exit_code == 0 and f"{len(sample)} row(s)" in result.stdout
    # Only one corpus, N-Quads, not loaded: the store keeps the previous export.
    nq = tmp_path / "stac.nq"
    result = runner.invoke(app, ["export", "rdf", str(nq), "--corpus", "stac", "--no-load", "--base", BASE])
    assert result.exit_code == 0, result.output
    graphs = {str(q.graph_name) for q in ox.parse(path=nq)}
    assert graphs == {f"<{ONTOLOGY_IRI}>", f"<{BASE}graph/stac>"}
    result = runner.invoke(app, ["sparql", "ASK { ?x aw:corpus 'molweni' }"])
    assert result.stdout.strip() == "true"
    result = runner.invoke(app, ["rdf", "load", str(nq)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["sparql", "ASK { ?x aw:corpus 'molweni' }", "--format", "json"])
    assert json.loads(result.stdout) == {"head": {}, "boolean": False}
    result = runner.invoke(app, ["sparql", "INSERT DATA { <urn:a> <urn:b> <urn:c> }"])
    assert result.exit_code == 2 and "refused" in result.output
