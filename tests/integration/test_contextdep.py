"""ContextDeP in the graph: the sample ingested into a real Neo4j."""

from __future__ import annotations

import pytest

from graphstore.store import GraphStore
from ontology.errors import LoaderError
from ontology.formats.contextdep import load_contextdep
from tests.conftest import BAD, graph_snapshot, sample_bundle
from tests.ontology.formats.test_loader_contextdep import ANON, TOKENS, token_rows


def test_ingest_reingest_and_failed_ingest(store: GraphStore) -> None:
    store.ingest(sample_bundle("contextdep"))
    got = store.run(
        "MATCH (g:Locution)-[:AIF_EDGE]->(r:Rephrase)-[:AIF_EDGE]->(h:Locution) "
        "MATCH (j:Judgement)-[:JUDGES]->(r) WHERE j.label = 'Paraphrase' "
        "RETURN r.local_id AS qid, r.votes AS votes, count(j) AS paraphrase_judgements ORDER BY qid"
    )
    assert got and all(row["votes"] == row["paraphrase_judgements"] for row in got)
    assert len(got) == sum(1 for r in token_rows().values() if r["Vote"][0] / r["Vote"][1] >= 0.5)
    before = graph_snapshot(store, "contextdep")
    store.ingest(load_contextdep([*TOKENS, *ANON]))
    assert graph_snapshot(store, "contextdep") == before
    with pytest.raises(LoaderError):
        store.ingest(load_contextdep([*TOKENS, BAD / "cdep_ANON_dev_incomplete.tsv"]))
    assert graph_snapshot(store, "contextdep") == before
