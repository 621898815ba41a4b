"""AIF out and in, Linked Data dereferencing, dashboards, and the API's guards (key, size, CORS, secrets)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tests.conftest import PASSWORD
from tests.integration.api.conftest import API_KEY, ApiGraph, graph_counts


def _shape(aif: dict[str, Any]) -> tuple[Counter[tuple[Any, ...]], Counter[tuple[Any, ...]], int, int]:
    """An AIF map up to ids: node contents, edges by the contents of their ends, locution and participant counts."""
    by_id = {n["nodeID"]: (n["type"], n["text"], n.get("scheme")) for n in aif["nodes"]}
    nodes = Counter(by_id.values())
    edges = Counter((by_id[e["fromID"]], by_id[e["toID"]]) for e in aif["edges"])
    return nodes, edges, len(aif["locutions"]), len(aif["participants"])


def test_aif_export_equals_the_cli_export_and_round_trips(
    client: TestClient, api_graph: ApiGraph, tmp_path: Path
) -> None:
    from api.services.aif import export_aif
    from api.services.graph import Graph

    exported = client.get("/aif/qt30:nodeset21318").json()
    with Graph(api_graph.settings, driver=api_graph.driver) as graph:
        assert exported == export_aif(graph, tmp_path / "map.json", dialogue="qt30:nodeset21318").aif
    headers = {"X-API-Key": API_KEY}
    created = client.post("/aif", params={"corpus": "aif-roundtrip", "name": "copy"}, json=exported, headers=headers)
    assert created.status_code == 201, created.text
    assert created.json()["id"] == "aif-roundtrip:copy"
    again = client.get("/aif/aif-roundtrip:copy").json()
    assert _shape(again) == _shape(exported)
    before = graph_counts(api_graph.driver)
    repeat = client.post("/aif", params={"corpus": "aif-roundtrip", "name": "copy"}, json=exported, headers=headers)
    assert repeat.status_code == 201
    assert graph_counts(api_graph.driver) == before  # idempotent: nothing duplicated


def test_aif_import_needs_the_key_and_a_valid_map(client: TestClient, api_graph: ApiGraph) -> None:
    aif = client.get("/aif/qt30:nodeset21318").json()
    before = graph_counts(api_graph.driver)
    assert client.post("/aif", json=aif).status_code == 401
    assert client.post("/aif", json=aif, headers={"X-API-Key": "wrong"}).status_code == 401
    broken = {**aif, "edges": [*aif["edges"], {"edgeID": "x", "fromID": "nope", "toID": aif["nodes"][0]["nodeID"]}]}
    bad = client.post("/aif", params={"name": "broken"}, json=broken, headers={"X-API-Key": API_KEY})
    assert bad.status_code == 422 and "nope" in bad.json()["detail"]
    assert client.post("/aif", params={"name": "../etc"}, json=aif, headers={"X-API-Key": API_KEY}).status_code == 400
    assert graph_counts(api_graph.driver) == before
    assert client.get("/aif/no-such-dialogue").status_code == 404


def test_request_size_limit_cors_and_no_secrets(client: TestClient, api_graph: ApiGraph) -> None:
    big = b'{"query": "' + b"x" * (api_graph.settings.request_size_limit + 10) + b'"}'
    r = client.post("/cypher", content=big, headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and r.headers["content-type"] == "application/problem+json"
    preflight = client.options(
        "/corpora", headers={"Origin": "http://example.org", "Access-Control-Request-Method": "GET"}
    )
    assert preflight.headers["access-control-allow-origin"] == "http://example.org"
    other = client.get("/corpora", headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in other.headers
    for path in ("/health", "/stats", "/openapi.json", "/corpora/nope", "/sparql?query=SELEC"):
        text = client.get(path).text
        assert PASSWORD not in text and API_KEY not in text and "Traceback" not in text


def test_linked_data_content_negotiation(client: TestClient) -> None:
    node = "qt30:nodeset21318:707848"
    turtle = client.get(f"/data/{node}", headers={"Accept": "text/turtle"})
    assert turtle.status_code == 200 and turtle.headers["content-type"].startswith("text/turtle")
    assert "Lisa Nandy" in turtle.text
    nt = client.get(f"/data/{node}", headers={"Accept": "application/n-triples"})
    assert nt.text.startswith(f"<https://w3id.org/argweb/data/{node}>")
    jsonld = client.get(f"/data/{node}", headers={"Accept": "application/ld+json"})
    assert json.loads(jsonld.text)[0]["@id"] == f"https://w3id.org/argweb/data/{node}"
    page = client.get(f"/data/{node}", headers={"Accept": "text/html,application/xhtml+xml"}, follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"] == f"/?node={node.replace(':', '%3A')}"
    assert client.get("/data/qt30:no-such-node", headers={"Accept": "text/turtle"}).status_code == 404


BASE = "https://w3id.org/argweb/data/"


def test_every_exported_iri_dereferences(client: TestClient) -> None:
    rows = client.get(
        "/sparql",
        params={
            "query": "SELECT DISTINCT ?s WHERE { ?s ?p ?o FILTER(STRSTARTS(STR(?s), 'https://w3id.org/argweb/data/')) }"
        },
        headers={"Accept": "application/sparql-results+json"},
    ).json()["results"]["bindings"]
    iris = sorted(r["s"]["value"] for r in rows)
    assert len(iris) > 100
    for iri in iris[:: max(1, len(iris) // 25)]:
        r = client.get("/data/" + iri[len("https://w3id.org/argweb/data/") :], headers={"Accept": "text/turtle"})
        assert r.status_code == 200, iri


def test_dashboard_pages_and_plots(client: TestClient) -> None:
    page = client.get("/dashboard/m-arg")
    # A panel per plot that applies: M-Arg has annotator judgements (agreement) and, here, no predictions.
    assert page.status_code == 200 and page.text.count("<img") == page.text.count("data-plot=") >= 3
    assert 'data-plot="agreement"' in page.text and 'data-plot="predicted-against-gold"' not in page.text
    svg = client.get("/dashboard/m-arg/agreement.svg")
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml" and b"<svg" in svg.content
    png = client.get("/dashboard/molweni/relation-types.png")
    assert png.content.startswith(b"\x89PNG")
    assert client.get("/dashboard/nope").status_code == 404
    assert client.get("/dashboard/m-arg/nope.svg").status_code == 404
