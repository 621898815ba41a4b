"""The OpenAPI document covers every route, and a bounded schemathesis run finds no server error."""

from __future__ import annotations

import time
from typing import Any

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


def _documented_types(spec: dict[str, Any], path: str, method: str, status: int) -> set[str] | None:
    """The media types the OpenAPI document gives for this answer (None: the status is not
    documented, or documented without a body)."""
    responses = spec["paths"][path][method.lower()]["responses"]
    answer = responses.get(str(status)) or responses.get(f"{str(status)[0]}XX") or responses.get("default")
    if answer is None or not answer.get("content"):
        return None
    return set(answer["content"])


def test_schemathesis_finds_no_server_error(live_url: str) -> None:
    """No 5xx, and every documented answer is served as the media type the document names."""
    schema = schemathesis.openapi.from_url(f"{live_url}/openapi.json")
    spec = requests.get(f"{live_url}/openapi.json", timeout=60).json()
    started = time.monotonic()
    failures: list[str] = []
    mismatches: list[str] = []
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
            raw = response.headers.get("content-type") or ""
            # schemathesis gives each header as the list of its values
            served = (raw[0] if raw else "") if isinstance(raw, list) else raw
            served = served.split(";")[0].strip()
            path = case.operation.path
            documented = _documented_types(spec, path, case.method, response.status_code)
            if documented is not None and served and served not in documented and "*/*" not in documented:
                mismatches.append(
                    f"{case.method} {path} -> {response.status_code} {served}, documented {sorted(documented)}"
                )

        run()
    assert tried > 40
    assert failures == []
    assert sorted(set(mismatches)) == []
