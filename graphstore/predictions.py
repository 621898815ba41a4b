"""The write path of model output: prediction runs of reified relations between existing nodes.

A prediction run (:class:`~ontology.records.PredictionRun`) writes one relation node per
:class:`~ontology.records.PredictedRelation`, with the labels of its ontology class like a gold
relation (``Support:SchemeNode:Relation:Node``; discourse senses as ``DiscourseRelation`` with
``sense``), the AIF edges ``source -> relation -> target`` and, when both ends lie in one
dialogue or document, ``PART_OF`` it. Relations carry ``origin: "predicted"``, ``model``,
``model_version``, ``score``, ``run_id`` and ``created_at``; their ids live in the ``pred:``
namespace (``pred:<run id>:<n>``), so they never merge with, change or hide a gold relation.

Writes are all-or-nothing per run, like corpus ingest: the ``PredictionRun`` node is the marker,
``loading`` until the last batch commits and ``complete`` after; everything the run creates is
stamped with the run's write batch, deleted on failure. A run id that is complete is not written
again (re-running a job writes nothing new); the same run id with different content is refused.
Runs of any size are written in ``UNWIND`` batches of ``batch_size`` rows, one transaction each,
so a 100k-edge run needs no 100k-row transaction.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from neo4j import Driver

from graphstore import cypher
from graphstore.errors import database_error
from graphstore.statements import Statements
from graphstore.store import take_write_turn
from ontology.errors import GraphStoreError, PredictionError
from ontology.labels import ontology_class, scheme_class_of, sense
from ontology.progress import Advance
from ontology.records import PredictedRelation, PredictionRun, RelationRecord, new_run_id
from ontology.terms import Label, Prop

__all__ = ["PredictionReport", "PredictionStore", "StoredRun", "new_run_id"]

# Predictions relate units: utterances / EDUs, propositions, or relations themselves (undercuts).
END_LABELS: tuple[Label, ...] = (Label.Locution, Label.Proposition, Label.Relation)
_SHOWN = 5


@dataclass(frozen=True)
class PredictionReport:
    """What :meth:`PredictionStore.write` did.

    Attributes:
        run_id: The run.
        relations: Relations of the run.
        written: Relations written by this call (0 when the run was already complete).
        counts: Relations per stored class (``Support``, ``DiscourseRelation:Elaboration`` ...).
        seconds: Wall time of the call.
        already_complete: The run had been written before; nothing was written now.
    """

    run_id: str
    relations: int
    written: int
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    already_complete: bool = False


@dataclass(frozen=True)
class StoredRun:
    """A prediction run as stored.

    Attributes:
        run: The run's provenance.
        status: ``complete``, or ``loading`` while (or when interrupted while) it is written.
        relations: Its relations in the graph now (fewer than written once a corpus was deleted).
        counts: What it wrote: ``relations`` and the count per stored class.
    """

    run: PredictionRun
    status: str
    relations: int
    counts: dict[str, Any] = field(default_factory=dict)

    @property
    def intact(self) -> bool:
        """Complete, with its relations still in the graph.

        A run whose corpus was deleted and loaded again has lost its relations: it is predicted again.
        """
        return self.status == "complete" and (self.relations > 0 or not self.counts.get("relations"))


def _digest(run: PredictionRun, rows: Sequence[PredictedRelation]) -> str:
    # Tells a repeated run (same content) from a different one under the same id. created_at is
    # left out: a retried job stamps a new time on the same predictions.
    head = json.dumps(
        [run.run_id, run.model, run.model_version, run.task, run.parameters], sort_keys=True, ensure_ascii=False
    )
    digest = hashlib.sha256(head.encode())
    for r in rows:
        digest.update(f"\n{r.source}\t{r.target}\t{r.label.value}\t{r.score!r}\t{r.scheme_label or ''}".encode())
    return digest.hexdigest()


def _kind_key(label: Label, sense_name: str | None) -> str:
    return f"{label.value}:{sense_name}" if sense_name else label.value


class PredictionStore(Statements):
    """Writes, lists and deletes prediction runs through an injected Neo4j driver.

    Args:
        driver: An open ``neo4j`` driver.
        database: Database name.
        batch_size: Relations per write transaction.
    """

    def __init__(self, driver: Driver, database: str = "neo4j", batch_size: int = 5000) -> None:
        self.driver = driver
        self.database = database
        self.batch_size = batch_size

    def _delete_batch(self, batch: str) -> None:
        self.run_auto(cypher.delete_batch_relationships(), batch=batch)
        self.run_auto(cypher.delete_batch_nodes(), batch=batch)

    # -- write -----------------------------------------------------------------------------

    def write(
        self, run: PredictionRun, relations: Iterable[PredictedRelation], progress: Advance | None = None
    ) -> PredictionReport:
        """Write a prediction run: all of its relations, or (on any failure) nothing.

        Args:
            run: The run's provenance; ``run.run_id`` makes the write idempotent.
            relations: The predicted relations (each end must be an existing locution,
                proposition or relation node).
            progress: Called with the number of relations of each committed batch.

        Returns:
            The report; ``written`` is 0 when the run was already complete.

        Raises:
            PredictionError: An end node does not exist or is not a unit, a relation is repeated
                or loops, or the run id was already written with other content (nothing written).
            GraphStoreError: Neo4j failed (nothing of this run left behind; if even the clean-up
                failed, the run stays ``loading`` and the next write of the run id removes it).
        """
        started = time.perf_counter()
        rows = list(relations)
        self._check_rows(run, rows)
        take_write_turn(self, f"prediction run {run.run_id}")
        digest = _digest(run, rows)
        for stmt in cypher.constraints():
            self.run(stmt)
        stored = self.read(cypher.prediction_run(), id=run.node_id)
        if stored:
            props = stored[0]["props"]
            if props.get(Prop.STATUS.value) == "complete":
                if props.get(Prop.DIGEST.value) != digest:
                    raise PredictionError(
                        f"prediction run {run.run_id} is already stored with other relations or parameters "
                        f"(model {props.get(Prop.MODEL.value)} {props.get(Prop.MODEL_VERSION.value)}); "
                        "give the new predictions a new run id, or delete the old run first"
                    )
                counts = json.loads(props.get(Prop.COUNTS.value) or "{}")
                return PredictionReport(
                    run.run_id, len(rows), 0, counts.get("by_class", {}), time.perf_counter() - started, True
                )
            # An interrupted write of this run: remove its leftovers, then write it afresh.
            self._delete_batch(run.node_id)
        records = self._records(run, rows)
        counts = dict(sorted(Counter(_kind_key(r.kind, r.sense) for r in records).items()))
        batch = run.node_id
        run_props = {
            Prop.RUN_ID.value: run.run_id,
            Prop.MODEL.value: run.model,
            Prop.MODEL_VERSION.value: run.model_version,
            Prop.TASK.value: run.task,
            Prop.PARAMETERS.value: json.dumps(run.parameters, sort_keys=True, ensure_ascii=False),
            Prop.CREATED_AT.value: run.created_at,
            Prop.DIGEST.value: digest,
        }
        try:
            self.run(cypher.mark_prediction_run("loading"), id=run.node_id, batch=batch, props=run_props)
            self._write_relations(records, rows, batch, progress)
            done = {**run_props, Prop.COUNTS.value: json.dumps({"relations": len(records), "by_class": counts})}
            self.run(cypher.mark_prediction_run("complete"), id=run.node_id, batch=batch, props=done)
        except BaseException as e:
            # If even the clean-up fails the run stays "loading"; the next write of this run id cleans up.
            with contextlib.suppress(GraphStoreError):
                self._delete_batch(batch)
            if isinstance(e, GraphStoreError | PredictionError) or not isinstance(e, Exception):
                raise
            raise database_error(e, f"prediction run {run.run_id} failed, nothing kept") from e
        return PredictionReport(run.run_id, len(records), len(records), counts, time.perf_counter() - started)

    def _check_rows(self, run: PredictionRun, rows: Sequence[PredictedRelation]) -> None:
        seen: dict[tuple[str, str, str], int] = {}
        for i, r in enumerate(rows):
            if not isinstance(r, PredictedRelation):
                raise PredictionError(
                    f"prediction run {run.run_id}: row {i} is a {type(r).__name__}, not a PredictedRelation"
                )
            if r.source == r.target:
                raise PredictionError(f"prediction run {run.run_id}: relation #{i} links {r.source!r} to itself")
            key = (r.source, r.target, r.label.value)
            if key in seen:
                raise PredictionError(
                    f"prediction run {run.run_id}: relation #{i} repeats #{seen[key]} "
                    f"({r.source} -[{r.label.value}]-> {r.target})"
                )
            seen[key] = i

    def _records(self, run: PredictionRun, rows: Sequence[PredictedRelation]) -> list[RelationRecord]:
        ends = sorted({r.source for r in rows} | {r.target for r in rows})
        nodes: dict[str, dict[str, Any]] = {}
        for start in range(0, len(ends), self.batch_size):
            for row in self.read(cypher.resolve_nodes(), ids=ends[start : start + self.batch_size]):
                nodes[row["id"]] = row
        missing = [i for i in ends if not nodes.get(i, {}).get("found")]
        if missing:
            first = next(k for k, r in enumerate(rows) if r.source in missing or r.target in missing)
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            raise PredictionError(
                f"prediction run {run.run_id}: node {missing[0]!r} (relation #{first}) does not exist{more}: "
                f"{missing[:_SHOWN]}; predictions relate existing nodes only, nothing written"
            )
        allowed = {label.value for label in END_LABELS}
        wrong = [i for i in ends if not allowed.intersection(nodes[i]["labels"])]
        if wrong:
            labels = ":".join(nodes[wrong[0]]["labels"])
            raise PredictionError(
                f"prediction run {run.run_id}: node {wrong[0]!r} is a {labels} node; predicted relations link "
                f"{', '.join(sorted(allowed))} nodes ({len(wrong)} such ends: {wrong[:_SHOWN]}), nothing written"
            )
        records = []
        for i, r in enumerate(rows):
            src, dst = nodes[r.source], nodes[r.target]
            discourse = (
                dst["discourse"] if dst["discourse"] is not None and dst["discourse"] == src["discourse"] else None
            )
            sense_term = sense(r.label)
            try:
                records.append(
                    RelationRecord(
                        id=run.relation_id(i),
                        # Filed under the corpus of the target (the unit the relation is about);
                        # deleting either end's corpus deletes it.
                        corpus=dst["corpus"],
                        discourse=discourse,
                        kind=ontology_class(r.label),
                        sense=sense_term.value if sense_term else None,
                        scheme_label=r.scheme_label,
                        # The class a gold relation of the target's corpus with that label carries.
                        scheme_class=scheme_class_of(dst["corpus"], r.scheme_label, r.label),
                        origin="predicted",
                        score=r.score,
                        model=run.model,
                        model_version=run.model_version,
                        run_id=run.run_id,
                        created_at=run.created_at,
                        source_tokens=r.source_tokens,
                        target_tokens=r.target_tokens,
                    )
                )
            except ValueError as e:
                raise PredictionError(f"prediction run {run.run_id}: relation #{i}: {e}") from e
        return records

    def _write_relations(
        self,
        records: Sequence[RelationRecord],
        rows: Sequence[PredictedRelation],
        batch: str,
        progress: Advance | None,
    ) -> None:
        groups: dict[tuple[Label, ...], list[dict[str, Any]]] = defaultdict(list)
        for record, row in zip(records, rows, strict=True):
            groups[record.labels()].append(
                {
                    "id": record.id,
                    "source": row.source,
                    "target": row.target,
                    "discourse": record.discourse,
                    "props": record.properties(),
                }
            )
        for labels, items in groups.items():
            query = cypher.merge_predicted_relations(labels)
            for start in range(0, len(items), self.batch_size):
                chunk = items[start : start + self.batch_size]
                written = self.run(query, rows=chunk, batch=batch)
                if not written or written[0]["written"] != len(chunk):
                    raise PredictionError(
                        f"prediction run: end nodes of {len(chunk) - (written[0]['written'] if written else 0)} "
                        "relation(s) were deleted while the run was written; nothing kept"
                    )
                if progress:
                    progress(len(chunk))

    # -- read and delete -------------------------------------------------------------------

    def runs(self, model: str | None = None, version: str | None = None) -> list[StoredRun]:
        """Stored prediction runs (of ``model`` / ``version`` when given), oldest first."""
        out = []
        for row in self.read(cypher.prediction_runs(), model=model, version=version):
            p = row["props"]
            run = PredictionRun(
                run_id=p[Prop.RUN_ID.value],
                model=p[Prop.MODEL.value],
                model_version=p[Prop.MODEL_VERSION.value],
                task=p[Prop.TASK.value],
                parameters=json.loads(p.get(Prop.PARAMETERS.value) or "{}"),
                created_at=p[Prop.CREATED_AT.value],
            )
            counts = json.loads(p.get(Prop.COUNTS.value) or "{}")
            out.append(StoredRun(run, p.get(Prop.STATUS.value, "loading"), row["relations"], counts))
        return out

    def runs_by_version(self, leaving_out: Collection[str] = ()) -> dict[tuple[str, str], list[StoredRun]]:
        """The stored runs (but those of ``leaving_out``) per model and version, in that order; each oldest first."""
        grouped: dict[tuple[str, str], list[StoredRun]] = {}
        for stored in self.runs():
            if stored.run.run_id not in leaving_out:
                grouped.setdefault((stored.run.model, stored.run.model_version), []).append(stored)
        return dict(sorted(grouped.items()))

    def complete_run(self, task: str, model: str, version: str, corpus: str) -> str | None:
        """The id of an intact run of ``model``/``version`` for the whole of ``corpus`` (:attr:`StoredRun.intact`)."""
        for stored in self.runs(model, version):
            if stored.intact and stored.run.task == task and (stored.run.parameters or {}).get("corpus") == corpus:
                return stored.run.run_id
        return None

    def delete(self, model: str, version: str | None = None, run: str | None = None) -> int:
        """Delete every predicted relation of ``model`` (only ``version``, only the run ``run``, when
        given) and its runs.

        Gold relations are never touched: only relations with ``origin: "predicted"`` and this
        model match.

        Returns:
            The number of predicted relations deleted.
        """
        params = {"model": model, "version": version, "run": run}
        rows = self.read(cypher.count_predicted_relations(), **params)
        n = int(rows[0]["n"]) if rows else 0
        take_write_turn(self, f"deleting the predictions of {model}")
        self.run_auto(cypher.delete_predicted_relations(), **params)
        self.run(cypher.delete_prediction_runs(), **params)
        return n
