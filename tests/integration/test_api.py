from fastapi.testclient import TestClient

from api.app import create_app
from api.settings import Settings
from graphstore.runtime import EmbeddedNeo4j
from graphstore.store import GraphStore
from ontology.formats.dialogue_json import load_dialogue_json
from tests.conftest import SAMPLES


def test_health_and_stats(neo4j_server: EmbeddedNeo4j, neo4j_settings: Settings, store: GraphStore) -> None:
    store.ingest(load_dialogue_json(sorted((SAMPLES / "molweni" / "DP").glob("*.json")), "molweni"))
    info = neo4j_server.info()
    assert info is not None
    # Both ways the app finds the graph: the running embedded server of the data directory, and a URI.
    for settings in (neo4j_settings, neo4j_settings.with_overrides(neo4j_uri=info.uri)):
        with TestClient(create_app(settings)) as client:
            assert client.get("/health").json()["neo4j"] == "ok"
            stats = client.get("/stats").json()
        molweni = stats["corpora"]["molweni"]
        assert molweni["status"] == "complete"
        assert molweni["summary"]["locutions"] == stats["labels"]["Locution"] > 0
