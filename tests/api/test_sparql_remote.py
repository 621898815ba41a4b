"""The remote-SPARQL pieces that need no server: settings, prefixes, JSON results, refusals before sending."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest
from pydantic import ValidationError

from api.services.query import run_sparql, sparql_store
from api.settings import Settings
from ontology.errors import ApiError, ClientError, DatabaseUnavailableError, QueryRefusedError
from ontology.rdf import PREFIXES
from ontology.sparql import SparqlStore, declare_prefixes, holds_triples, serialize_result, solutions_from_json
from ontology.sparql_remote import RemoteStore, holds_export, push

AWAY = RemoteStore("http://127.0.0.1:9/query", "http://127.0.0.1:9/store")
DATA = """
<urn:a> <https://w3id.org/argweb/ontology#text> "one" .
<urn:a> <https://w3id.org/argweb/ontology#position> "3"^^<http://www.w3.org/2001/XMLSchema#integer> .
<urn:b> <https://w3id.org/argweb/ontology#score> "0.25"^^<http://www.w3.org/2001/XMLSchema#double> .
<urn:b> <https://w3id.org/argweb/ontology#text> "deux"@fr .
_:x <https://w3id.org/argweb/ontology#golden> "true"^^<http://www.w3.org/2001/XMLSchema#boolean> .
"""


def test_settings_take_http_endpoints_only(tmp_path: Path) -> None:
    assert sparql_store(Settings(data_dir=tmp_path)) == tmp_path / "oxigraph"
    remote = Settings(sparql_endpoint="http://h:3030/ds/query", sparql_store_endpoint="http://h:3030/ds/data")
    assert sparql_store(remote) == RemoteStore("http://h:3030/ds/query", "http://h:3030/ds/data")
    assert Settings(sparql_endpoint="").sparql_endpoint is None
    with pytest.raises(ValidationError, match="http:// or https://"):
        Settings(sparql_endpoint="ftp://h/query")


def test_undeclared_argweb_prefixes_are_declared_and_nothing_else_changes() -> None:
    query = "PREFIX aw: <urn:mine#>\nSELECT ?x WHERE { ?x a aw:Support ; qt30:x ?y }"
    sent = declare_prefixes(query)
    assert sent.endswith(query)
    assert "PREFIX aw: <https://w3id.org" not in sent, "a prefix the query declares is its own"
    assert f"PREFIX qt30: <{PREFIXES['qt30']}>" in sent
    ox.Store().query(sent)  # parses without predeclared prefixes


def test_json_results_read_as_the_embedded_store_reads_its_own(tmp_path: Path) -> None:
    store = SparqlStore()
    path = tmp_path / "d.nt"
    path.write_text(DATA, encoding="utf-8")
    store.add_file(path)
    query = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p"
    columns, rows = store.select(query)
    body = serialize_result(store.query(query), "json")
    names, parsed = solutions_from_json(body)
    assert names == columns
    assert [{k: v for k, v in r.items() if not str(v).startswith("_:")} for r in parsed] == [
        {k: v for k, v in r.items() if not str(v).startswith("_:")} for r in rows
    ]
    assert {type(r["o"]) for r in parsed} == {str, int, float, bool}


def test_an_empty_description_is_told_by_its_triples_whatever_the_server_writes() -> None:
    assert not holds_triples(b"@prefix aw: <https://w3id.org/argweb/ontology#> .\n", "ttl")
    assert not holds_triples(b"[]", "jsonld") and not holds_triples(b"", "nt")
    assert holds_triples(b'<urn:a> <urn:b> "c" .\n', "nt")
    assert holds_triples(b"<urn:a> <urn:b", "nt"), "a body cut at the size limit still holds something"


def test_loads_are_refused_before_anything_is_sent(tmp_path: Path) -> None:
    good = tmp_path / "good.nt"
    good.write_text('<urn:a> <urn:b> "c" .\n', encoding="utf-8")
    with pytest.raises(ApiError, match="ARGWEB_SPARQL_STORE_ENDPOINT"):
        push(RemoteStore(AWAY.query_url), good)
    quads = tmp_path / "g.nq"
    quads.write_text('<urn:a> <urn:b> "c" <urn:g> .\n', encoding="utf-8")
    with pytest.raises(ClientError, match="default graph"):
        push(AWAY, quads)
    broken = tmp_path / "broken.nt"
    broken.write_text('<urn:a> <urn:b> "c .\n', encoding="utf-8")
    with pytest.raises(ClientError, match=r"broken\.nt.*store left unchanged"):
        push(AWAY, broken)
    with pytest.raises(DatabaseUnavailableError, match="does not answer"):
        push(AWAY, good)


def test_queries_are_checked_before_they_are_sent() -> None:
    with pytest.raises(QueryRefusedError):
        run_sparql(AWAY, "INSERT DATA { <urn:a> <urn:b> <urn:c> }")
    with pytest.raises(QueryRefusedError):
        run_sparql(AWAY, "SELECT * WHERE { SERVICE <http://x/> { ?s ?p ?o } }")
    with pytest.raises(DatabaseUnavailableError, match=r"127\.0\.0\.1:9"):
        run_sparql(AWAY, "ASK { ?s ?p ?o }", timeout=5)
    # The refused and the failed queries gave their concurrency slots back.
    for _ in range(3):
        with pytest.raises(DatabaseUnavailableError, match="does not answer"):
            run_sparql(AWAY, "ASK { ?s ?p ?o }", timeout=5, max_workers=1)


def test_a_store_holds_an_export_only_where_it_can_be_found(tmp_path: Path) -> None:
    # The main job exports again when the store it loaded before holds nothing now: an embedded
    # store whose folder is gone, or a SPARQL server that is away (or restarted empty).
    store_dir = tmp_path / "oxigraph"
    assert not holds_export(store_dir, None, None)
    store_dir.mkdir()
    assert holds_export(store_dir, None, None)
    # A Graph Store endpoint alone is loaded elsewhere: nothing here says what it holds.
    assert not holds_export(store_dir, None, AWAY.store_url)
    assert not holds_export(store_dir, AWAY.query_url, AWAY.store_url)
