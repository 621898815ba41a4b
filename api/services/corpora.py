"""Corpora in the graph: ingest of files and bundles (transactional or bulk), the main job's load of
everything found, counts, deletion."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from api.services.graph import Graph, embedded_server
from api.settings import Settings
from graphstore.bulk import BulkLoader, BulkReport
from graphstore.recovery import recover_interrupted, undo_in_background
from graphstore.store import GraphStore, IngestReport
from ontology.errors import ApiError, StoreNotEmptyError
from ontology.formats import registry
from ontology.formats.common import report_notes
from ontology.formats.registry import CORPORA, load_corpus, load_format, read_corpus
from ontology.progress import SILENT, Reporter
from ontology.records import CorpusBundle
from ontology.views import GraphStats


def recover_leftovers(graph: Graph, reporter: Reporter | None = None) -> list[str]:
    """Undo the leftovers of every ingest whose process was killed mid-way; the corpora recovered
    (:func:`graphstore.recovery.recover_interrupted`; the reporter hears one warning per corpus).

    Called when the API and the main job start; a database that cannot be reached is not an error here.
    """
    return recover_interrupted(graph.store, reporter.warn if reporter is not None else None)


def undo_soon(graph: Graph, corpora: list[str]) -> list[str]:
    """Undo, in a background thread, the interrupted ingests of ``corpora`` that a read met; the corpora
    whose undo this call started (:func:`graphstore.recovery.undo_in_background`).

    The running API calls this from every read that refuses a half-loaded corpus whose ingest
    process is gone (killed, or the API itself killed during ``POST /aif`` and started again).
    """
    return undo_in_background(graph.store, corpora)


def corpora_root(settings: Settings) -> Path:
    """The corpora directory of ``settings`` (:func:`ontology.formats.registry.corpora_root`)."""
    return registry.corpora_root(settings.corpora)


@dataclass
class RunReport:
    """What the main job did.

    Attributes:
        root: The corpora directory used.
        ingested: One report per corpus loaded transactionally.
        bulk: The report of a bulk first load (then ``ingested`` is empty).
        skipped: Corpora without files under ``root``.
        unchanged: Corpora not read again: their files and reader give the input digest of their
            last complete load.
        stats: Graph counts afterwards (as :func:`stats`).
        seconds: Wall time.
    """

    root: Path
    ingested: list[IngestReport] = field(default_factory=list)
    bulk: BulkReport | None = None
    skipped: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


def run_all(
    graph: Graph, root: Path, reporter: Reporter = SILENT, bulk: bool | None = None, reload: bool = False
) -> RunReport:
    """Load every corpus found under ``root`` (idempotent: ingest merges on stable ids).

    A corpus whose last load completed with the input digest its files and reader give now
    (:meth:`CorpusSpec.input_digest`, recorded on its marker) is not read again, unless
    ``reload``; every load records the digest it read.

    A first load into an empty embedded database goes through the offline importer (same graph,
    several times faster); ``bulk=False`` forces transactional ingest, ``bulk=True`` insists on the
    importer (refused on a non-empty or external database). A first load whose database stopped
    being empty before the importer's lease was taken (a concurrent ingest came first) loads
    transactionally instead, merging with what the other write wrote.

    Raises:
        LoaderError: A corpus file is malformed (that corpus is not written; earlier ones stay).
        GraphStoreError: Neo4j failed.
    """
    started = time.perf_counter()
    report = RunReport(root=root)
    recover_leftovers(graph, reporter)
    found = []
    for spec in CORPORA.values():
        files = spec.find(root)
        if not files:
            reporter.log(f"{spec.name}: no files under {root / spec.folder}, skipped")
            report.skipped.append(spec.name)
            continue
        found.append((spec, files))
    chosen = bulk
    if bulk is None:
        bulk = bool(found) and not graph.settings.neo4j_uri and graph.store().empty()
    digests = {spec.name: spec.input_digest(root) for spec, _ in found}
    if bulk:
        sources = [partial(read_corpus, spec, files, digests[spec.name]) for spec, files in found]
        try:
            report.bulk = bulk_load(graph, sources, reporter)
        except StoreNotEmptyError:
            if chosen:
                raise
            # Another write came first (it took its turn before the bulk load's lease): merge into it.
            reporter.log("the database is no longer empty (another write came first): loading transactionally")
            bulk = False
    if not bulk:
        store = graph.store()
        loaded = {} if reload else store.input_digests()
        for spec, files in found:
            if loaded.get(spec.name) == digests[spec.name]:
                reporter.log(f"{spec.name}: files and reader unchanged since its last complete load, not read again")
                report.unchanged.append(spec.name)
                continue
            report.ingested.append(write_bundle(store, read_corpus(spec, files, digests[spec.name]), reporter))
    report.stats = graph.store().stats()
    report.seconds = time.perf_counter() - started
    return report


def stats(graph: Graph, include_predicted: bool = False) -> GraphStats:
    """Counts per label, relationship type and corpus (see :meth:`GraphStore.stats`): gold only by default."""
    return GraphStats.from_counts(graph.store().stats(include_predicted))


def delete_corpus(graph: Graph, corpus: str) -> None:
    """Remove a corpus and everything in it."""
    graph.store().delete_corpus(corpus)


# -- ingest of files and bundles ---------------------------------------------------------------------


def _written(report: IngestReport | BulkReport, detail: str = "") -> str:
    """What a load wrote and how fast, for the log (``detail`` goes inside the closing parenthesis)."""
    return (
        f"{report.nodes} nodes + {report.edges} relationships in {report.seconds:.1f}s "
        f"({report.items / max(report.seconds, 1e-9):,.0f} items/s{detail})"
    )


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
