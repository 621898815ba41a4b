"""Batched, idempotent, all-or-nothing ingest of :class:`~ontology.records.CorpusBundle` s."""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from neo4j import Driver, RoutingControl
from neo4j.exceptions import DriverError, Neo4jError

from graphstore import cypher
from graphstore.errors import database_error
from ontology.errors import GraphStoreError
from ontology.records import CorpusBundle, EdgeRecord, NodeRecord
from ontology.terms import Label, RelType
from ontology.views import most_specific

Progress = Callable[[int], None]
DEFAULT_BATCH_SIZE = 5000


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


def edge_groups(edges: Sequence[EdgeRecord]) -> dict[tuple[RelType, bool], list[dict[str, Any]]]:
    """Group edge rows by relationship type and whether they carry an id."""
    groups: dict[tuple[RelType, bool], list[dict[str, Any]]] = defaultdict(list)
    for edge in edges:
        groups[(edge.type, edge.id is not None)].append(
            {"source": edge.source, "target": edge.target, "id": edge.id, "props": edge.properties()}
        )
    return groups


class GraphStore:
    """Writes and reads the argweb graph through an injected Neo4j driver.

    Args:
        driver: An open ``neo4j`` driver (embedded server, standalone, cluster or Aura).
        database: Database name.
        batch_size: Rows per ``UNWIND`` transaction.
    """

    def __init__(self, driver: Driver, database: str = "neo4j", batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        self.driver = driver
        self.database = database
        self.batch_size = batch_size

    # -- low level -------------------------------------------------------------------------

    def run(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """Run one statement in its own write transaction and return the records as dicts.

        Raises:
            InvalidQueryError: The statement is malformed.
            DatabaseUnavailableError: Neo4j cannot be reached.
            GraphStoreError: Neo4j failed otherwise.
        """
        return self._execute(query, params, RoutingControl.WRITE)

    def read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """Run one statement in a read transaction (READ access mode: a write in it is refused).

        On a cluster the statement goes to a reader. Raises as :meth:`run`.
        """
        return self._execute(query, params, RoutingControl.READ)

    def _execute(self, query: str, params: dict[str, Any], routing: RoutingControl) -> list[dict[str, Any]]:
        try:
            records, _, _ = self.driver.execute_query(query, params, database_=self.database, routing_=routing)
        except (Neo4jError, DriverError, OSError) as e:
            raise database_error(e, "Neo4j query failed") from e
        return [r.data() for r in records]

    def run_auto(self, query: str, **params: Any) -> None:
        """Run a statement in an auto-commit transaction (needed by ``CALL {} IN TRANSACTIONS``)."""
        try:
            with self.driver.session(database=self.database) as session:
                session.run(query, params).consume()
        except (Neo4jError, DriverError, OSError) as e:
            raise database_error(e, "Neo4j query failed") from e

    def _write(self, query: str, rows: Sequence[dict[str, Any]], batch: str) -> None:
        def work(tx: Any) -> None:
            tx.run(query, rows=list(rows), batch=batch).consume()

        with self.driver.session(database=self.database) as session:
            session.execute_write(work)

    # -- schema ----------------------------------------------------------------------------

    def ensure_schema(self) -> None:
        """Create the constraints and indexes derived from the ontology terms (idempotent)."""
        for stmt in cypher.constraints():
            self.run(stmt)
        self.run("CALL db.awaitIndexes(300)")

    # -- ingest ----------------------------------------------------------------------------

    def ingest(self, bundle: CorpusBundle, progress: Progress | None = None) -> IngestReport:
        """Write a corpus bundle: all of it, or (on any failure) nothing new.

        Every node and relationship the run creates is stamped with a fresh batch id; the corpus
        marker says ``loading`` until the last batch commits. On failure the batch is deleted and
        the error re-raised; if even that fails (connection gone), the marker stays ``loading``
        and the next ingest of the corpus removes the leftovers first.

        Raises:
            LoaderError: The bundle is inconsistent (nothing written).
            GraphStoreError: Neo4j failed (nothing of this run left behind).
        """
        import time

        bundle.validate()
        corpus = bundle.corpus.id
        started = time.perf_counter()
        self.ensure_schema()
        self.recover(corpus)
        previous = self._marker(corpus)
        batch = uuid.uuid4().hex
        counts = bundle.counts()
        try:
            # The counts of the last complete load stay on the marker until this run completes.
            old_counts = previous["counts"] if previous else None
            self.run(cypher.mark_corpus("loading"), corpus=corpus, batch=batch, counts=old_counts)
            written = 0
            for labels, rows in node_groups(bundle.nodes).items():
                query = cypher.merge_nodes(labels)
                for chunk in _chunks(rows, self.batch_size):
                    self._write(query, chunk, batch)
                    written += len(chunk)
                    if progress:
                        progress(len(chunk))
            for (rel_type, with_id), rows in edge_groups(bundle.edges).items():
                query = cypher.merge_edges(rel_type, with_id)
                for chunk in _chunks(rows, self.batch_size):
                    self._write(query, chunk, batch)
                    written += len(chunk)
                    if progress:
                        progress(len(chunk))
            self.run(cypher.mark_corpus("complete"), corpus=corpus, batch=batch, counts=json.dumps(counts))
        except (Neo4jError, DriverError, OSError, GraphStoreError) as e:
            self._undo(corpus, batch, previous)
            # Keep the class (database away vs. failed statement): it decides what the caller is told.
            cls = type(e) if isinstance(e, GraphStoreError) else type(database_error(e, ""))
            raise cls(f"ingest of {corpus} ({bundle.origin}) failed, nothing kept: {e}") from e
        except BaseException:
            self._undo(corpus, batch, previous)
            raise
        return IngestReport(
            corpus=corpus,
            nodes=len(bundle.nodes),
            edges=len(bundle.edges),
            seconds=time.perf_counter() - started,
            counts=counts,
        )

    def _marker(self, corpus: str) -> dict[str, Any] | None:
        """Status, ingest run (``batch``) and counts of the corpus marker, or None."""
        rows = self.read(cypher.corpus_status(), corpus=corpus)
        if not rows:
            return None
        counts = next((row["counts"] for row in self.read(cypher.corpora()) if row["id"] == corpus), None)
        return {"status": rows[0]["status"], "batch": rows[0]["batch"], "counts": counts}

    def _undo(self, corpus: str, batch: str, previous: dict[str, Any] | None) -> None:
        try:
            self.delete_batch(batch)
            if previous is not None:
                # Put the marker back as the last complete load left it.
                self.run(
                    cypher.mark_corpus("complete"), corpus=corpus, batch=previous["batch"], counts=previous["counts"]
                )
        except GraphStoreError:
            # The marker stays "loading"; recover() finishes the clean-up on the next ingest.
            pass

    def delete_batch(self, batch: str) -> None:
        """Delete everything one ingest run created."""
        self.run_auto(cypher.delete_batch_relationships(), batch=batch)
        self.run_auto(cypher.delete_batch_nodes(), batch=batch)

    def recover(self, corpus: str) -> bool:
        """Remove the leftovers of an interrupted ingest of ``corpus``; True if there were any."""
        marker = self._marker(corpus)
        if marker is None or marker["status"] != "loading":
            return False
        self.delete_batch(marker["batch"])
        # A marker created by the interrupted run went with its batch: the corpus was never loaded.
        # Only a marker of an earlier complete load is left, and it is complete again.
        if self.run(cypher.corpus_status(), corpus=corpus):
            self.run(cypher.mark_corpus("complete"), corpus=corpus, batch=marker["batch"], counts=marker["counts"])
        return True

    def clear(self) -> None:
        """Delete the whole graph (schema stays)."""
        self.run_auto(cypher.delete_all())

    def delete_corpus(self, corpus: str) -> None:
        """Remove a corpus and everything in it, with the predicted relations that touch it.

        Predicted relations with an end in the corpus go too, even when filed under another
        corpus; a prediction run left without relations goes with them.
        """
        batches = [row["batch"] for row in self.read(cypher.corpus_prediction_batches(), corpus=corpus)]
        self.run_auto(cypher.delete_corpus_predictions(), corpus=corpus)
        self.run_auto(cypher.delete_corpus(), corpus=corpus)
        if batches:
            self.run(cypher.delete_emptied_prediction_runs(), batches=batches)

    # -- reads -----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts per label and relationship type, overall and per corpus."""
        labels = self.read(cypher.label_counts())
        rels = self.read(cypher.rel_type_counts())
        kinds = self.read(cypher.relation_kind_counts())
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
