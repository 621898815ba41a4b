"""M-Arg in the graph: the sample ingested into a real Neo4j."""

from __future__ import annotations

import pytest

from graphstore.store import GraphStore
from ontology.errors import LoaderError
from ontology.formats.marg import load_marg
from ontology.formats.registry import CORPORA
from tests.conftest import BAD, SAMPLES, graph_snapshot, sample_bundle
from tests.ontology.formats.test_loader_marg import GOLD, SENTENCES


def test_ingest_reingest_and_failed_ingest_write_nothing(store: GraphStore) -> None:
    store.ingest(sample_bundle("m-arg"))
    counts = {
        r["label"]: r["n"]
        for r in store.run("MATCH (n:Node {corpus: 'm-arg'}) UNWIND labels(n) AS label RETURN label, count(*) AS n")
    }
    assert counts["Locution"] == counts["Proposition"] == counts["Illocution"] == 209
    assert counts["Support"] == 4 and counts["Attack"] == 2 and counts["NonRelation"] == 9
    assert counts["Judgement"] == 49 and counts["Annotator"] == 9 and counts["Dialogue"] == 3
    # A support edge runs proposition -> Support -> proposition, each proposition voiced by a locution.
    path = store.run(
        "MATCH (l1:Locution)-[:AIF_EDGE]->(:Illocution)-[:AIF_EDGE]->(p1:Proposition)"
        "-[:AIF_EDGE]->(s:Support {local_id: 'n000104b07p0406'})-[:AIF_EDGE]->(p2:Proposition) "
        "MATCH (j:Judgement)-[:JUDGES]->(s) MATCH (j)-[:JUDGED_BY]->(a:Annotator) "
        "RETURN l1.local_id AS l1, p2.local_id AS p2, count(DISTINCT j) AS js, count(DISTINCT a) AS anns"
    )
    assert path == [{"l1": "n000104", "p2": "n000106", "js": 9, "anns": 9}]
    before = graph_snapshot(store, "m-arg")
    store.ingest(CORPORA["m-arg"].load(CORPORA["m-arg"].find(SAMPLES)))
    assert graph_snapshot(store, "m-arg") == before
    with pytest.raises(LoaderError):
        store.ingest(load_marg([SENTENCES, GOLD, BAD / "marg_missing_sentence.csv"]))
    assert graph_snapshot(store, "m-arg") == before
