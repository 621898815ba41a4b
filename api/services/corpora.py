"""Whole-graph operations on corpora: the main job (load everything found), counts, deletion."""

from __future__ import annotations

import dataclasses
import logging
import threading
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
from graphstore.store import IngestReport
from ontology.errors import ArgwebError, StoreNotEmptyError
from ontology.formats.registry import CORPORA, SAMPLES, CorpusSpec
from ontology.records import CorpusBundle
from ontology.views import GraphStats

# Where a checkout next to the shared data finds the corpora.
SHARED_CORPORA = Path("../shared/corpora")
# Where `argweb fetch` puts corpora when neither --dest nor ARGWEB_CORPORA says otherwise.
FETCHED_CORPORA = Path("corpora")

log = logging.getLogger("argweb.recover")


def recover_leftovers(graph: Graph, reporter: Reporter | None = None) -> list[str]:
    """Undo the leftovers of every ingest whose process was killed mid-way; the corpora recovered.

    Called when the API and the main job start: a corpus left ``loading`` is undone from its
    journal (what the run created goes, what it changed is put back), so that it is never served
    or exported as if it were whole. A run still going on elsewhere is left alone; a database that
    cannot be reached is not an error here (nothing to recover from then).
    """
    try:
        recovered = graph.store().recover_all()
    except ArgwebError as e:
        log.warning("recovery of interrupted ingests skipped: %s", e)
        return []
    for corpus in recovered:
        message = f"{corpus}: the leftovers of an interrupted ingest were undone"
        log.warning(message)
        if reporter is not None:
            reporter.warn(message)
    return recovered


# Corpora whose undo a background thread of this process is running (the API's reads ask for it).
_UNDOING: set[str] = set()
_UNDOING_LOCK = threading.Lock()


def undo_soon(graph: Graph, corpora: list[str]) -> list[str]:
    """Undo, in a background thread, the interrupted ingests of ``corpora`` that a read met; the corpora
    whose undo this call started (none that is already being undone).

    The running API calls this from every read that refuses a half-loaded corpus whose ingest
    process is gone (killed, or the API itself killed during ``POST /aif`` and started again), so
    that the corpus is served again seconds later, without a restart or another ingest. The undo
    is :meth:`GraphStore.recover` (a run still going on is left alone); one that fails is tried
    again by the next read that meets the corpus.
    """
    with _UNDOING_LOCK:
        started = [corpus for corpus in corpora if corpus not in _UNDOING]
        _UNDOING.update(started)
    if not started:
        return []

    def work() -> None:
        try:
            # Not held for minutes behind a bulk load or a live ingest: the next read asks again.
            store = dataclasses.replace(graph.store(), claim_wait=10.0, bulk_wait=0.0)
            for corpus in started:
                try:
                    if store.recover(corpus):
                        log.warning("%s: the leftovers of an interrupted ingest were undone", corpus)
                except ArgwebError as e:
                    log.warning("undo of the ingest of %s failed (the next read tries again): %s", corpus, e)
        except ArgwebError as e:
            log.warning("undo of interrupted ingests skipped: %s", e)
        finally:
            with _UNDOING_LOCK:
                _UNDOING.difference_update(started)

    threading.Thread(target=work, name="argweb-undo", daemon=True).start()
    return started


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
        bulk = bool(found) and not graph.settings.neo4j_uri and graph_empty(graph)
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


def read_corpus(spec: CorpusSpec, files: list[Path], digest: str) -> CorpusBundle:
    """Parse ``files`` of corpus ``spec`` into a bundle carrying ``digest`` (its input digest, which a
    completed load records on the corpus marker).

    Raises:
        LoaderError: A file is malformed.
    """
    bundle = spec.load(files)
    bundle.input_digest = digest
    return bundle


def stats(graph: Graph, include_predicted: bool = False) -> GraphStats:
    """Counts per label, relationship type and corpus (see :meth:`GraphStore.stats`): gold only by default."""
    return GraphStats.from_counts(graph.store().stats(include_predicted))


def delete_corpus(graph: Graph, corpus: str) -> None:
    """Remove a corpus and everything in it."""
    graph.store().delete_corpus(corpus)
