"""Whole-graph operations on corpora: the main job (load everything found), counts, deletion."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from api.services.graph import Graph
from api.services.ingest import bulk_load, graph_empty, write_bundle
from api.services.reporting import SILENT, Reporter
from api.settings import Settings
from graphstore.bulk import BulkReport
from graphstore.loaders.registry import CORPORA, SAMPLES
from graphstore.store import IngestReport

# Where a checkout next to the shared data finds the corpora.
SHARED_CORPORA = Path("../shared/corpora")
# Where `argweb fetch` puts corpora when neither --dest nor ARGWEB_CORPORA says otherwise.
FETCHED_CORPORA = Path("corpora")


def corpora_root(settings: Settings) -> Path:
    """The corpora directory: ``settings.corpora``, else what ``argweb fetch`` fetched (``./corpora``),
    else ``../shared/corpora``, else the samples.

    A candidate counts only when it exists and holds files of at least one known corpus.
    """
    for candidate in (settings.corpora, FETCHED_CORPORA, SHARED_CORPORA):
        if candidate is not None and candidate.is_dir() and any(spec.find(candidate) for spec in CORPORA.values()):
            return candidate
    return SAMPLES


@dataclass
class RunReport:
    """What the main job did.

    Attributes:
        root: The corpora directory used.
        ingested: One report per corpus loaded transactionally.
        bulk: The report of a bulk first load (then ``ingested`` is empty).
        skipped: Corpora without files under ``root``.
        stats: Graph counts afterwards (as :func:`stats`).
        seconds: Wall time.
    """

    root: Path
    ingested: list[IngestReport] = field(default_factory=list)
    bulk: BulkReport | None = None
    skipped: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


def run_all(graph: Graph, root: Path, reporter: Reporter = SILENT, bulk: bool | None = None) -> RunReport:
    """Load every corpus found under ``root`` (idempotent: ingest merges on stable ids).

    A first load into an empty embedded database goes through the offline importer (same graph,
    several times faster); ``bulk=False`` forces transactional ingest, ``bulk=True`` insists on the
    importer (refused on a non-empty or external database).

    Raises:
        LoaderError: A corpus file is malformed (that corpus is not written; earlier ones stay).
        GraphStoreError: Neo4j failed.
    """
    started = time.perf_counter()
    report = RunReport(root=root)
    found = []
    for spec in CORPORA.values():
        files = spec.find(root)
        if not files:
            reporter.log(f"{spec.name}: no files under {root / spec.folder}, skipped")
            report.skipped.append(spec.name)
            continue
        found.append((spec, files))
    if bulk is None:
        bulk = bool(found) and not graph.settings.neo4j_uri and graph_empty(graph)
    if bulk:
        report.bulk = bulk_load(graph, [partial(spec.load, files) for spec, files in found], reporter)
    else:
        store = graph.store()
        for spec, files in found:
            report.ingested.append(write_bundle(store, spec.load(files), reporter))
    report.stats = graph.store().stats()
    report.seconds = time.perf_counter() - started
    return report


def stats(graph: Graph, include_predicted: bool = False) -> dict[str, Any]:
    """Counts per label, relationship type and corpus (see :meth:`GraphStore.stats`): gold only by default."""
    return graph.store().stats(include_predicted)


def delete_corpus(graph: Graph, corpus: str) -> None:
    """Remove a corpus and everything in it."""
    graph.store().delete_corpus(corpus)
