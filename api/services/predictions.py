"""Prediction runs in the graph: the one prediction job, list runs, delete a model's predictions.

:class:`PredictionJob` is how every model's output reaches the graph (the main job, ``predict ...
--write``, ``POST /predict``, ``mine``, cross-corpus links): its run id comes from its content, a
complete run of the same content is found instead of written again, scores are stored rounded
(:func:`ontology.records.prediction_score`) and rows go through the one write path,
:class:`graphstore.predictions.PredictionStore` (all or nothing; gold relations are never touched).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from api.services.graph import Graph
from gnn.task import JsonDocument
from graphstore.predictions import PredictionReport, PredictionStore, StoredRun
from ontology.progress import SILENT, Reporter
from ontology.records import PredictedRelation, PredictionRun, content_run_id, prediction_score


def prediction_store(graph: Graph) -> PredictionStore:
    """The prediction runs of the graph (:class:`graphstore.predictions.PredictionStore`)."""
    settings = graph.settings
    return PredictionStore(graph.driver(), settings.neo4j_database, settings.batch_size)


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
            if found.intact:
                return run, found.relations
            attempt += 1

    def write(
        self,
        graph: Graph,
        rows: Iterable[PredictedRelation],
        what: str,
        reporter: Reporter,
        run: PredictionRun | None = None,
    ) -> tuple[PredictionRun, PredictionReport | None]:
        """Write ``rows`` as the job's run, all or nothing; logs ``what`` was written.

        Without ``run`` the run is the one :meth:`pick` gives, and nothing is written when it is
        complete in the graph already; ``run`` is a run :meth:`pick` gave the caller, to be written.

        Returns:
            The run, and what its write did (``None``: it was in the graph already).

        Raises:
            PredictionError: An end node is missing or not a unit, or the run id is taken by other content.
            GraphStoreError: Neo4j failed (nothing of the run kept).
        """
        if run is None:
            run, present = self.pick(graph)
            if present is not None:
                return run, None
        report = prediction_store(graph).write(run, rows)
        reporter.log(f"run {run.run_id}: {report.written} {what} written")
        return run, report


def runs(graph: Graph, model: str | None = None, version: str | None = None) -> list[StoredRun]:
    """The stored prediction runs, oldest first (of ``model`` / ``version`` when given)."""
    return prediction_store(graph).runs(model, version)


def delete_predictions(graph: Graph, model: str, version: str | None = None, run: str | None = None) -> int:
    """Delete every predicted relation of ``model`` (of ``version``, of the run ``run`` only, when given) and its runs.

    Returns:
        The number of predicted relations deleted; gold relations are never touched.
    """
    return prediction_store(graph).delete(model, version, run)


# -- the one way into the graph --------------------------------------------------------------------


@dataclass(frozen=True)
class ScopeOutcome:
    """What a task predicted over a scope of the graph, and what was written.

    Attributes:
        task: The task.
        run_id: The run the predictions are (or would be) written as.
        model: Model name.
        model_version: The version label its predictions carry (:attr:`gnn.modelcard.ModelCard.written_version`).
        model_dir: The model directory.
        corpus: The corpus of the scope.
        dialogue: The one dialogue/document asked for (``None``: the whole corpus).
        parameters: Stored on the run (the task's decoding).
        dialogues: Discourses (or pairs) predicted over.
        predicted: Predicted relations (``None``: not predicted, since the run is in the graph already).
        by_label: Predicted relations per label.
        gold: Gold relations in scope (``None``: none).
        scores_against_gold: The predictions' figures against them (``None``: none).
        written: Relations written by this call.
        already_present: A complete run of the same content was in the graph already.
        report: The write's report (``None``: nothing written).
        relations: The predicted relations (empty when nothing was predicted).
    """

    task: str
    run_id: str
    model: str
    model_version: str
    model_dir: str
    corpus: str
    dialogue: str | None
    parameters: Mapping[str, Any]
    dialogues: int
    predicted: int | None
    by_label: Mapping[str, int]
    gold: int | None
    scores_against_gold: Mapping[str, Any] | None
    written: int
    already_present: bool
    report: PredictionReport | None = None
    relations: tuple[PredictedRelation, ...] = ()

    def document(self) -> JsonDocument:
        """The outcome as ``argweb predict TASK --json`` prints it: every field but the rows themselves."""
        out = asdict(self)
        del out["relations"]
        out["parameters"] = dict(self.parameters)
        return out


def predict_scope(
    graph: Graph,
    task: str,
    *,
    corpus: str | None = None,
    dialogue: str | None = None,
    model: Path | str | None = None,
    options: Mapping[str, str] | None = None,
    write: bool = False,
    answer_rows: bool = False,
    reporter: Reporter = SILENT,
) -> ScopeOutcome:
    """Predict with ``task``'s model over a corpus or one dialogue of the graph; with ``write``, store the run.

    The one way a model's output reaches the graph: the scope is read back as records
    (:func:`graphstore.scopes.read_scope`), the task predicts (:meth:`gnn.task.Task.predict_scope`)
    and the rows go through :class:`PredictionJob` (run id from the content, a complete run of the
    same content found instead of written again, scores rounded, all or nothing; gold untouched).
    The main job, ``argweb predict TASK --corpus/--dialogue``, ``POST /predict`` and ``mine`` call it.

    Args:
        graph: The graph.
        task: A registered task that predicts over stored discourses.
        corpus: Every discourse of this corpus.
        dialogue: One dialogue/document (graph id or local id).
        model: A model name or directory (default: the task's shipped model).
        options: The task's decoding options (``objective`` ...; :meth:`gnn.task.Task.decoding`).
        write: Store the predictions as one prediction run; a run already complete in the graph
            is not predicted again.
        answer_rows: Predict even when the run is complete in the graph already, to answer with its
            rows (``POST /predict``); nothing is written again.
        reporter: Progress lines.

    Raises:
        UnknownTaskError: No such task, or one that does not predict over stored discourses.
        ApiError: Not exactly one of corpus / dialogue, a bad option, or nothing to predict over.
        NotFoundError: Unknown corpus, dialogue or model.
    """
    from api.services import tasks
    from gnn.task import get_task
    from graphstore.scopes import read_scope, resolve_scope

    contract = get_task(task)
    chosen = dict(options or {})
    scope = resolve_scope(graph.store(), corpus, dialogue)
    reader = contract.scope_read(scope.corpus)
    loaded = tasks.load(graph.settings, task, model)
    decoding = contract.decoding(loaded.model, loaded.path, scope, chosen)
    card = loaded.card
    job = PredictionJob(task, card.model, card.written_version, (task, *decoding.id_parts), dict(decoding.parameters))
    run, present = job.pick(graph)
    outcome = ScopeOutcome(
        task=task,
        run_id=run.run_id,
        model=card.model,
        model_version=card.written_version,
        model_dir=str(loaded.path),
        corpus=scope.corpus,
        dialogue=scope.dialogue,
        parameters=dict(decoding.parameters),
        dialogues=len(scope.ids),
        predicted=None,
        by_label={},
        gold=None,
        scores_against_gold=None,
        written=0,
        already_present=present is not None,
    )
    if write and present is not None:
        reporter.log(f"run {run.run_id} of {run.model} {run.model_version} is in the graph already: nothing written")
        if not answer_rows:
            return replace(outcome, predicted=present)
    with reporter.progress(f"{scope.corpus}: discourses read", len(scope.ids)) as advance:
        records = read_scope(graph.store(), reader, scope, advance)
    found = contract.predict_scope(loaded.model, records, chosen)
    # Scores are stored rounded, here for every task (a repeated run is then the same content).
    rows = [r.model_copy(update={"score": prediction_score(r.score)}) for r in found.relations]
    by_label = Counter(r.label.value for r in found.relations)
    outcome = replace(
        outcome,
        dialogues=found.inputs,
        predicted=len(found.relations),
        by_label=dict(sorted(by_label.items())),
        gold=found.gold,
        scores_against_gold=found.scores,
        relations=tuple(rows),
    )
    if not write or present is not None:
        return outcome
    _, report = job.write(graph, rows, found.what, reporter, run)
    return replace(outcome, written=report.written if report else 0, report=report)
