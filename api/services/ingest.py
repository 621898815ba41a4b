"""Load corpus files into the graph."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from api.services.graph import Graph, embedded_server
from api.services.reporting import SILENT, Reporter
from graphstore import cypher
from graphstore.bulk import BulkLoader, BulkReport
from graphstore.store import GraphStore, IngestReport
from ontology.errors import ApiError
from ontology.formats.common import REMARK
from ontology.formats.registry import load_corpus, load_format
from ontology.records import CorpusBundle


def _written(report: IngestReport | BulkReport, detail: str = "") -> str:
    """What a load wrote and how fast, for the log (``detail`` goes inside the closing parenthesis)."""
    return (
        f"{report.nodes} nodes + {report.edges} relationships in {report.seconds:.1f}s "
        f"({report.items / max(report.seconds, 1e-9):,.0f} items/s{detail})"
    )


MAX_NOTES = 20


def report_notes(bundle: CorpusBundle, reporter: Reporter) -> CorpusBundle:
    """Say what the files of ``bundle`` left incomplete: the first :data:`MAX_NOTES` notes as detail
    lines (the log; the console too when the reporter shows details) and one warning with the count,
    whichever path (transactional or bulk) writes the bundle. Returns ``bundle``."""
    if not bundle.notes:
        return bundle
    for note in bundle.notes[:MAX_NOTES]:
        reporter.log(f"partial: {note}")
    if len(bundle.notes) > MAX_NOTES:
        reporter.log(f"partial: ... and {len(bundle.notes) - MAX_NOTES} more note(s)")
    # What the annotated corpora themselves hold (REMARK) is logged only: a warning on every load
    # of the gold data would say nothing the user can act on.
    incomplete = sum(not note.startswith(REMARK) for note in bundle.notes)
    if incomplete:
        reporter.warn(
            f"{bundle.corpus.id}: {incomplete} relation(s) incomplete in the files (no premise or no "
            "conclusion), stored as they are"
        )
    return bundle


def write_bundle(store: GraphStore, bundle: CorpusBundle, reporter: Reporter = SILENT) -> IngestReport:
    """Write a parsed corpus (all-or-nothing) and report what was written, and what the files left out."""
    total = len(bundle.nodes) + len(bundle.edges)
    with reporter.progress(bundle.corpus.id, total) as advance:
        report = store.ingest(bundle, progress=advance)
    reporter.log(f"{report.corpus}: {_written(report)}")
    report_notes(bundle, reporter)
    return report


def ingest_files(graph: Graph, corpus: str, paths: list[Path], reporter: Reporter = SILENT) -> IngestReport:
    """Parse the files of ``corpus`` and, only when all of them are valid, write them.

    Raises:
        ApiError: Unknown corpus.
        LoaderError: A file is malformed (nothing written).
        GraphStoreError: Neo4j failed (nothing of this run kept).
    """
    bundle = load_corpus(corpus, paths)
    return write_bundle(graph.store(), bundle, reporter)


def ingest_format(
    graph: Graph,
    name: str,
    paths: list[Path],
    corpus: str | None = None,
    variant: str | None = None,
    reporter: Reporter = SILENT,
) -> IngestReport:
    """Parse maps in another tool's format (:func:`ontology.formats.registry.load_format`) and, only
    when all are valid, write them.

    Raises:
        ApiError: Unknown format, bad or gold corpus. LoaderError: A malformed file (nothing written).
        GraphStoreError: Neo4j failed (nothing of this run kept).
    """
    bundle = load_format(name, paths, corpus, variant)
    return write_bundle(graph.store(), bundle, reporter)


def graph_empty(graph: Graph) -> bool:
    """True when the database holds no node at all."""
    return not graph.store().read(cypher.any_node())


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
    noted = [lambda source=source: report_notes(source(), reporter) for source in sources]
    report = loader.load(noted, progress=reporter.log)
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
    bundle = load_corpus(corpus, paths)
    return bulk_load(graph, [lambda: bundle], reporter)
