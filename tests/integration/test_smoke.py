from graphstore.store import GraphStore


def test_server_answers(store: GraphStore) -> None:
    assert store.run("RETURN 1 AS ok") == [{"ok": 1}]
