import pytest

from graphstore.store import GraphStore
from ontology.errors import InvalidQueryError


def test_server_answers(store: GraphStore) -> None:
    assert store.run("RETURN 1 AS ok") == [{"ok": 1}]
    assert store.read("RETURN 1 AS ok") == [{"ok": 1}]


def test_reads_run_in_read_mode_and_bad_statements_are_the_callers_mistake(store: GraphStore) -> None:
    with pytest.raises(InvalidQueryError, match="Neo4j query failed"):
        store.read("CREATE (:Node {id: 'written-in-a-read'})")
    assert store.read("MATCH (n {id: 'written-in-a-read'}) RETURN count(n) AS n") == [{"n": 0}]
    with pytest.raises(InvalidQueryError):
        store.read("MATCH (n RETURN n")
    store.run("CREATE (:Node {id: 'written'})")
    assert store.read("MATCH (n {id: 'written'}) RETURN count(n) AS n") == [{"n": 1}]
