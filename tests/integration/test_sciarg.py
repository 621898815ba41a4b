"""Sci-Arg in the graph: the sample ingested into a real Neo4j."""

from __future__ import annotations

import pytest

from graphstore.store import GraphStore
from ontology.errors import LoaderError
from ontology.formats.sciarg import load_sciarg
from tests.conftest import BAD, graph_snapshot, sample_bundle
from tests.ontology.formats.test_loader_sciarg import CORPUS_DIR


def test_ingest_reingest_and_failed_ingest(store: GraphStore) -> None:
    store.ingest(sample_bundle("sciarg"))
    got = store.run(
        "MATCH (p:Proposition {corpus: 'sciarg'})-[:IN_SENTENCE]->(s:Sentence)-[:PART_OF]->(d:Document) "
        "RETURN d.local_id AS doc, count(DISTINCT p) AS props ORDER BY doc"
    )
    assert got == [{"doc": "A01", "props": 66}, {"doc": "A10", "props": 49}]
    support = store.run(
        "MATCH (a:Proposition)-[:AIF_EDGE]->(r:Support {id: 'sciarg:A01:R1'})-[:AIF_EDGE]->(b:Claim) "
        "RETURN a.local_id AS a, b.local_id AS b"
    )
    assert support == [{"a": "T4", "b": "T5"}]
    before = graph_snapshot(store, "sciarg")
    store.ingest(load_sciarg(sorted(CORPUS_DIR.glob("*.ann"))))
    assert graph_snapshot(store, "sciarg") == before
    with pytest.raises(LoaderError):
        store.ingest(load_sciarg([*sorted(CORPUS_DIR.glob("*.ann")), BAD / "sciarg_offsets.ann"]))
    assert graph_snapshot(store, "sciarg") == before
