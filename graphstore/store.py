"""Batched, idempotent, all-or-nothing ingest of :class:`~ontology.records.CorpusBundle` s."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from neo4j import Driver
from neo4j.exceptions import DriverError, Neo4jError

from graphstore import cypher
from graphstore.errors import database_error
from graphstore.statements import Statements, retrying
from ontology.errors import (
    CorpusIncompleteError,
    DatabaseUnavailableError,
    GraphStoreError,
    NotFoundError,
    WriteConflictError,
)
from ontology.progress import Advance
from ontology.records import CorpusBundle, EdgeRecord, NodeRecord
from ontology.terms import Label, Prop, RelType
from ontology.views import RelationCount, most_specific

T = TypeVar("T")
DEFAULT_LEASE_MS = 120_000
DEFAULT_CLAIM_WAIT = 900.0


def process_token(pid: int | None = None) -> str:
    """``host:pid:start`` of a process (this one by default); the start time tells a reused pid apart."""
    pid = os.getpid() if pid is None else pid
    try:
        start = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        start = "?"
    return f"{socket.gethostname()}:{pid}:{start}"


# Ingest runs of this process still in progress: a run of this process that is not among them
# was interrupted (its error handling could not reach the database) and is dead like a killed one.
_ACTIVE_RUNS: set[str] = set()


@contextlib.contextmanager
def running(run: str) -> Iterator[None]:
    """Count ``run`` (an ingest or bulk load of this process) as alive while the block runs."""
    _ACTIVE_RUNS.add(run)
    try:
        yield
    finally:
        _ACTIVE_RUNS.discard(run)


def owner_gone(owner: str | None, run: str | None = None) -> bool:
    """Whether the owner of ingest ``run`` is a process of this host that no longer runs it."""
    if not owner:
        return True
    if owner == process_token():
        return run not in _ACTIVE_RUNS
    host, _, rest = owner.partition(":")
    pid_text = rest.split(":", 1)[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False  # another machine: only its lease can tell
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    return process_token(int(pid_text)) != owner


DEFAULT_BATCH_SIZE = 5000


def unreachable_reason(e: BaseException) -> str:
    """Why the driver could not reach the server, in a few words on one line (``Connection refused``)."""
    text = " ".join(str(e).split())
    found = re.search(r"reason (?:\[Errno \d+\] )?([^)]*)\)", text)
    if found:
        return found.group(1)
    return text[:200] or type(e).__name__


def bulk_holder(row: dict[str, Any] | None) -> str | None:
    """The owner of a bulk load that holds the write lease, from a :func:`cypher.write_turn` row, or None.

    A lease whose time ran out, or whose owner process is gone (a killed bulk load), holds nothing.
    """
    if row is None or not row.get("owner") or not row.get("current"):
        return None
    return None if owner_gone(row["owner"], row.get("run")) else str(row["owner"])


def bulk_refusal(holder: str, what: str, waited: float | None = None) -> WriteConflictError:
    """The error of a write that met a bulk load holding the write lease."""
    after = f"; gave up waiting after {waited:.0f}s" if waited else ""
    return WriteConflictError(
        f"{what} refused: a bulk load ({holder}) is replacing the whole store with Neo4j's offline importer{after}; "
        "nothing was written. Run it again when the bulk load has finished"
    )


def take_write_turn(statements: Statements, what: str) -> None:
    """Take a write run's turn through the write lease, or refuse while a bulk load holds it.

    Every write run that is not a corpus ingest (whose claim takes its turn in the same
    transaction) calls this before it writes: deletions and prediction runs.

    Raises:
        WriteConflictError: A live bulk load holds the lease (nothing written).
    """
    rows = statements.run(cypher.write_turn(), what=what)
    holder = bulk_holder(rows[0] if rows else None)
    if holder is not None:
        raise bulk_refusal(holder, what)


def require_whole(
    markers: Sequence[dict[str, Any]],
    touched: Collection[str | None] | None,
    what: str,
    undo: Callable[[list[str]], Any] | None = None,
) -> None:
    """The one rule of every read and export: a corpus whose marker is not ``complete`` is not served.

    A corpus is half-loaded while an ingest writes it and after one was interrupted (its process
    killed, or the database gone mid-way) until that run is undone from its journal; neither state
    may be read as if it were whole.

    Args:
        markers: The :func:`cypher.incomplete_corpora` rows (every marker not ``complete``).
        touched: The corpora the read serves (None: all of them, a whole-graph export).
        what: How the refusal ends (``"refusing to export it"``).
        undo: Called with the touched corpora whose ingest was interrupted (its process gone), to
            undo them (the running API does, in the background); None: nobody undoes them here.

    Raises:
        CorpusIncompleteError: Naming each half-loaded corpus the read touches and what to do.
    """
    hit = [row for row in markers if touched is None or row["id"] in touched]
    if not hit:
        return
    interrupted = [row["id"] for row in hit if owner_gone(row.get("owner"), row.get("run"))]
    if interrupted and undo is not None:
        undo(interrupted)
    said = []
    for row in hit:
        corpus = row["id"]
        if corpus in interrupted:
            then = (
                "the API is undoing it now: retry in a few seconds"
                if undo is not None
                else "it is undone by the next ingest of it or the next start of the API"
            )
            said.append(
                f"corpus {corpus} is half-loaded (status 'loading': its last ingest was interrupted; {then}, "
                f"or run the ingest of {corpus} again)"
            )
        else:
            said.append(
                f"corpus {corpus} is half-loaded (status 'loading': an ingest of it by {row.get('owner')} is "
                "running; retry when it has finished)"
            )
    raise CorpusIncompleteError(f"{'; '.join(said)}; {what}")


@dataclass
class IngestReport:
    """What one ingest wrote."""

    corpus: str
    nodes: int
    edges: int
    seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def items(self) -> int:
        """Nodes plus relationships."""
        return self.nodes + self.edges


def _chunks(rows: Sequence[dict[str, Any]], size: int) -> Iterator[Sequence[dict[str, Any]]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def node_groups(nodes: Sequence[NodeRecord]) -> dict[tuple[Label, ...], list[dict[str, Any]]]:
    """Group node rows by their label set (labels cannot be parameters)."""
    groups: dict[tuple[Label, ...], list[dict[str, Any]]] = defaultdict(list)
    for node in nodes:
        groups[node.labels()].append({"id": node.id, "props": node.properties()})
    return groups


def edge_groups(edges: Sequence[EdgeRecord]) -> dict[RelType, list[dict[str, Any]]]:
    """Group edge rows by relationship type."""
    groups: dict[RelType, list[dict[str, Any]]] = defaultdict(list)
    for edge in edges:
        groups[edge.type].append(
            {"source": edge.source, "target": edge.target, "id": edge.id, "props": edge.properties()}
        )
    return groups


@dataclass(eq=False)
class GraphStore(Statements):
    """Writes and reads the argweb graph through an injected Neo4j driver.

    Args:
        driver: An open ``neo4j`` driver (embedded server, standalone, cluster or Aura).
        database: Database name.
        batch_size: Rows per ``UNWIND`` transaction.
        lease_ms: How long an ingest's claim on its corpus lasts without a batch renewing it.
        claim_wait: Seconds an ingest waits for another ingest of the same corpus to finish.
        bulk_wait: Seconds an ingest waits for a bulk load holding the write lease to finish (the
            API gives 0: a request is refused at once rather than held for minutes).
        server: The server, as error messages name it (``Neo4j at bolt://...``).
        restart: What brings the server back, as error messages say it (``argweb db start``).
        restarting: Whether the server is being stopped and started on purpose now (the embedded
            server's start lock held, as a bulk load holds it): a server gone before the claim is
            then waited for (up to ``bulk_wait``) instead of reported at once.
    """

    driver: Driver
    database: str = "neo4j"
    batch_size: int = DEFAULT_BATCH_SIZE
    lease_ms: int = DEFAULT_LEASE_MS
    claim_wait: float = DEFAULT_CLAIM_WAIT
    bulk_wait: float = DEFAULT_CLAIM_WAIT
    server: str = "Neo4j"
    restart: str = "bring the database back"
    restarting: Callable[[], bool] = field(default=lambda: False, repr=False)

    def gone(self, corpus: str, e: BaseException, written: int | None) -> DatabaseUnavailableError:
        """The one-line error of an ingest of ``corpus`` whose database went away (``written``: rows
        committed by then, None before the claim), naming the server and what to run."""
        if written is None:
            what = "nothing was written"
        else:
            what = (
                f"the {written:,} row(s) committed so far stay, with corpus {corpus} marked 'loading' (reads and "
                f"exports refuse it), until the next ingest of {corpus} or the next start of the API undoes them"
            )
        return DatabaseUnavailableError(
            f"ingest of {corpus} failed: {self.server} went away ({unreachable_reason(e)}); {what}. "
            f"To finish: {self.restart}, then run the ingest of {corpus} again"
        )

    def _write(self, query: str, rows: Sequence[dict[str, Any]], batch: str, corpus: str, journal: str | None) -> None:
        """One batch, in a managed transaction that also renews this run's claim on the corpus.

        With ``journal`` the batch first keeps, in the same transaction, the state of what it is
        about to change (:func:`cypher.journal_nodes`), so that an undo puts it back exactly. The
        driver retries transient failures (deadlocks, leader changes); a batch that finds its claim
        taken over (its lease ran out) rolls back instead of writing into another run's load.
        """

        def work(tx: Any) -> None:
            if journal is not None:
                tx.run(journal, rows=list(rows), batch=batch, corpus=corpus).consume()
            tx.run(query, rows=list(rows), batch=batch).consume()
            if tx.run(cypher.renew_claim(), corpus=corpus, batch=batch, ttl=self.lease_ms).single() is None:
                raise GraphStoreError(f"the ingest of {corpus} lost its claim (lease expired); another run took over")

        with self.session() as session:
            retrying(lambda: session.execute_write(work))

    def transaction(self, work: Callable[[Any], T]) -> T:
        """``work(tx)`` in one managed write transaction (retried on transient conflicts), driver errors
        turned into argweb errors."""
        try:
            with self.session() as session:
                return retrying(lambda: session.execute_write(work))
        except (Neo4jError, DriverError, OSError) as e:
            raise database_error(e, "Neo4j query failed") from e

    # -- schema ----------------------------------------------------------------------------

    def ensure_schema(self) -> None:
        """Create the constraints and indexes derived from the ontology terms (idempotent)."""
        for stmt in cypher.constraints():
            self.run(stmt)
        self.run("CALL db.awaitIndexes(300)")

    # -- ingest ----------------------------------------------------------------------------

    def ingest(self, bundle: CorpusBundle, progress: Advance | None = None) -> IngestReport:
        """Write a corpus bundle: all of it, or (on any failure) nothing, and every existing node as it was.

        The run first takes its turn through the write lease (waiting while a bulk load holds it)
        and claims the corpus (its marker says ``loading`` under this run's batch id, with this
        process as owner and a lease renewed by every batch); another ingest of the same corpus
        waits until the claim is released, or takes it over at once when its owner process is gone
        (killed) and otherwise when its lease ran out, undoing that run first. Every node and
        relationship the run creates is stamped with its batch id; before a batch changes a node or
        relationship that already existed (a re-ingest), the same transaction keeps its state in
        the run's journal. On failure the journal is put back, the batch deleted and the error
        re-raised; if even that fails (connection gone), the marker stays ``loading`` and the next
        ingest of the corpus (or :meth:`recover`) undoes the run from its journal. At the end the
        marker's counts are those of the corpus in the graph.

        Raises:
            LoaderError: The bundle is inconsistent (nothing written).
            WriteConflictError: A bulk load held the write lease for longer than ``bulk_wait``.
            GraphStoreError: Neo4j failed, or the corpus stayed claimed by another run for longer
                than ``claim_wait``.
        """
        bundle.validate()
        corpus = bundle.corpus.id
        started = time.perf_counter()
        # Fails at once when the server cannot be reached at all; once reached, a server that goes
        # away before the claim is waited for in _claim only while a bulk load is known to hold it.
        try:
            self.read(cypher.ping())
        except DatabaseUnavailableError as e:
            raise self.gone(corpus, e, None) from e
        batch = uuid.uuid4().hex
        _ACTIVE_RUNS.add(batch)
        try:
            previous = self._claim(corpus, batch)
        except BaseException:
            _ACTIVE_RUNS.discard(batch)
            raise
        # A corpus seen for the first time has nothing to keep: its batches skip the journal.
        keep = previous is not None
        written = 0
        try:
            for labels, rows in node_groups(bundle.nodes).items():
                query = cypher.merge_nodes(labels)
                for chunk in _chunks(rows, self.batch_size):
                    self._write(query, chunk, batch, corpus, cypher.journal_nodes() if keep else None)
                    written += len(chunk)
                    if progress:
                        progress(len(chunk))
            for rel_type, rows in edge_groups(bundle.edges).items():
                query = cypher.merge_edges(rel_type)
                for chunk in _chunks(rows, self.batch_size):
                    self._write(query, chunk, batch, corpus, cypher.journal_relationships(rel_type) if keep else None)
                    written += len(chunk)
                    if progress:
                        progress(len(chunk))
            stale = self._stale_derived(corpus, batch, bundle) if keep else []
            speakers = [node.id for node in bundle.nodes if Label.Speaker in node.labels()]
            counts = self._complete(corpus, batch, bundle.input_digest, stale, speakers if keep else None)
        except (Neo4jError, DriverError, OSError, GraphStoreError) as e:
            # Keep the class (database away vs. failed statement): it decides what the caller is told.
            cls = type(e) if isinstance(e, GraphStoreError) else type(database_error(e, ""))
            if issubclass(cls, DatabaseUnavailableError):
                # A dropped connection may be back at once: try the undo. Against a server that is
                # gone its first statement (auto-commit, not retried) fails at once, and the one
                # line says what stays and what to run.
                if self._undo(corpus, batch, previous):
                    reason = unreachable_reason(e)
                    raise cls(f"ingest of {corpus} ({bundle.origin}) failed, nothing kept: {reason}") from e
                raise self.gone(corpus, e, written) from e
            if self._undo(corpus, batch, previous):
                raise cls(f"ingest of {corpus} ({bundle.origin}) failed, nothing kept: {e}") from e
            raise cls(f"ingest of {corpus} ({bundle.origin}) failed: {e}. {self._kept(corpus, written)}") from e
        except BaseException:
            self._undo(corpus, batch, previous)
            raise
        finally:
            _ACTIVE_RUNS.discard(batch)
        return IngestReport(
            corpus=corpus,
            nodes=len(bundle.nodes),
            edges=len(bundle.edges),
            seconds=time.perf_counter() - started,
            counts=counts,
        )

    def _complete(
        self,
        corpus: str,
        batch: str,
        digest: str | None,
        stale: Sequence[dict[str, Any]] = (),
        speakers: Sequence[str] | None = None,
    ) -> dict[str, int]:
        """Finish run ``batch`` in one transaction: drop what the input no longer derives (``stale``
        relationships; with ``speakers``, every Speaker of the corpus but those that no locution is
        spoken by any more), count the corpus, mark it complete and close the run's journal; then
        drop the journal. Returns the counts.

        The drops share the transaction that completes the run, so that a run that fails or is
        killed before it leaves them as they were (nothing of them needs the journal).
        """

        def work(tx: Any) -> dict[str, int]:
            if stale:
                tx.run(cypher.delete_edges(), rows=list(stale)).consume()
            if speakers is not None:
                tx.run(cypher.delete_orphan_speakers(), corpus=corpus, keep=list(speakers)).consume()
            counts = self.graph_counts(corpus, tx)
            tx.run(
                cypher.mark_corpus("complete"), corpus=corpus, batch=batch, counts=json.dumps(counts), digest=digest
            ).consume()
            tx.run(cypher.close_journal(), run=batch).consume()
            return counts

        counts = self.transaction(work)
        # Without its run entry the journal is never restored; what is left is removed by the next claim.
        with contextlib.suppress(GraphStoreError):
            self.run_auto(cypher.drop_journal(), run=batch)
        return counts

    def _stale_derived(self, corpus: str, batch: str, bundle: CorpusBundle) -> list[dict[str, Any]]:
        """The derived relationships (:data:`cypher.DERIVED_TYPES`) of the nodes ``bundle`` writes that its
        input no longer gives: a speaker changed, a unit moved. A re-ingest replaces them, as it
        replaces the nodes' properties; those of nodes the bundle does not write stay."""
        written = {node.id for node in bundle.nodes}
        given = {(edge.source, edge.type.value, edge.target) for edge in bundle.edges}
        return [
            row
            for row in self.read(cypher.corpus_derived_edges(), corpus=corpus, batch=batch)
            if row["source"] in written and (row["source"], row["type"], row["target"]) not in given
        ]

    @staticmethod
    def _kept(corpus: str, written: int) -> str:
        """What a failed ingest whose undo failed left in the graph, for its error message."""
        return (
            f"The database could not be reached to undo it: the {written:,} row(s) committed so far stay in the "
            f"graph, with corpus {corpus!r} marked 'loading' (exports and reads refuse it), until the next ingest "
            f"of {corpus} or the next start of the API undoes them from the run's journal."
        )

    def _claim_once(self, corpus: str, batch: str, stale: str) -> dict[str, Any]:
        """One attempt at the claim: the write turn, the corpus claim and the journal's first entries, in
        one transaction. Returns the claim row, or ``{"bulk": owner}`` when a bulk load holds the lease."""

        def work(tx: Any) -> dict[str, Any]:
            turn = tx.run(cypher.write_turn(), what=f"an ingest of {corpus}").single()
            holder = bulk_holder(None if turn is None else turn.data())
            if holder is not None:
                return {"bulk": holder}
            row = tx.run(
                cypher.claim_corpus(), corpus=corpus, batch=batch, owner=process_token(), ttl=self.lease_ms, stale=stale
            ).single()
            assert row is not None
            claim = row.data()
            if not claim["held"]:
                tx.run(cypher.journal_run(), batch=batch, corpus=corpus).consume()
                if claim["status"] == "loading" and claim["run"]:
                    tx.run(cypher.move_marker_journal(), stale=claim["run"], batch=batch).consume()
                elif claim["status"] is not None:
                    tx.run(cypher.journal_marker(), props=claim["before"], batch=batch, corpus=corpus).consume()
            return claim

        return self.transaction(work)

    def _claim(self, corpus: str, batch: str) -> dict[str, Any] | None:
        """Claim ``corpus`` for ``batch`` (waiting for a live claim or bulk load), undo a dead run's leftovers.

        Returns:
            The state of the last complete load (``counts`` and ``input_digest``), or None when
            there was none.

        Raises:
            WriteConflictError: A bulk load held the write lease for longer than ``bulk_wait``.
            GraphStoreError: Another ingest held the corpus for longer than ``claim_wait``.
        """
        started = time.monotonic()
        deadline = started + self.claim_wait
        stale = ""
        delay = 0.2
        bulk: str | None = None
        schema = False
        while True:
            try:
                if not schema:
                    self.ensure_schema()
                    schema = True
                row = self._claim_once(corpus, batch, stale)
            except DatabaseUnavailableError as e:
                # The server was reached (ingest pinged it) and went away. Only a bulk load known to
                # hold the write lease (seen by an earlier try, or holding the server's start lock
                # from its stop to its start) stops and restarts it: then keep waiting for it. The
                # store it starts on is new: the bookmarks of the old one must go, and the schema be
                # made again. Otherwise the server is simply gone: say so now.
                if bulk is None and self.restarting():
                    bulk = "a bulk load restarting the server"
                if bulk is None:
                    raise self.gone(corpus, e, None) from e
                if time.monotonic() > started + self.bulk_wait:
                    raise
                self.forget_bookmarks()
                schema = False
                time.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            if "bulk" in row:
                bulk = row["bulk"]
                if time.monotonic() >= started + self.bulk_wait:
                    raise bulk_refusal(row["bulk"], f"the ingest of {corpus}", self.bulk_wait or None)
                time.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            if not row["held"]:
                break
            if owner_gone(row["owner"], row["run"]):
                stale = row["run"]  # its process is gone: take over now, do not wait for the lease
                continue
            if time.monotonic() > deadline:
                raise WriteConflictError(
                    f"corpus {corpus} is being loaded by another ingest ({row['owner']}); "
                    f"gave up waiting after {self.claim_wait:.0f}s"
                )
            time.sleep(delay)
            delay = min(delay * 2, 5.0)
        if bulk is not None:
            # The store was replaced while this run waited: its bookmarks name transactions it never had.
            self.forget_bookmarks()
        # Leftovers of runs that died (or whose lease ran out): this run's claim replaced theirs.
        self._undo_dead_runs(corpus, batch, row["run"] if row["status"] == "loading" else None)
        if row["status"] is None:
            return None
        return {"counts": row["counts"], Prop.INPUT_DIGEST: (row["before"] or {}).get(Prop.INPUT_DIGEST)}

    def _undo_dead_runs(self, corpus: str, batch: str, stale: str | None) -> None:
        """Undo every interrupted ingest run of ``corpus`` but ``batch`` from its journal (``stale``: the
        run this claim replaced, undone even without a journal, as runs before the journal left none)."""
        dead = {row["run"] for row in self.read(cypher.dead_runs(), corpus=corpus, batch=batch)}
        if stale:
            dead.add(stale)
        for run in sorted(dead - {batch}):
            self._restore(run)
            self.delete_batch(run)
            self.run_auto(cypher.drop_journal(), run=run)
        self.run_auto(cypher.orphan_journal(), corpus=corpus)

    def _restore(self, run: str) -> None:
        """Put back the nodes and relationships run ``run`` changed (idempotent: safe to repeat)."""
        self.run_auto(cypher.restore_nodes(), run=run)
        self.run_auto(cypher.restore_relationships(), run=run)

    def input_digests(self) -> dict[str, str | None]:
        """The input digest each completely loaded corpus was loaded with (None: not recorded)."""
        return {row["id"]: row["digest"] for row in self.read(cypher.corpus_digests())}

    def graph_counts(self, corpus: str, tx: Any | None = None) -> dict[str, int]:
        """Nodes of ``corpus`` per most specific label and relationships per type, as stored (as ``tx``,
        an open transaction, sees them when given)."""

        def rows(query: str) -> list[dict[str, Any]]:
            if tx is None:
                return self.read(query, corpus=corpus)
            return [record.data() for record in tx.run(query, corpus=corpus)]

        out: dict[str, int] = {}
        for row in rows(cypher.corpus_label_counts()):
            key = most_specific(row["labels"])
            out[key] = out.get(key, 0) + row["n"]
        for row in rows(cypher.corpus_rel_counts()):
            out[row["type"]] = out.get(row["type"], 0) + row["n"]
        return dict(sorted(out.items()))

    def _marker(self, corpus: str) -> dict[str, Any] | None:
        """Status, ingest run (``batch``) and counts of the corpus marker, or None."""
        rows = self.read(cypher.corpus_status(), corpus=corpus)
        if not rows:
            return None
        counts = next((row["counts"] for row in self.read(cypher.corpora()) if row["id"] == corpus), None)
        return {"status": rows[0]["status"], "batch": rows[0]["batch"], "counts": counts}

    def _undo(self, corpus: str, batch: str, previous: dict[str, Any] | None) -> bool:
        """Undo run ``batch``: put back what it changed, delete what it created, restore the marker.

        Returns:
            False when the database could not be reached (the next claim of the corpus finishes it).
        """
        try:
            self._restore(batch)
            restored = self.run(cypher.restore_marker(), run=batch)
            self.delete_batch(batch)
            if not (restored and restored[0]["restored"]) and self.read(cypher.corpus_status(), corpus=corpus):
                # A marker that predates the journal (or its run): put it back as the last complete load left it.
                counts = previous["counts"] if previous else None
                digest = previous[Prop.INPUT_DIGEST] if previous else None
                self.run(cypher.mark_corpus("complete"), corpus=corpus, batch=batch, counts=counts, digest=digest)
            self.run_auto(cypher.drop_journal(), run=batch)
        except GraphStoreError:
            # The marker stays "loading" and the journal with it; the next claim of the corpus finishes the undo.
            return False
        return True

    def delete_batch(self, batch: str) -> None:
        """Delete everything one ingest run created."""
        self.run_auto(cypher.delete_batch_relationships(), batch=batch)
        self.run_auto(cypher.delete_batch_nodes(), batch=batch)

    def recover(self, corpus: str) -> bool:
        """Undo the leftovers of an interrupted ingest of ``corpus``; True if there were any.

        The run is undone from its journal: what it created goes, what it changed is put back, and
        the marker says what the last complete load left (or goes, when there was none). An ingest
        that is still running (its owner alive and its lease current) is left alone.
        """
        marker = self._marker(corpus)
        if marker is None or marker["status"] != "loading":
            return False
        rows = self.read(cypher.incomplete_corpora(), corpus=corpus)
        owner = rows[0]["owner"] if rows else None
        if not owner_gone(owner, marker["batch"]):
            return False
        batch = uuid.uuid4().hex
        _ACTIVE_RUNS.add(batch)
        try:
            previous = self._claim(corpus, batch)
            self._undo(corpus, batch, previous)
        except GraphStoreError:
            return False
        finally:
            _ACTIVE_RUNS.discard(batch)
        return True

    def recover_all(self) -> list[str]:
        """Undo the leftovers of every interrupted ingest (:meth:`recover`); the corpora recovered."""
        return [corpus for corpus in self.incomplete() if self.recover(corpus)]

    def clear(self) -> None:
        """Delete the whole graph (schema stays)."""
        self.run_auto(cypher.delete_all())

    def delete_corpus(self, corpus: str) -> None:
        """Remove a corpus and everything in it, with the predicted relations that touch it.

        Predicted relations with an end in the corpus go too, even when filed under another
        corpus; a prediction run left without relations goes with them.

        Raises:
            NotFoundError: The graph has no such corpus.
        """
        if not self.read(cypher.corpus_exists(), corpus=corpus)[0]["found"]:
            known = [row["id"] for row in self.read(cypher.corpora())]
            raise NotFoundError(f"no corpus {corpus!r} in the graph; corpora: {', '.join(known) or 'none'}")
        take_write_turn(self, f"deleting corpus {corpus}")
        # First, so that a delete cut short leaves a corpus the next main job loads again, not one
        # whose marker still vouches for its files.
        self.run_auto(cypher.forget_input_digest(), corpus=corpus)
        batches = [row["batch"] for row in self.read(cypher.corpus_prediction_batches(), corpus=corpus)]
        self.run_auto(cypher.delete_corpus_predictions(), corpus=corpus)
        self.run_auto(cypher.delete_corpus(), corpus=corpus)
        if batches:
            self.run(cypher.delete_emptied_prediction_runs(), batches=batches)

    def incomplete(self, corpus: str | None = None) -> list[str]:
        """Corpora (``corpus`` only, or all) whose last ingest did not complete."""
        return [row["id"] for row in self.read(cypher.incomplete_corpora(), corpus=corpus)]

    def corpora_of(self, ref: str) -> list[str]:
        """Corpora holding a discourse whose id or local id is ``ref``."""
        return sorted({row["corpus"] for row in self.read(cypher.discourse_refs(), ref=ref, corpus=None)})

    def write_state(self) -> tuple[int, str | None]:
        """How many write runs took their turn so far and what the latest wrote (``(0, None)`` before any).

        Two equal counts around a read mean that no ingest, prediction run, deletion or bulk load
        started in between.
        """
        rows = self.read(cypher.write_state())
        if not rows:
            return 0, None
        return int(rows[0]["turns"] or 0), rows[0]["what"]

    def require_unchanged(self, before: tuple[int, str | None], what: str) -> None:
        """Refuse a read that spanned a write: the write turns are no longer those of ``before``.

        Raises:
            CorpusIncompleteError: Naming the write that started meanwhile (the latest).
        """
        after = self.write_state()
        if after[0] != before[0]:
            writes = after[0] - before[0]
            raise CorpusIncompleteError(
                f"{after[1] or 'a write'} started while {what} read the graph ({writes} write run(s) in all): "
                f"{what} would not be one state of the graph and was not kept. Run it again once the write "
                "has finished"
            )

    def require_complete(self, corpus: str | None = None) -> None:
        """Refuse to export a half-loaded corpus (:func:`require_whole`, the one rule of every read).

        Raises:
            CorpusIncompleteError: Naming the corpora marked ``loading``.
        """
        require_whole(self.read(cypher.incomplete_corpora(), corpus=corpus), None, "refusing to export it")

    # -- reads -----------------------------------------------------------------------------

    def empty(self) -> bool:
        """True when the database holds no argweb node at all (:func:`graphstore.cypher.any_node`)."""
        return not self.read(cypher.any_node())

    def stats(self, include_predicted: bool = False) -> dict[str, Any]:
        """Counts per label and relationship type, overall and per corpus.

        Args:
            include_predicted: Count model output too (predicted relations, their edges and the
                ``PredictionRun`` markers, which belong to no corpus). By default only the corpora's
                own content is counted, so writing or deleting predictions never changes these figures;
                :meth:`relation_counts` shows gold and predicted side by side.
        """
        gold_only = not include_predicted
        labels = self.read(cypher.label_counts(gold_only))
        rels = self.read(cypher.rel_type_counts(gold_only))
        kinds = self.read(cypher.relation_kind_counts(gold_only))
        corpora = self.read(cypher.corpora())
        out: dict[str, Any] = {"labels": {}, "relationships": {}, "corpora": {}}
        per: dict[str, dict[str, Any]] = {}

        def entry(name: str | None) -> dict[str, Any]:
            key = name or "(none)"
            return per.setdefault(key, {"labels": {}, "relationships": {}, "relations": {}})

        for row in labels:
            out["labels"][row["label"]] = out["labels"].get(row["label"], 0) + row["n"]
            entry(row["corpus"])["labels"][row["label"]] = row["n"]
        for row in rels:
            out["relationships"][row["type"]] = out["relationships"].get(row["type"], 0) + row["n"]
            entry(row["corpus"])["relationships"][row["type"]] = row["n"]
        for row in kinds:
            kind = most_specific(row["kinds"])
            key = f"{kind}:{row['scheme']}" if row["scheme"] else kind
            rel = entry(row["corpus"])["relations"]
            rel[key] = rel.get(key, 0) + row["n"]
        for row in corpora:
            e = entry(row["id"])
            e["status"] = row["status"]
            e["source"] = row["source"]
        for e in per.values():
            lab = e["labels"]
            e["summary"] = {
                "discourses": lab.get("Discourse", 0),
                "dialogues": lab.get("Dialogue", 0),
                "documents": lab.get("Document", 0),
                "locutions": lab.get("Locution", 0),
                "propositions": lab.get("Proposition", 0),
                "relations": lab.get("Relation", 0),
            }
        out["corpora"] = dict(sorted(per.items()))
        return out

    def relation_counts(self, runs: Collection[str] | None = None) -> list[RelationCount]:
        """Relations per corpus and type (``Class``, or ``Class:sense`` for discourse relations), gold
        and predicted side by side.

        Argument relations are keyed by class only (:func:`cypher.relation_origin_counts` says why);
        :meth:`stats` keeps their scheme names.

        Args:
            runs: When given, only the predictions of these runs count as ``predicted``; those of
                every other run are counted apart, as ``other_runs``.

        Returns:
            One row per corpus and type, sorted by corpus and type.
        """
        table: dict[tuple[str, str], dict[str, int]] = {}
        for row in self.read(cypher.relation_origin_counts()):
            kind = most_specific(row["kinds"])
            key = f"{kind}:{row['sense']}" if row["sense"] else kind
            cell = table.setdefault((row["corpus"] or "(none)", key), {"gold": 0, "predicted": 0, "other_runs": 0})
            if row["origin"] != "predicted":
                cell["gold"] += row["n"]
            elif runs is None or row["run"] in runs:
                cell["predicted"] += row["n"]
            else:
                cell["other_runs"] += row["n"]
        return [RelationCount(c, t, **n) for (c, t), n in sorted(table.items())]
