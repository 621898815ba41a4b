"""SPARQL on the Oxigraph store: query forms, W3C result formats, refused updates, safe loads."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyoxigraph as ox
import pytest
from neo4j import Driver

from graphstore.export import GraphReader
from graphstore.store import GraphStore
from ontology.errors import ClientError, InvalidQueryError, NotFoundError
from ontology.formats.registry import CORPORA
from ontology.rdf import PREFIXES, RdfMapper, write_export
from ontology.sparql import SparqlStore, is_update, load_store, python_value, query_form, serialize_result
from tests.conftest import shared_corpora
from tests.rdf_support import ingest_samples, loader_exists

AW = PREFIXES["aw"]
SMALL = f"""
@prefix aw: <{AW}> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<urn:a> a aw:Attack ; aw:id "a" ; aw:confidence "0.5"^^xsd:double ; aw:position 3 ; aw:tainted true .
<urn:s> a aw:Support ; aw:id "s" ; aw:text "say \\"hi\\", then, go" .
"""


@pytest.fixture
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.ttl"
    path.write_text(SMALL, encoding="utf-8")
    return path


@pytest.fixture
def store(small: Path) -> SparqlStore:
    s = SparqlStore()
    assert s.add_file(small) == 8
    return s


# -- query forms and results -----------------------------------------------------------------------


def test_select_gives_python_values_with_predeclared_prefixes(store: SparqlStore) -> None:
    names, rows = store.select(
        "SELECT ?id ?c ?p ?t ?missing WHERE { ?x a aw:Attack ; aw:id ?id ; aw:confidence ?c ; "
        "aw:position ?p ; aw:tainted ?t OPTIONAL { ?x aw:model ?missing } }"
    )
    assert names == ["id", "c", "p", "t", "missing"]
    assert rows == [{"id": "a", "c": 0.5, "p": 3, "t": True, "missing": None}]
    assert python_value(ox.NamedNode("urn:x")) == "urn:x"
    assert python_value(ox.BlankNode("b1")) == "_:b1"


def test_ask_construct_describe(store: SparqlStore) -> None:
    assert store.ask("ASK { ?x a aw:Support }") is True
    assert store.ask("PREFIX aw: <%s> ASK { ?x a aw:Rephrase }" % AW) is False  # noqa: UP031
    constructed = store.query("CONSTRUCT { ?x aw:premise ?x } WHERE { ?x a aw:Attack }")
    assert isinstance(constructed, ox.QueryTriples)
    nt = serialize_result(constructed, "nt").decode()
    assert nt.strip() == f"<urn:a> <{AW}premise> <urn:a> ."
    described = serialize_result(store.query("DESCRIBE <urn:s>"), "ttl").decode()
    assert "aw:Support" in described and "aw:text" in described
    with pytest.raises(InvalidQueryError, match="expected a SELECT"):
        store.select("ASK { ?x ?p ?o }")
    with pytest.raises(InvalidQueryError, match="expected an ASK"):
        store.ask("SELECT * WHERE { ?x ?p ?o }")


def test_w3c_json_and_csv_results(store: SparqlStore) -> None:
    query = "SELECT ?id ?text WHERE { ?x aw:id ?id OPTIONAL { ?x aw:text ?text } } ORDER BY ?id"
    body = json.loads(serialize_result(store.query(query), "json"))
    assert body["head"]["vars"] == ["id", "text"]
    bindings = body["results"]["bindings"]
    assert bindings[0] == {"id": {"type": "literal", "value": "a"}}
    assert bindings[1]["text"] == {"type": "literal", "value": 'say "hi", then, go'}
    rows = list(csv.reader(io.StringIO(serialize_result(store.query(query), "csv").decode())))
    assert rows == [["id", "text"], ["a", ""], ["s", 'say "hi", then, go']]
    tsv = serialize_result(store.query(query), "tsv").decode().splitlines()
    assert tsv[0] == "?id\t?text"
    assert json.loads(serialize_result(store.query("ASK { ?x a aw:Attack }"), "json")) == {"head": {}, "boolean": True}
    with pytest.raises(ClientError, match="SELECT/ASK"):
        serialize_result(store.query(query), "ttl")
    with pytest.raises(ClientError, match="CONSTRUCT/DESCRIBE"):
        serialize_result(store.query("CONSTRUCT WHERE { ?s ?p ?o }"), "csv")


@pytest.mark.parametrize(
    "update",
    [
        "INSERT DATA { <urn:x> <urn:p> <urn:y> }",
        "delete where { ?s ?p ?o }",
        "# a comment\nPREFIX aw: <https://w3id.org/argweb/ontology#>\nBASE <http://x/>\n"
        "DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
        "CLEAR ALL",
        "DROP GRAPH <urn:g>",
        "LOAD <http://example.org/x.ttl>",
        "WITH <urn:g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
    ],
)
def test_updates_are_refused_and_change_nothing(store: SparqlStore, update: str) -> None:
    assert is_update(update)
    before = len(store)
    with pytest.raises(InvalidQueryError, match="refused"):
        store.query(update)
    assert len(store) == before


def test_query_form_and_syntax_errors(store: SparqlStore) -> None:
    assert query_form("PREFIX a: <x:>\n# hi\nselect * {}") == "SELECT"
    assert query_form("  ASK {}") == "ASK"
    assert not is_update("SELECT ?insert WHERE { ?insert ?p ?o }")
    with pytest.raises(InvalidQueryError, match="invalid SPARQL"):
        store.query("SELECT ?x WHERE { ?x ")


# -- the persistent store --------------------------------------------------------------------------


def test_load_replaces_and_a_bad_file_changes_nothing(tmp_path: Path, small: Path) -> None:
    directory = tmp_path / "ox"
    first = load_store(directory, small)
    assert first.quads == 8
    other = tmp_path / "other.nt"
    other.write_text("<urn:q> <urn:p> <urn:r> .\n", encoding="utf-8")
    assert load_store(directory, other).quads == 1
    bad = tmp_path / "bad.nt"
    bad.write_text('<urn:q> <urn:p> <urn:r> .\n<urn:q> <urn:p> "unterminated .\n', encoding="utf-8")
    with pytest.raises(ClientError, match=r"bad\.nt.*unchanged"):
        load_store(directory, bad)
    with SparqlStore(directory, read_only=True) as s:
        assert len(s) == 1
        assert s.ask("ASK { <urn:q> <urn:p> <urn:r> }")
    assert load_store(directory, small, append=True).quads == 9
    with pytest.raises(ClientError, match=r"bad\.nt"):
        load_store(directory, bad, append=True)
    with SparqlStore(directory, read_only=True) as s:
        assert len(s) == 9
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.nt", "other.nt", "ox", "small.ttl"]
    with pytest.raises(NotFoundError, match="no such file"):
        load_store(directory, tmp_path / "missing.nt")
    text = tmp_path / "graph.txt"
    text.write_text("<urn:q> <urn:p> <urn:r> .\n", encoding="utf-8")
    with pytest.raises(ClientError, match="extension"):
        load_store(directory, text)
    assert load_store(directory, text, fmt="nt").quads == 1
    with pytest.raises(NotFoundError, match="no RDF store"):
        SparqlStore(tmp_path / "nowhere", read_only=True)


# -- end to end: export -> load -> query -----------------------------------------------------------


def _attacks_by_corpus(driver: Driver, directory: Path, tmp_path: Path) -> tuple[int, dict[str, int], dict[str, int]]:
    reader = GraphReader(driver, page_size=500)
    out = tmp_path / "export.nq"
    write_export(out, reader.nodes(), reader.relationships(), fmt="nq", mapper=RdfMapper())
    load_store(directory, out)
    with SparqlStore(directory, read_only=True) as s:
        _, total = s.select(f"SELECT (COUNT(*) AS ?n) WHERE {{ ?x a <{AW}Attack> }}")
        _, rows = s.select(f"SELECT ?c (COUNT(*) AS ?n) WHERE {{ ?x a <{AW}Attack> ; aw:corpus ?c }} GROUP BY ?c")
    sparql = {r["c"]: r["n"] for r in rows}
    # The export carries predicted relations too: count every Attack node, not only gold ones.
    stats = GraphStore(driver).stats(include_predicted=True)["corpora"]
    cypher = {c: e["labels"]["Attack"] for c, e in stats.items() if e["labels"].get("Attack")}
    return total[0]["n"], sparql, cypher


def test_attack_count_end_to_end_on_the_samples(driver: Driver, tmp_path: Path) -> None:
    loaded = ingest_samples(driver)
    total, sparql, cypher = _attacks_by_corpus(driver, tmp_path / "ox", tmp_path)
    assert sparql == cypher
    assert total == sum(cypher.values()) > 0
    expected = {c for c in ("qt30", "m-arg", "sciarg") if c in loaded}
    assert expected <= set(sparql)


@pytest.mark.corpora
def test_attack_count_end_to_end_on_the_shared_corpora(driver: Driver, tmp_path: Path) -> None:
    """Every shared corpus, QT30 and Sci-Arg cut to a few files to keep the suite short."""
    root = shared_corpora()
    if root is None:
        pytest.skip("../shared/corpora is absent")
    store = GraphStore(driver, batch_size=5000)
    store.clear()
    for spec in CORPORA.values():
        files = spec.find(root)
        if spec.name == "qt30":
            # Maps with at least one conflict, so that QT30 attacks are among the first ones.
            files = [f for f in files if b'"CA"' in f.read_bytes()][:40]
        elif spec.name == "sciarg":
            files = files[:5]
        if files:
            store.ingest(spec.load(files))
    total, sparql, cypher = _attacks_by_corpus(driver, tmp_path / "ox", tmp_path)
    assert sparql == cypher and total == sum(cypher.values())
    with_attacks = {c for c in ("qt30", "m-arg", "sciarg") if loader_exists(c)}
    assert with_attacks <= set(sparql)
    assert len(sparql) >= min(3, len(with_attacks))
