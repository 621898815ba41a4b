"""Load corpus files into the graph."""

from __future__ import annotations

from pathlib import Path

from api.services.graph import Graph
from api.services.reporting import SILENT, Reporter
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


def write_bundle(store: GraphStore, bundle: CorpusBundle, reporter: Reporter = SILENT) -> IngestReport:
    """Write a parsed corpus (all-or-nothing) and report what was written."""
    total = len(bundle.nodes) + len(bundle.edges)
    with reporter.progress(bundle.corpus.id, total) as advance:
        report = store.ingest(bundle, progress=advance)
    reporter.log(
        f"{report.corpus}: {report.nodes} nodes + {report.edges} relationships in {report.seconds:.1f}s "
        f"({report.items / max(report.seconds, 1e-9):,.0f} items/s)"
    )
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
