"""The vector-index Cypher builders: one index per label, parameters for every value, no vectors exported."""

from __future__ import annotations

import pytest

from graphstore import cypher, vectors
from graphstore.reads import exported_node
from ontology.errors import ApiError
from ontology.terms import Label, Prop


def test_one_cosine_index_per_embedded_label() -> None:
    stmts = [vectors.create_index(label, 384) for label in vectors.EMBEDDED_LABELS]
    assert len(set(vectors.VECTOR_INDEXES.values())) == len(vectors.EMBEDDED_LABELS) == 2
    for label, stmt in zip(vectors.EMBEDDED_LABELS, stmts, strict=True):
        assert stmt.startswith(f"CREATE VECTOR INDEX {vectors.VECTOR_INDEXES[label]} IF NOT EXISTS")
        assert f"(n:`{label.value}`) ON n.embedding" in stmt
        assert "`vector.dimensions`: 384" in stmt and "'cosine'" in stmt
    with pytest.raises(ApiError, match=r"dimensions must lie in 1\.\.4096"):
        vectors.create_index(Label.Proposition, 0)
    with pytest.raises(ValueError, match="no vector index"):
        vectors.create_index(Label.Speaker, 384)


def test_a_neighbourhood_deeper_than_two_is_the_callers_mistake() -> None:
    assert "[*1..2]" in cypher.neighbours(2)
    with pytest.raises(ApiError, match="depth must be 1 or 2, not 3"):
        cypher.neighbours(3)


def test_writes_are_batched_and_record_model_and_text_key() -> None:
    q = vectors.write_embeddings(Label.Locution)
    assert q.startswith("UNWIND $rows AS row MATCH (n:`Node` {id: row.id}) WHERE n:`Locution`")
    assert "db.create.setNodeVectorProperty(n, 'embedding', row.vec)" in q
    assert "n.embedding_model = $model" in q and "n.embedding_key = row.key" in q


def test_knn_filters_after_the_index_and_returns_cosine() -> None:
    q = vectors.knn(Label.Proposition)
    assert "db.index.vector.queryNodes('proposition_embedding', $fetch, query.vec)" in q
    assert "($corpus IS NULL OR node.corpus = $corpus)" in q
    assert "($exclude IS NULL OR node.corpus <> $exclude)" in q
    assert "collect({node: node, score: score})[..$k]" in q
    assert "2 * score - 1 AS score" in q  # the index's (1 + cos) / 2 turned back into a cosine
    exact = vectors.exact(Label.Locution)
    assert "n.corpus = $corpus" in exact and "vector.similarity.cosine(n.embedding, query.vec)" in exact
    assert "LIMIT $k" in exact


def test_pages_read_in_id_order_with_an_optional_corpus() -> None:
    assert "n.corpus = $corpus" not in vectors.embedding_page(Label.Proposition)
    q = vectors.embedding_page(Label.Proposition, corpus=True)
    assert "n.id > $after AND n.corpus = $corpus" in q and "ORDER BY n.id LIMIT $limit" in q


def test_the_export_query_and_its_rows_leave_embeddings_out() -> None:
    q = cypher.export_node_page()
    assert "n {.*, embedding: null, embedding_model: null, embedding_key: null} AS props" in q
    row = {
        "id": "qt30:x:1",
        "labels": ["Proposition", "Node"],
        "props": {"id": "qt30:x:1", "text": "t", Prop.EMBEDDING.value: None, Prop.EMBEDDING_MODEL.value: None},
        "premises": [],
        "conclusions": [],
    }
    node = exported_node(row)
    assert dict(node.props) == {"id": "qt30:x:1", "text": "t"}


def test_nearest_refuses_bad_arguments_before_any_query() -> None:
    store = vectors.VectorStore(driver=None)  # type: ignore[arg-type]  # never used: the checks come first
    with pytest.raises(Exception, match="k must"):
        store.nearest(Label.Proposition, [[0.0] * 384], 0)
    with pytest.raises(Exception, match="exact scan needs a corpus"):
        store.nearest(Label.Proposition, [[0.0] * 384], 3, exact_scan=True)
    assert store.nearest(Label.Proposition, [], 3) == []
