"""The /dialogues and /documents list routes without Neo4j: their OpenAPI parameters and what they ask
the browse service for (a stand-in service records the filter and the paging)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.routes import deps
from graphstore.browsing import DiscourseFilter, Page
from ontology.terms import Label
from ontology.views import NodeView


class _RecordingBrowse:
    def __init__(self) -> None:
        self.calls: list[tuple[DiscourseFilter | None, str | None, int]] = []

    def discourses(self, filters: DiscourseFilter | None = None, cursor: str | None = None, limit: int = 50) -> Page:
        self.calls.append((filters, cursor, limit))
        node = NodeView("stac:d1", ("Dialogue", "Discourse"), {"corpus": "stac", "local_id": "d1"})
        return Page([(node, 3)], None)


@pytest.fixture
def browse() -> _RecordingBrowse:
    return _RecordingBrowse()


@pytest.fixture
def client(browse: _RecordingBrowse) -> TestClient:
    app = create_app()
    app.dependency_overrides[deps.browse_service] = lambda: browse
    return TestClient(app)


def _operation(spec: dict[str, Any], path: str) -> dict[str, Any]:
    return spec["paths"][path]["get"]


def test_list_routes_declare_their_own_parameters_then_paging(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    dialogues, documents = _operation(spec, "/dialogues"), _operation(spec, "/documents")
    assert [p["name"] for p in dialogues["parameters"]] == ["corpus", "speaker", "q", "cursor", "limit"]
    assert [p["name"] for p in documents["parameters"]] == ["corpus", "q", "cursor", "limit"]
    assert all(p["in"] == "query" and not p["required"] for p in dialogues["parameters"] + documents["parameters"])
    assert dialogues["operationId"] == "dialogues_dialogues_get"
    assert documents["operationId"] == "documents_documents_get"
    assert dialogues["summary"] == "Dialogues"
    assert dialogues["description"].startswith("Dialogues, filtered by corpus, speaker")
    assert documents["description"].startswith("Documents (e.g. Sci-Arg papers)")
    limit = dialogues["parameters"][-1]["schema"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 500, 50)
    ok = dialogues["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/DiscoursePage"}


def test_list_routes_pass_kind_filter_and_paging(client: TestClient, browse: _RecordingBrowse) -> None:
    body = client.get("/dialogues", params={"corpus": "stac", "speaker": "Cat", "q": "wheat", "limit": 7}).json()
    assert body == {
        "items": [{"id": "stac:d1", "kind": "Dialogue", "corpus": "stac", "local_id": "d1", "units": 3}],
        "next_cursor": None,
    }
    assert browse.calls[-1] == (DiscourseFilter(Label.Dialogue, "stac", "Cat", "wheat"), None, 7)
    client.get("/documents", params={"q": "claim", "cursor": "abc"})
    assert browse.calls[-1] == (DiscourseFilter(Label.Document, None, None, "claim"), "abc", 50)
    # A speaker is not a parameter of the document list: it is ignored like any unknown parameter.
    client.get("/documents", params={"speaker": "Cat"})
    assert browse.calls[-1] == (DiscourseFilter(Label.Document), None, 50)


def test_list_routes_check_their_parameters(client: TestClient, browse: _RecordingBrowse) -> None:
    too_small = client.get("/dialogues", params={"limit": 0})
    assert too_small.status_code == 422 and too_small.json()["detail"].startswith("query.limit:")
    too_long = client.get("/documents", params={"q": "x" * 501})
    assert too_long.status_code == 422 and too_long.json()["detail"].startswith("query.q:")
    assert browse.calls == []
