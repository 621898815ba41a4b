"""The semantic layer against the real Neo4j: embeddings on the nodes, vector indexes, search by
meaning, corpus filters, idempotent re-embedding, nothing of it in the RDF export or the stats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neo4j import Driver

from api.services import semantic
from api.services.graph import Graph
from api.settings import Settings
from graphstore.store import GraphStore
from graphstore.vectors import VECTOR_INDEXES
from ontology.errors import ApiError, NotFoundError
from ontology.formats.registry import CORPORA
from ontology.terms import Prop
from tests.conftest import SAMPLES

LOADED = ("m-arg", "sciarg", "qt30", "molweni")


@pytest.fixture(scope="module")
def sem_settings(neo4j_settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The session's server with a private embedding cache."""
    return neo4j_settings.model_copy(update={"cache_dir": tmp_path_factory.mktemp("cache")})


@pytest.fixture(scope="module")
def embedded(driver: Driver, sem_settings: Settings) -> tuple[Graph, dict[str, object]]:
    """Four samples loaded and embedded once for the module; the first embedding report."""
    store = GraphStore(driver, batch_size=500)
    store.clear()
    semantic.remove_embeddings(Graph(sem_settings, driver=driver))
    for name in LOADED:
        spec = CORPORA[name]
        store.ingest(spec.load(spec.find(SAMPLES)))
    graph = Graph(sem_settings, driver=driver)
    report = semantic.embed_graph(graph, sem_settings)
    return graph, report.as_dict()


def test_embeds_every_unit_and_creates_one_index_per_label(embedded: tuple[Graph, dict[str, object]]) -> None:
    graph, report = embedded
    store = graph.store()
    texts = store.run(
        "MATCH (n) WHERE (n:Proposition OR n:Locution) AND n.text IS NOT NULL "
        "RETURN count(n) AS n, count(n.embedding) AS e, collect(DISTINCT n.embedding_model) AS models"
    )[0]
    assert texts["n"] > 300 and texts["e"] == texts["n"]
    assert len(texts["models"]) == 1 and texts["models"][0].startswith("all-MiniLM-L6-v2-")
    assert sum(report["written"].values()) == texts["n"]  # type: ignore[attr-defined]
    status = semantic.embedding_status(graph)
    assert set(status.indexes) == set(VECTOR_INDEXES.values())
    assert all(ix["state"] == "ONLINE" and ix["dimensions"] == 384 for ix in status.indexes.values())
    assert sum(counts.embedded for labels in status.corpora.values() for counts in labels.values()) == texts["n"]
    size = store.run("MATCH (n:Proposition) WHERE n.embedding IS NOT NULL RETURN size(n.embedding) AS d LIMIT 1")
    assert size[0]["d"] == 384


def test_reembedding_writes_nothing_and_a_changed_text_is_embedded_again(
    embedded: tuple[Graph, dict[str, object]], sem_settings: Settings
) -> None:
    graph, _ = embedded
    again = semantic.embed_graph(graph, sem_settings)
    assert sum(again.written.values()) == 0 and sum(again.pending.values()) == 0
    store = graph.store()
    node = "m-arg:n000001:I"
    old = store.run("MATCH (n {id: $id}) RETURN n.text AS t, n.embedding_key AS k", id=node)[0]
    store.run("MATCH (n {id: $id}) SET n.text = 'The Supreme Court is our first topic tonight.'", id=node)
    try:
        changed = semantic.embed_graph(graph, sem_settings, corpus="m-arg")
        assert changed.written == {"Proposition": 1, "Locution": 0}
        assert store.run("MATCH (n {id: $id}) RETURN n.embedding_key AS k", id=node)[0]["k"] != old["k"]
    finally:
        store.run("MATCH (n {id: $id}) SET n.text = $t", id=node, t=old["t"])
        semantic.embed_graph(graph, sem_settings, corpus="m-arg")


def test_a_paraphrase_finds_its_sentence_first(
    embedded: tuple[Graph, dict[str, object]], sem_settings: Settings
) -> None:
    graph, _ = embedded
    hits = semantic.search(
        graph, sem_settings, "Three-dimensional character models are used a lot in entertainment, VR and medicine", k=5
    )
    assert hits[0].id == "sciarg:A01:T1"
    assert hits[0].label == "Proposition" and hits[0].corpus == "sciarg"
    assert hits[0].discourse == "sciarg:A01"
    assert hits[0].text is not None and hits[0].text.startswith("complicated 3D character models")
    assert 0.5 < hits[0].score <= 1.0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_corpus_filter_and_labels(embedded: tuple[Graph, dict[str, object]], sem_settings: Settings) -> None:
    graph, _ = embedded
    query = "people who test positive do not give details to contact tracers"
    anywhere = semantic.search(graph, sem_settings, query, k=3)
    assert anywhere[0].corpus == "qt30"
    # A corpus that holds nothing close still answers k hits, all of that corpus (exact fallback).
    molweni = semantic.search(graph, sem_settings, query, k=7, corpus="molweni")
    assert len(molweni) == 7 and {h.corpus for h in molweni} == {"molweni"}
    assert {h.label for h in molweni} == {"Locution"}
    props = semantic.search(graph, sem_settings, query, k=4, labels=["proposition"])
    assert len(props) == 4 and {h.label for h in props} == {"Proposition"}
    assert semantic.search(graph, sem_settings, query, k=3, corpus="no-such-corpus") == []


def test_nearest_batches_texts_and_excludes_a_corpus(
    embedded: tuple[Graph, dict[str, object]], sem_settings: Settings
) -> None:
    graph, _ = embedded
    texts = ["we have recruited twenty-five thousand contact tracers", "who chooses the supreme court judges"]
    out = semantic.nearest(graph, sem_settings, texts, k=3)
    assert len(out) == 2 and all(len(hits) == 3 for hits in out)
    assert out[0][0].id == "qt30:nodeset18497:554166" or out[0][0].corpus == "qt30"
    others = semantic.nearest(graph, sem_settings, texts, k=3, exclude_corpus="qt30")
    assert all(h.corpus != "qt30" for hits in others for h in hits)
    assert semantic.nearest(graph, sem_settings, [], k=3) == []


def test_bad_queries_are_client_errors(embedded: tuple[Graph, dict[str, object]], sem_settings: Settings) -> None:
    graph, _ = embedded
    with pytest.raises(ApiError, match="empty"):
        semantic.search(graph, sem_settings, "   ")
    with pytest.raises(ApiError, match="k must"):
        semantic.search(graph, sem_settings, "court", k=0)
    with pytest.raises(ApiError, match="unknown label"):
        semantic.search(graph, sem_settings, "court", labels=["Speaker"])


def test_embeddings_stay_out_of_views_and_rdf(embedded: tuple[Graph, dict[str, object]], tmp_path: Path) -> None:
    from graphstore.browsing import BrowseService
    from graphstore.export import GraphReader
    from ontology.rdf import write_export

    graph, _ = embedded
    node, *_ = BrowseService(graph.driver()).node("sciarg:A01:T1")
    assert Prop.EMBEDDING.value not in node.props
    reader = GraphReader(graph.driver(), corpus="sciarg")
    out = tmp_path / "export.nt"
    write_export(out, reader.nodes(), reader.relationships(), include_ontology=False)
    text = out.read_text(encoding="utf-8")
    assert "sciarg:A01:T1" in text or "A01" in text
    assert "embedding" not in text


def test_main_job_step_embeds_what_is_missing_and_leaves_stats_alone(
    embedded: tuple[Graph, dict[str, object]],
) -> None:
    from api.services import mainjob

    graph, _ = embedded
    stats = json.dumps(graph.store().stats(), sort_keys=True)
    digest = mainjob.graph_digest(graph)
    semantic.remove_embeddings(graph, corpus="sciarg")
    first = mainjob.embed_units(graph)
    assert first is not None and first.written == {"Proposition": 115, "Locution": 0}
    again = mainjob.embed_units(graph)
    assert again is not None and again.written == {"Proposition": 0, "Locution": 0}
    assert json.dumps(graph.store().stats(), sort_keys=True) == stats
    assert mainjob.graph_digest(graph) == digest


def test_link_across_corpora_writes_one_run_idempotently_and_deletes(
    embedded: tuple[Graph, dict[str, object]], sem_settings: Settings
) -> None:
    from api.services import predictions
    from api.services.links import link_across_corpora
    from gnn.links import MODEL, LinkOptions

    graph, _ = embedded
    store = graph.store()
    gold_before = store.run("MATCH (r:Relation) WHERE r.origin IS NULL RETURN count(r) AS n")[0]["n"]
    opts = LinkOptions(k=2, threshold=0.3, rephrase_cosine=0.5)
    dry = link_across_corpora(graph, sem_settings, opts)
    assert dry.propositions > 300 and 0 < dry.candidates <= 2 * dry.propositions
    assert dry.links and dry.run_id is None
    assert all(x.source_corpus != x.target_corpus for x in dry.links)
    assert all(x.score >= 0.3 and x.label.value != "none" for x in dry.links)
    assert sum(dry.counts.values()) == len(dry.links) and len(dry.sample) == min(5, len(dry.links))
    assert not store.run("MATCH (r:Relation {origin: 'predicted'}) RETURN r.id AS id LIMIT 1")

    wrote = link_across_corpora(graph, sem_settings, opts, write=True)
    assert wrote.written == len(wrote.links) == len(dry.links) and wrote.run_id is not None
    stored = store.run(
        "MATCH (r:Relation {run_id: $run}) RETURN r.origin AS origin, r.model AS model, r.model_version AS v, "
        "r.score AS score, [(a)-[:AIF_EDGE]->(r) | a.corpus] AS src, [(r)-[:AIF_EDGE]->(b) | b.corpus] AS tgt",
        run=wrote.run_id,
    )
    assert len(stored) == wrote.written
    assert {r["origin"] for r in stored} == {"predicted"} and {r["model"] for r in stored} == {MODEL}
    assert all(r["src"][0] != r["tgt"][0] for r in stored)
    again = link_across_corpora(graph, sem_settings, opts, write=True)
    assert again.run_id == wrote.run_id and again.written == 0
    assert store.run("MATCH (r:Relation) WHERE r.origin IS NULL RETURN count(r) AS n")[0]["n"] == gold_before
    assert predictions.delete_predictions(graph, MODEL) == wrote.written
    assert not store.run("MATCH (r:Relation {run_id: $run}) RETURN r.id AS id", run=wrote.run_id)


def test_http_semantic_search(embedded: tuple[Graph, dict[str, object]], sem_settings: Settings) -> None:
    from fastapi.testclient import TestClient

    from api.app import create_app

    with TestClient(create_app(sem_settings)) as client:
        r = client.get("/search", params={"q": "3D character models used in medicine", "semantic": "true", "limit": 3})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["semantic"] is True and len(body["items"]) == 3
        assert body["items"][0]["id"] == "sciarg:A01:T1" and body["items"][0]["label"] == "Proposition"
        r = client.get("/search", params={"q": "court", "semantic": "true", "corpus": "molweni", "limit": 4})
        assert r.status_code == 200 and {h["corpus"] for h in r.json()["items"]} == {"molweni"}
        r = client.get("/search", params={"q": "court", "semantic": "true", "cursor": "MA"})
        assert r.status_code == 400 and r.headers["content-type"].startswith("application/problem+json")
        words = client.get("/search", params={"q": "character models"})
        assert words.status_code == 200 and "node" in words.json()["items"][0]
        assert "/search" in client.get("/openapi.json").json()["paths"]
        semantic.remove_embeddings(Graph(sem_settings, driver=embedded[0].driver()))
        try:
            r = client.get("/search", params={"q": "court", "semantic": "true"})
            assert r.status_code == 404 and "argweb embed" in r.json()["detail"]
        finally:
            semantic.embed_graph(embedded[0], sem_settings)


def test_missing_index_is_not_found(driver: Driver, sem_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    graph = Graph(sem_settings, driver=driver)
    semantic.remove_embeddings(graph)
    try:
        # Said before the encoder is loaded (seconds on a cold start): the query is not encoded.
        def no_encoder(*args: object, **kwargs: object) -> None:
            raise AssertionError("the encoder was loaded for a graph with nothing embedded")

        with monkeypatch.context() as m:
            m.setattr(semantic, "encoder", no_encoder)
            with pytest.raises(NotFoundError, match="argweb embed"):
                semantic.search(graph, sem_settings, "court")
            with pytest.raises(NotFoundError, match="argweb embed"):
                semantic.nearest(graph, sem_settings, ["court"])
    finally:
        semantic.embed_graph(graph, sem_settings)
