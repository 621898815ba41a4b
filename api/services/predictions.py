"""Prediction runs in the graph: the one prediction job, list runs, delete a model's predictions.

:class:`PredictionJob` is how every model's output reaches the graph (the main job, ``predict ...
--write``, ``POST /predict``, ``mine``, cross-corpus links): its run id comes from its content, a
complete run of the same content is found instead of written again, scores are stored rounded
(:func:`ontology.records.prediction_score`) and rows go through the one write path,
:class:`graphstore.predictions.PredictionStore` (all or nothing; gold relations are never touched).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from api.services.graph import Graph
from api.services.reporting import Reporter
from graphstore.predictions import PredictionReport, PredictionStore, Progress, StoredRun
from ontology.records import PredictedRelation, PredictionRun, content_run_id


def _store(graph: Graph) -> PredictionStore:
    settings = graph.settings
    return PredictionStore(graph.driver(), settings.neo4j_database, settings.batch_size)


def write_run(
    graph: Graph, run: PredictionRun, relations: Iterable[PredictedRelation], progress: Progress | None = None
) -> PredictionReport:
    """Write one prediction run (all or nothing; a run id already written is not written again).

    Raises:
        PredictionError: An end node is missing or not a unit, or the run id is taken by other content.
        GraphStoreError: Neo4j failed (nothing of the run kept).
    """
    return _store(graph).write(run, relations, progress)


@dataclass(frozen=True)
class PredictionJob:
    """One model's predictions over one scope, as a run in the graph.

    Attributes:
        task: The prediction task (``discourse``, ``relations``, ``paraphrase`` ...).
        model: Model name.
        version: Model version.
        id_parts: What the run id is derived from: a prefix, then everything that makes the output
            what it is (model, version, model directory, decoding, scope ids). The same parts
            always give the same id.
        parameters: Stored on the run (corpus, model directory, thresholds ...).
    """

    task: str
    model: str
    version: str
    id_parts: Sequence[object]
    parameters: dict[str, Any] = field(default_factory=dict)

    def run(self, attempt: int = 0) -> PredictionRun:
        """The run of this job; ``attempt`` > 0 gives the ids used after an earlier complete run lost its relations."""
        prefix, *rest = self.id_parts
        run_id = content_run_id(str(prefix), *rest)
        return PredictionRun(
            run_id=run_id + (f"-r{attempt + 1}" if attempt else ""),
            model=self.model,
            model_version=self.version,
            task=self.task,
            parameters=dict(self.parameters),
        )

    def pick(self, graph: Graph) -> tuple[PredictionRun, int | None]:
        """The run to write, and its stored relation count when it is complete in the graph already.

        That is :meth:`run` (attempt 0), or the ids of a later attempt when an earlier run of the
        same content is complete but lost its relations with a deleted corpus, so that the job
        writes them again instead of finding them "present".
        """
        stored = {r.run.run_id: r for r in runs(graph, self.model, self.version)}
        attempt = 0
        while True:
            run = self.run(attempt)
            found = stored.get(run.run_id)
            if found is None or found.status != "complete":
                return run, None
            if found.relations > 0 or not found.counts.get("relations"):
                return run, found.relations
            attempt += 1

    def write(
        self,
        graph: Graph,
        rows: Iterable[PredictedRelation],
        what: str,
        reporter: Reporter,
        run: PredictionRun | None = None,
    ) -> dict[str, Any]:
        """Write ``rows`` as the job's run (``run``, else the one :meth:`pick` gives); logs ``what`` was written.

        Returns:
            The ``run_id``, ``written`` and ``report`` entries of a predict command's JSON result.
        """
        chosen = run or self.pick(graph)[0]
        report = write_run(graph, chosen, rows)
        reporter.log(f"run {chosen.run_id}: {report.written} {what} written")
        summary = {"written": report.written, "counts": report.counts, "seconds": round(report.seconds, 2)}
        return {"run_id": chosen.run_id, "written": True, "report": summary}


def runs(graph: Graph, model: str | None = None, version: str | None = None) -> list[StoredRun]:
    """The stored prediction runs, oldest first (of ``model`` / ``version`` when given)."""
    return _store(graph).runs(model, version)


def delete_predictions(graph: Graph, model: str, version: str | None = None, run: str | None = None) -> int:
    """Delete every predicted relation of ``model`` (of ``version``, of the run ``run`` only, when given) and its runs.

    Returns:
        The number of predicted relations deleted; gold relations are never touched.
    """
    return _store(graph).delete(model, version, run)
