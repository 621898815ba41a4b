"""Whole-graph operations on corpora: the main job (load everything found), counts, deletion."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from api.services.graph import Graph
from api.services.ingest import write_bundle
from api.services.reporting import SILENT, Reporter
from api.settings import Settings
from graphstore.loaders.registry import CORPORA, SAMPLES
from graphstore.store import IngestReport

# Where a checkout next to the shared data finds the corpora.
SHARED_CORPORA = Path("../shared/corpora")


def corpora_root(settings: Settings) -> Path:
    """The corpora directory: ``settings.corpora``, else ``../shared/corpora``, else the samples.

    A candidate counts only when it exists and holds files of at least one known corpus.
    """
    for candidate in (settings.corpora, SHARED_CORPORA):
        if candidate is not None and candidate.is_dir() and any(spec.find(candidate) for spec in CORPORA.values()):
            return candidate
    return SAMPLES


@dataclass
class RunReport:
    """What the main job did.

    Attributes:
        root: The corpora directory used.
        ingested: One report per corpus loaded.
        skipped: Corpora without files under ``root``.
        stats: Graph counts afterwards (as :func:`stats`).
        seconds: Wall time.
    """

    root: Path
    ingested: list[IngestReport] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


def run_all(graph: Graph, root: Path, reporter: Reporter = SILENT) -> RunReport:
    """Load every corpus found under ``root`` (idempotent: ingest merges on stable ids).

    Raises:
        LoaderError: A corpus file is malformed (that corpus is not written; earlier ones stay).
        GraphStoreError: Neo4j failed.
    """
    started = time.perf_counter()
    report = RunReport(root=root)
    store = graph.store()
    for spec in CORPORA.values():
        files = spec.find(root)
        if not files:
            reporter.log(f"{spec.name}: no files under {root / spec.folder}, skipped")
            report.skipped.append(spec.name)
            continue
        report.ingested.append(write_bundle(store, spec.load(files), reporter))
    report.stats = store.stats()
    report.seconds = time.perf_counter() - started
    return report


def stats(graph: Graph) -> dict[str, Any]:
    """Counts per label, relationship type and corpus (see :meth:`GraphStore.stats`)."""
    return graph.store().stats()


def delete_corpus(graph: Graph, corpus: str) -> None:
    """Remove a corpus and everything in it."""
    graph.store().delete_corpus(corpus)
