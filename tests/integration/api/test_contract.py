"""The OpenAPI document covers every route, and a bounded schemathesis run finds no server error."""

from __future__ import annotations

import time

import requests
import schemathesis
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings

from api.app import create_app
from tests.integration.api.conftest import ApiGraph

NOT_FUZZED: set[str] = set()
BUDGET_S = 240.0


def test_openapi_describes_every_route(client: TestClient, api_graph: ApiGraph) -> None:
    spec = client.get("/openapi.json").json()
    app = create_app(api_graph.settings)
    routes = {
        (r.path, m.lower()) for r in app.routes if isinstance(r, APIRoute) and r.include_in_schema for m in r.methods
    }
    documented = {(path.replace(":path", ""), m) for path, ops in spec["paths"].items() for m in ops}
    assert {(p.replace(":path", ""), m) for p, m in routes} <= documented
    for path in ("/corpora", "/dialogues", "/relations", "/cypher", "/sparql", "/aif", "/data/{resource}", "/"):
        assert path in spec["paths"], path


def test_schemathesis_finds_no_server_error(live_url: str) -> None:
    schema = schemathesis.openapi.from_url(f"{live_url}/openapi.json")
    started = time.monotonic()
    failures: list[str] = []
    tried = 0
    session = requests.Session()
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path in NOT_FUZZED:
            continue
        if time.monotonic() - started > BUDGET_S:
            break

        @given(case=operation.as_strategy())
        @settings(
            max_examples=6,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def run(case: schemathesis.Case) -> None:
            nonlocal tried
            tried += 1
            response = case.call(base_url=live_url, session=session, timeout=60)
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:200]}")

        run()
    assert tried > 40
    assert failures == []
