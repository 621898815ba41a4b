"""Load corpus files into the graph."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from api.services.graph import Graph, embedded_server
from api.services.reporting import SILENT, Reporter
from graphstore import cypher
from graphstore.bulk import BulkLoader, BulkReport
from graphstore.loaders.registry import CORPORA, files_for
from graphstore.store import GraphStore, IngestReport
from ontology.errors import ApiError
from ontology.records import CorpusBundle


def load_files(corpus: str, paths: list[Path]) -> CorpusBundle:
    """Parse and validate the files of ``corpus`` (files or directories); nothing is written.

    Raises:
        ApiError: Unknown corpus.
        LoaderError: A file is malformed (the message names the file and the record).
    """
    if corpus not in CORPORA:
        raise ApiError(f"unknown corpus {corpus!r}; known: {', '.join(CORPORA)}")
    return CORPORA[corpus].load(files_for(corpus, paths))


def _written(report: IngestReport | BulkReport, detail: str = "") -> str:
    """What a load wrote and how fast, for the log (``detail`` goes inside the closing parenthesis)."""
    return (
        f"{report.nodes} nodes + {report.edges} relationships in {report.seconds:.1f}s "
        f"({report.items / max(report.seconds, 1e-9):,.0f} items/s{detail})"
    )


def write_bundle(store: GraphStore, bundle: CorpusBundle, reporter: Reporter = SILENT) -> IngestReport:
    """Write a parsed corpus (all-or-nothing) and report what was written."""
    total = len(bundle.nodes) + len(bundle.edges)
    with reporter.progress(bundle.corpus.id, total) as advance:
        report = store.ingest(bundle, progress=advance)
    reporter.log(f"{report.corpus}: {_written(report)}")
    return report


def ingest_files(graph: Graph, corpus: str, paths: list[Path], reporter: Reporter = SILENT) -> IngestReport:
    """Parse the files of ``corpus`` and, only when all of them are valid, write them.

    Raises:
        ApiError: Unknown corpus.
        LoaderError: A file is malformed (nothing written).
        GraphStoreError: Neo4j failed (nothing of this run kept).
    """
    bundle = load_files(corpus, paths)
    return write_bundle(graph.store(), bundle, reporter)


def graph_empty(graph: Graph) -> bool:
    """True when the database holds no node at all."""
    return not graph.store().run(cypher.any_node())


def bulk_load(graph: Graph, sources: Sequence[Callable[[], CorpusBundle]], reporter: Reporter = SILENT) -> BulkReport:
    """Bulk first load: parse each source in turn, import them all offline, restart, create the schema.

    Only for the embedded server with an empty database; the graph equals what
    :func:`write_bundle` of each bundle would leave. ``graph``'s driver is closed first (the server
    restarts) and reconnects on its next use.

    Raises:
        ApiError: An external Neo4j is configured, or the database is not empty.
        LoaderError: A file is malformed (nothing written).
        GraphStoreError: The importer or the server failed.
    """
    settings = graph.settings
    if settings.neo4j_uri:
        raise ApiError(
            f"bulk load refused: it needs the embedded Neo4j, but an external server is configured "
            f"({settings.neo4j_uri}); ingest without --bulk"
        )
    graph.close()
    loader = BulkLoader(embedded_server(settings), database=settings.neo4j_database)
    report = loader.load(sources, progress=reporter.log)
    phases = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in report.phases.items())
    reporter.log(f"bulk load of {', '.join(report.corpora)}: {_written(report, f'; {phases}')}")
    return report


def bulk_ingest_files(graph: Graph, corpus: str, paths: list[Path], reporter: Reporter = SILENT) -> BulkReport:
    """:func:`ingest_files` through the offline importer (empty embedded database only).

    Raises:
        ApiError: Unknown corpus, external server, or a database that is not empty.
        LoaderError: A file is malformed (nothing written).
        GraphStoreError: The importer or the server failed.
    """
    bundle = load_files(corpus, paths)
    return bulk_load(graph, [lambda: bundle], reporter)
