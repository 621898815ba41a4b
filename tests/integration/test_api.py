from fastapi.testclient import TestClient
from pydantic import SecretStr

from api.app import create_app
from api.settings import Settings
from graphstore.loaders.dialogue_json import load_dialogue_json
from graphstore.runtime import EmbeddedNeo4j
from graphstore.store import GraphStore
from tests.conftest import PASSWORD, SAMPLES


def test_health_and_stats(neo4j_server: EmbeddedNeo4j, store: GraphStore) -> None:
    store.ingest(load_dialogue_json(sorted((SAMPLES / "molweni" / "DP").glob("*.json")), "molweni"))
    info = neo4j_server.info()
    assert info is not None
    settings = Settings(neo4j_uri=info.uri, neo4j_password=SecretStr(PASSWORD))
    with TestClient(create_app(settings)) as client:
        assert client.get("/health").json() == {"status": "ok"}
        stats = client.get("/stats").json()
    molweni = stats["corpora"]["molweni"]
    assert molweni["status"] == "complete"
    assert molweni["summary"]["locutions"] == stats["labels"]["Locution"] > 0
