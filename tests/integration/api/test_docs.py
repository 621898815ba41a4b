"""The OpenAPI document says what the API answers: problem+json errors, Allow on 405, 415 on POST /sparql;
the API page's assets are the API's own."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from api.problems import PROBLEM


def test_error_bodies_are_documented_as_problem_json(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    errors = [
        (path, method, status, response)
        for path, operations in spec["paths"].items()
        for method, operation in operations.items()
        for status, response in operation["responses"].items()
        if status[0] in "45"
    ]
    assert len(errors) > 50
    for path, method, status, response in errors:
        assert set(response.get("content", {})) == {PROBLEM}, (path, method, status)
        assert response["content"][PROBLEM]["schema"] == {"$ref": "#/components/schemas/Problem"}
    assert "405" in spec["paths"]["/corpora"]["get"]["responses"]
    assert "Allow" in spec["paths"]["/corpora"]["get"]["responses"]["405"]["headers"]
    assert "415" in spec["paths"]["/sparql"]["post"]["responses"]
    # A validation error is served as the Problem the document now names.
    invalid = client.get("/relations", params={"limit": 0})
    assert invalid.status_code == 422 and invalid.headers["content-type"] == PROBLEM
    assert set(invalid.json()) >= {"type", "title", "status", "detail"}


def test_405_names_the_allowed_methods(client: TestClient) -> None:
    answer = client.delete("/corpora")
    assert answer.status_code == 405 and answer.headers["content-type"] == PROBLEM
    assert {m.strip() for m in answer.headers["allow"].split(",")} >= {"GET"}
    refused = client.post("/sparql", content=b"SELECT * {}", headers={"Content-Type": "text/plain"})
    assert refused.status_code == 415 and refused.headers["content-type"] == PROBLEM


def test_docs_page_loads_nothing_from_elsewhere(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    urls = re.findall(r'(?:src|href)="([^"]*)"', page.text) + re.findall(r"url: '([^']*)'", page.text)
    assert "/static/swagger-ui-bundle.js" in urls and "/static/swagger-ui.css" in urls
    assert "http://" not in page.text and "https://" not in page.text
    for asset, kind in (("swagger-ui-bundle.js", "text/javascript"), ("swagger-ui.css", "text/css")):
        served = client.get(f"/static/{asset}")
        assert served.status_code == 200 and served.headers["content-type"].startswith(kind)
        assert len(served.content) > 100_000


def test_linked_data_answers_rdf_xml_with_406_not_turtle(client: TestClient) -> None:
    node = "molweni:1078:edu:2"
    assert client.get(f"/data/{node}", headers={"Accept": "text/turtle"}).status_code == 200
    for accept in ("application/rdf+xml", "application/rdf+xml, application/xml;q=0.5"):
        answer = client.get(f"/data/{node}", headers={"Accept": accept})
        assert answer.status_code == 406, (accept, answer.status_code)
        assert answer.headers["content-type"] == PROBLEM and "text/turtle" in answer.json()["detail"]
    # A client that also takes Turtle, or anything, still gets it.
    mixed = client.get(f"/data/{node}", headers={"Accept": "application/rdf+xml, text/turtle;q=0.8"})
    assert mixed.status_code == 200 and mixed.headers["content-type"].startswith("text/turtle")
    assert client.get(f"/data/{node}", headers={"Accept": "*/*"}).status_code == 200
