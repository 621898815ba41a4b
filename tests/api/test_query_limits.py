"""SPARQL limits without Neo4j: the checks, content negotiation, and the worker's time limit,
streaming and SERVICE refusal on a small Oxigraph store, through the service and `argweb sparql`."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli.main import app
from api.routes.linked import wants_html
from api.services.query import run_sparql
from api.settings import get_settings
from graphstore.browsing import decode_cursor, encode_cursor, lucene_terms
from ontology.errors import ApiError, QueryLimitError, QueryRefusedError
from ontology.sparql import load_store
from ontology.sparql_protocol import check_sparql, negotiate, syntax_only

pytestmark = pytest.mark.slow  # SPARQL worker processes stopped at their time and memory limits

HEAVY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("sparql")
    data = tmp / "data.nt"
    data.write_text(
        "".join(f'<urn:s{i}> <urn:p> "{i}" .\n<urn:s{i}> <urn:q> <urn:s{i + 1}> .\n' for i in range(400)),
        encoding="utf-8",
    )
    load_store(tmp / "store", data)
    return tmp / "store"


@pytest.mark.parametrize(
    "query",
    [
        "INSERT DATA { <urn:a> <urn:b> <urn:c> }",
        "# c\nPREFIX x: <urn:x>\nDELETE WHERE { ?s ?p ?o }",
        "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }",
        "SELECT * WHERE { service <http://127.0.0.1:9/> { ?s ?p ?o } }",
        "SELECT * WHERE { SERVICE SILENT <http://127.0.0.1:9/> { ?s ?p ?o } }",
        "SELECT * WHERE { ?s ?p ?o . SERV\\u0049CE <http://127.0.0.1:9/> { ?s ?p ?o } }",
    ],
)
def test_updates_and_federation_are_refused(query: str) -> None:
    with pytest.raises(QueryRefusedError):
        check_sparql(query)


def test_service_inside_literals_iris_and_names_is_fine() -> None:
    assert check_sparql("SELECT * WHERE { ?service <urn:SERVICE> 'SERVICE' . # SERVICE\n }") == "SELECT"
    assert check_sparql('SELECT * WHERE { ?s ?p """a SERVICE b""" }') == "SELECT"
    assert "SERVICE" not in syntax_only("ASK { ?s <urn:x> 'SERVICE' }")
    assert check_sparql("SELECT * WHERE { SERVICE <urn:x> { ?s ?p ?o } }", allow_service=True) == "SELECT"
    with pytest.raises(ApiError):
        check_sparql("   ")
    with pytest.raises(ApiError):
        check_sparql("HELLO")


def test_negotiation() -> None:
    assert negotiate("SELECT", "text/csv") == "csv"
    assert negotiate("SELECT", "text/html, text/tab-separated-values;q=0.9") == "tsv"
    assert negotiate("SELECT", "application/sparql-results+json;q=0.5, text/csv;q=0.9") == "csv"
    assert negotiate("SELECT", None) == "json"
    assert negotiate("CONSTRUCT", "application/ld+json") == "jsonld"
    assert negotiate("DESCRIBE", "*/*") == "ttl"
    with pytest.raises(ApiError):
        negotiate("SELECT", None, "ttl")
    # What SPARQLWrapper and friends send as format=...: aliases, and a lenient mode for the endpoint.
    assert negotiate("CONSTRUCT", None, "turtle") == "ttl"
    assert negotiate("CONSTRUCT", None, "json") == "jsonld"
    assert negotiate("SELECT", "text/csv", "turtle", strict=False) == "csv"
    assert wants_html("text/html,application/xhtml+xml,*/*;q=0.8")
    assert not wants_html("text/turtle, text/html;q=0.5")
    assert not wants_html(None)


def test_cursors_and_search_terms() -> None:
    assert decode_cursor(encode_cursor("molweni:1056"), str) == "molweni:1056"
    assert decode_cursor(encode_cursor(40), int) == 40
    for bad in ("!!", encode_cursor(40)):
        with pytest.raises(ApiError):
            decode_cursor(bad, str)
    # Special characters are escaped; a lone * is dropped (Lucene cannot start a term with it) and a
    # trailing one stays a prefix, lower-cased as the indexed terms are.
    assert lucene_terms('a:b (c) d" *') == 'a\\:b \\(c\\) d\\"'
    assert lucene_terms("Vacc* AND") == "vacc* and"
    # Quoted words stay a phrase, their special characters escaped; an empty phrase is dropped.
    assert lucene_terms('"the cost: of" AND "" x') == '"the cost\\: of" and x'
    assert lucene_terms('"a b') == '\\"a b'


def test_results_are_streamed_in_every_format(store_dir: Path) -> None:
    run = run_sparql(store_dir, "SELECT ?s ?o WHERE { ?s <urn:p> ?o } ORDER BY ?s", fmt="csv", timeout=60)
    body = b"".join(run.chunks).decode()
    assert body.splitlines()[0] == "s,o" and len(body.splitlines()) == 401 and not run.cut
    ask = run_sparql(store_dir, "ASK { <urn:s1> ?p ?o }", accept="application/sparql-results+json", timeout=60)
    assert b'"boolean":true' in b"".join(ask.chunks)
    graph = run_sparql(store_dir, "CONSTRUCT WHERE { <urn:s1> ?p ?o }", accept="application/n-triples", timeout=60)
    assert len(b"".join(graph.chunks).strip().splitlines()) == 2


def test_a_query_that_would_run_for_hours_is_stopped(store_dir: Path) -> None:
    started = time.monotonic()
    with pytest.raises(QueryLimitError):
        run_sparql(store_dir, HEAVY, timeout=2)
    assert time.monotonic() - started < 10
    # A result that streams forever is cut at the deadline, and says so.
    run = run_sparql(store_dir, "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }", fmt="tsv", timeout=2)
    size = sum(len(chunk) for chunk in run.chunks)
    assert size > 0 and run.cut
    assert time.monotonic() - started < 20


def test_memory_cap_stops_a_query_holding_its_result(store_dir: Path) -> None:
    query = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?i ?f ?c"
    with pytest.raises((QueryLimitError, ApiError)):
        b"".join(run_sparql(store_dir, query, timeout=30, memory_mb=600).chunks)


def test_cli_sparql_limits(store_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(2)
    port = listener.getsockname()[1]
    monkeypatch.setenv("ARGWEB_OXIGRAPH_STORE", str(store_dir))
    monkeypatch.setenv("ARGWEB_SPARQL_TIMEOUT", "2")
    get_settings.cache_clear()
    runner = CliRunner()
    try:
        ok = runner.invoke(app, ["sparql", "SELECT ?o WHERE { <urn:s1> <urn:p> ?o }"])
        assert ok.exit_code == 0 and "1 row(s)" in ok.output
        slow = runner.invoke(app, ["sparql", HEAVY])
        assert slow.exit_code == 2 and "stopped" in slow.output
        service = runner.invoke(
            app, ["sparql", f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{port}/> {{ ?s ?p ?o }} }}"]
        )
        assert service.exit_code == 2 and "SERVICE refused" in service.output
        with pytest.raises(TimeoutError):
            listener.accept()
        update = runner.invoke(app, ["sparql", "DELETE WHERE { ?s ?p ?o }"])
        assert update.exit_code == 2
        cut = runner.invoke(app, ["sparql", "--format", "csv", "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"])
        assert cut.exit_code == 2 and "cut by the time limit" in cut.output
    finally:
        listener.close()
        get_settings.cache_clear()
