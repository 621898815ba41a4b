"""Bulk first load against real embedded Neo4j servers: the same graph as a transactional load.

The transactional side uses the session server; the bulk side a private server of this module,
which the importer stops and restarts. Graphs are compared node by node and relationship by
relationship (labels, every property with its type, ends), besides ``stats`` and the competency
answers; only the per-run ingest ids differ.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from api.services.corpora import bulk_load, read_corpus, run_all, write_bundle
from api.services.graph import Graph, embedded_server
from bench.synth import bundle_sources, generate, read_manifest
from graphstore import cypher
from graphstore.bulk import import_outcome
from graphstore.store import GraphStore
from ontology.competency import load_questions, normalise
from ontology.errors import ApiError, DatabaseUnavailableError
from ontology.formats.registry import CORPORA, SAMPLES
from tests.conftest import embedded_settings


def dump(store: GraphStore) -> tuple[list[Any], list[Any]]:
    """Every node and relationship, ingest run ids replaced by a placeholder."""

    def canon(props: dict[str, Any]) -> list[tuple[str, Any]]:
        return sorted((k, "<run>" if k in ("batch", "ingest_run") else v) for k, v in props.items())

    nodes = [(r["id"], sorted(r["labels"]), canon(r["props"])) for r in store.run(cypher.dump_nodes())]
    rels = [(r["source"], r["type"], r["target"], canon(r["props"])) for r in store.run(cypher.dump_relationships())]
    return nodes, rels


def answers(store: GraphStore) -> dict[str, Any]:
    out = {}
    for q in load_questions():
        rows = store.run(q.cypher)
        out[q.name] = normalise(rows, list(rows[0]) if rows else [])
    return out


@pytest.fixture(scope="module")
def bulk_graph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Graph]:
    settings = embedded_settings(tmp_path_factory.mktemp("bulk"))
    server = embedded_server(settings)
    server.start()
    graph = Graph(settings)
    try:
        yield graph
    finally:
        graph.close()
        server.stop()


def transactional(store: GraphStore, sources: list[Any]) -> None:
    for source in sources:
        write_bundle(store, source())


def test_main_job_bulk_loads_an_empty_database_into_the_same_graph(store: GraphStore, bulk_graph: Graph) -> None:
    # Read as the main job reads them (with their input digests), loaded transactionally.
    sources = [
        lambda s=spec: read_corpus(s, s.find(SAMPLES), s.input_digest(SAMPLES))
        for spec in CORPORA.values()
        if spec.find(SAMPLES)
    ]
    transactional(store, sources)
    report = run_all(bulk_graph, SAMPLES)
    assert report.bulk is not None and report.ingested == []
    assert sorted(report.bulk.corpora) == sorted(s.name for s in CORPORA.values() if s.find(SAMPLES))
    bulk = bulk_graph.store()
    expected_nodes, expected_rels = dump(store)
    nodes, rels = dump(bulk)
    assert len(nodes) == report.bulk.nodes and len(rels) == report.bulk.edges
    assert nodes == expected_nodes
    assert rels == expected_rels
    assert bulk.stats() == store.stats()
    assert answers(bulk) == answers(store)
    # The same constraints and indexes as ensure_schema() creates on a transactional load.
    indexes = {r["name"] for r in bulk.run("SHOW INDEXES YIELD name RETURN name")}
    assert {"node_id", "corpus_id", "node_corpus", "node_batch", "relation_origin"} <= indexes


def test_bulk_is_refused_on_a_non_empty_database_and_changes_nothing(bulk_graph: Graph) -> None:
    before = dump(bulk_graph.store())
    assert before[0], "the previous test leaves the samples loaded"
    spec = CORPORA["molweni"]
    with pytest.raises(ApiError, match="not empty"):
        bulk_load(bulk_graph, [lambda: spec.load(spec.find(SAMPLES))])
    assert dump(bulk_graph.store()) == before
    # The main job on a loaded graph reads no corpus whose files are unchanged since its (bulk) load...
    names = sorted(s.name for s in CORPORA.values() if s.find(SAMPLES))
    report = run_all(bulk_graph, SAMPLES)
    assert report.bulk is None and report.ingested == [] and sorted(report.unchanged) == names
    assert dump(bulk_graph.store()) == before
    # ...and asked to read them again, merges them transactionally: nothing changes.
    report = run_all(bulk_graph, SAMPLES, reload=True)
    assert report.bulk is None and sorted(r.corpus for r in report.ingested) == names and report.unchanged == []
    assert dump(bulk_graph.store()) == before


def test_a_synthetic_corpus_bulk_loads_into_the_same_graph(
    store: GraphStore, bulk_graph: Graph, driver: Driver, tmp_path: Path
) -> None:
    generate(tmp_path / "synth", 6000, seed=3, shard_items=2500)
    sources = bundle_sources(tmp_path / "synth")
    assert len(sources) >= 4  # several AIF shards, Molweni and STAC
    transactional(store, sources)
    bulk_graph.store().clear()
    report = bulk_load(bulk_graph, sources)
    # The manifest's count is exact; the target is met up to one map or dialogue per shard.
    assert report.items == sum(shard.items for shard in read_manifest(tmp_path / "synth")) >= 6000
    bulk = bulk_graph.store()
    assert dump(bulk) == dump(store)
    assert bulk.stats() == store.stats()


def test_a_failed_import_ends_the_launcher_before_any_database_starts(tmp_path: Path) -> None:
    # The launcher runs the importer in its own JVM first (graphstore.bulk); an import that fails
    # must not be followed by a server on whatever it left, and its output must reach the caller.
    server = embedded_server(embedded_settings(tmp_path / "data"))
    args = tmp_path / "import.args"
    # The report file named, as the bulk loader does: the importer's default lands in the working directory.
    args.write_text(
        f"database\nimport\nfull\nneo4j\n--report-file={tmp_path / 'import.report'}\n"
        f"--nodes=Node={tmp_path / 'absent.csv'}\n",
        encoding="utf-8",
    )
    try:
        with pytest.raises(DatabaseUnavailableError, match="exited with 3") as failed:
            server.start(timeout=300, import_args=args)
        outcome = import_outcome(server.log_file.read_bytes())
        assert outcome is not None and outcome[0] != 0
        assert "absent.csv" in str(failed.value)  # the importer's own message, in the log tail
        assert server.info() is None and "argweb-neo4j ready" not in server.log_file.read_text()
    finally:
        server.stop()
