"""The main job (``argweb run``): load every corpus found, predict, embed, fill the SPARQL store, serve.

:func:`run` does the steps and returns what each did and how long it took; the command line only
prints. Each step is idempotent so that a second run is fast: ingest merges on stable ids, a
corpus that already has a complete prediction run of the same model and version is skipped, and
the RDF export is redone only when the graph's counts or its prediction runs changed since the
last export (the export file itself is removed once the store holds it, unless kept).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from api.services.corpora import RunReport, corpora_root, run_all
from api.services.graph import Graph
from api.services.predictions import prediction_store, runs
from api.settings import Settings
from graphstore.recovery import wait_for_loads
from ontology.errors import CorpusIncompleteError, DatabaseUnavailableError
from ontology.progress import SILENT, Reporter
from ontology.system import private_dir
from ontology.views import RelationCount

if TYPE_CHECKING:
    from api.services.apiserver import ApiInfo
    from api.services.semantic import EmbedReport

T = TypeVar("T")

# Written next to the Oxigraph store: what the store was last loaded from.
RDF_STAMP = "rdf-export.json"
RDF_EXPORT = "export.nt"
# In the data directory: every line of the last ``argweb run`` (its console shows one line per step).
RUN_LOG = "run.log"


@dataclass(frozen=True)
class DefaultModel:
    """A default model the main job runs on the corpora it serves.

    Attributes:
        task: The prediction runs' task (``discourse``, ``paraphrase``).
        corpora: Corpus ids it predicts for.
        identity: ``() -> (model, version)`` of the model that would run (read from its card).
        predict: ``(graph, corpus, reporter) -> (run_id or None, predicted relations written)``.
    """

    task: str
    corpora: tuple[str, ...]
    identity: Callable[[], tuple[str, str]]
    predict: Callable[[Graph, str, Reporter], tuple[str | None, int]]


def _identity(task: str) -> tuple[str, str]:
    """Name and version label of ``task``'s shipped model (what the already-written check compares)."""
    from gnn.registry import resolve_model

    card = resolve_model(task).card
    return card.model, card.written_version


def _scope_predict(task: str, graph: Graph, corpus: str, reporter: Reporter) -> tuple[str | None, int]:
    """The main job's prediction of a task: its shipped model through the one graph path.

    No model is named, so the task's shipped model runs: the main job's predictions never depend on
    a model someone trained into the cache.
    """
    from api.services.predictions import predict_scope

    done = predict_scope(graph, task, corpus=corpus, write=True, reporter=reporter)
    return done.run_id, done.written


def default_models() -> tuple[DefaultModel, ...]:
    """The main job's models, read from the task registry: every task that names corpora it predicts on.

    A task registered with :attr:`gnn.task.Task.graph_corpora` runs with no edit here.
    """
    from gnn.task import contract_tasks, get_task

    found = ((name, get_task(name).graph_corpora) for name in contract_tasks())
    return tuple(
        DefaultModel(name, corpora, partial(_identity, name), partial(_scope_predict, name))
        for name, corpora in found
        if corpora
    )


@dataclass
class PredictionOutcome:
    """What the main job did for one (model, corpus).

    Attributes:
        task: The prediction task.
        corpus: The corpus.
        status: ``written``, ``skipped`` (a complete run of this model version exists) or ``failed``.
        model: Model name (None when its card could not be read).
        version: Model version.
        run_id: The run written (or found, when skipped).
        predicted: Predicted relations written by this job.
        message: Why it failed.
    """

    task: str
    corpus: str
    status: str
    model: str | None = None
    version: str | None = None
    run_id: str | None = None
    predicted: int = 0
    message: str = ""


def predict_defaults(
    graph: Graph,
    corpora: list[str],
    reporter: Reporter = SILENT,
    models: tuple[DefaultModel, ...] | None = None,
) -> list[PredictionOutcome]:
    """Write each default model's predictions for the given loaded corpora, one prediction run per corpus.

    A corpus that already has a complete run of the same model and version is skipped. A model that
    fails on a corpus is reported in its outcome (and logged) without stopping the others; only a
    database that went away stops the job.

    Raises:
        DatabaseUnavailableError: Neo4j is unreachable.
    """
    outcomes: list[PredictionOutcome] = []
    stored = prediction_store(graph)
    chosen = default_models() if models is None else models
    pairs = [(spec, corpus) for spec in chosen for corpus in spec.corpora if corpus in corpora]
    with reporter.progress("predictions (model and corpus)", len(pairs)) as advance:
        for spec, corpus in pairs:
            outcome = PredictionOutcome(task=spec.task, corpus=corpus, status="failed")
            try:
                outcome.model, outcome.version = spec.identity()
                found = stored.complete_run(spec.task, outcome.model, outcome.version, corpus)
                if found is not None:
                    outcome.status, outcome.run_id = "skipped", found
                    reporter.log(f"{corpus}: {spec.task} predictions of {outcome.model} {outcome.version} present")
                else:
                    reporter.log(f"{corpus}: predicting {spec.task} with {outcome.model} {outcome.version}")
                    outcome.run_id, outcome.predicted = spec.predict(graph, corpus, reporter)
                    outcome.status = "written"
            except DatabaseUnavailableError:
                raise
            except Exception as e:  # one model's failure must not end the main job
                outcome.message = f"{type(e).__name__}: {e}"
                reporter.warn(f"{corpus}: {spec.task} prediction FAILED: {outcome.message}")
            outcomes.append(outcome)
            advance(1)
    return outcomes


def embed_units(graph: Graph, reporter: Reporter = SILENT, cached_only: bool = False) -> EmbedReport | None:
    """Embed the locutions and propositions that are new or changed (semantic search), or None when it failed.

    Idempotent and cheap when nothing changed (one read of ids, texts and keys); a failing encoder
    is reported and the job goes on, a database that went away stops it.

    Args:
        graph: The graph.
        reporter: Log lines and progress.
        cached_only: Write only the vectors the encoder cache holds (those the prediction step
            encoded), encoding nothing (:func:`api.services.semantic.embed_graph`).

    Raises:
        DatabaseUnavailableError: Neo4j is unreachable.
    """
    from api.services.semantic import embed_graph

    try:
        return embed_graph(graph, graph.settings, reporter=reporter, cached_only=cached_only)
    except DatabaseUnavailableError:
        raise
    except Exception as e:  # the semantic layer must not end the main job
        reporter.warn(f"embedding FAILED: {type(e).__name__}: {e}")
        return None


def relation_counts(graph: Graph, outcomes: Sequence[PredictionOutcome] | None = None) -> list[RelationCount]:
    """Gold and predicted relations per corpus and type (see :meth:`GraphStore.relation_counts`).

    Args:
        graph: The graph.
        outcomes: The main job's outcomes: when given, ``predicted`` counts the runs it wrote or
            found, and the predictions of every other run (earlier model versions, runs a user
            wrote) are counted apart as ``other_runs``.
    """
    return graph.store().relation_counts(None if outcomes is None else _job_runs(outcomes))


def _job_runs(outcomes: Sequence[PredictionOutcome]) -> set[str]:
    """The runs the main job wrote or found."""
    return {o.run_id for o in outcomes if o.run_id}


@dataclass(frozen=True)
class OtherRuns:
    """Prediction runs in the graph besides the main job's, per model version.

    Attributes:
        model: Model name.
        version: Model version.
        run_ids: The runs, oldest first.
        relations: Their predicted relations in the graph now.
        job_version: Whether the main job writes with this model version too (deleting by version
            would then take the job's runs as well).
    """

    model: str
    version: str
    run_ids: tuple[str, ...]
    relations: int
    job_version: bool


def other_runs(graph: Graph, outcomes: Sequence[PredictionOutcome]) -> list[OtherRuns]:
    """The stored prediction runs that are not the main job's, grouped by model and version."""
    versions = {(o.model, o.version) for o in outcomes if o.run_id}
    grouped = prediction_store(graph).runs_by_version(_job_runs(outcomes))
    return [
        OtherRuns(m, v, tuple(r.run.run_id for r in found), sum(r.relations for r in found), (m, v) in versions)
        for (m, v), found in grouped.items()
    ]


@dataclass(frozen=True)
class RdfSync:
    """The SPARQL store after the main job.

    Attributes:
        store_dir: The Oxigraph store.
        exported: Whether the graph was exported and loaded now (False: unchanged since the last export).
        triples: Triples exported now (0 when skipped).
        seconds: Export and load time.
    """

    store_dir: Path
    exported: bool
    triples: int = 0
    seconds: float = 0.0


def graph_digest(graph: Graph) -> str:
    """A digest of the graph's counts and prediction runs: it changes whenever an export would."""
    store = graph.store()
    state = {
        "stats": store.stats(),
        "runs": [[r.run.run_id, r.status, r.relations] for r in runs(graph)],
        "base": graph.settings.rdf_base,
    }
    return hashlib.sha256(json.dumps(state, sort_keys=True, default=str).encode()).hexdigest()


# Exports the main job starts before it gives up on a graph that other processes keep writing.
EXPORT_ATTEMPTS = 3


def sync_rdf(graph: Graph, reporter: Reporter = SILENT, keep_export: bool = False) -> RdfSync:
    """Export the graph to RDF and load it into the SPARQL store, unless nothing changed since the last time.

    The stamp (digest and store path) is written next to the store after a successful load only, so
    an interrupted export is redone by the next run. The export file (``export.nt`` next to the
    store, the size of the store again) is removed after the load unless ``keep_export``.

    A corpus that another process is loading is waited for (:func:`graphstore.recovery.wait_for_loads`;
    one whose process is gone is undone at once), and an export that a concurrent write made
    inconsistent is started again (:data:`EXPORT_ATTEMPTS` in all).

    Raises:
        CorpusIncompleteError: A corpus stayed ``loading``, or writes kept overlapping the export.
        GraphStoreError: Neo4j failed.
    """
    from api.services.rdf import export_rdf, store_name
    from ontology.sparql_remote import holds_export

    settings = graph.settings
    store_dir = settings.rdf_store_dir
    stamp = store_dir.parent / RDF_STAMP
    remote = settings.sparql_endpoint or settings.sparql_store_endpoint
    where = store_name(settings) if remote else str(store_dir.resolve())
    for attempt in range(EXPORT_ATTEMPTS):
        wait_for_loads(graph.store, "the RDF export", reporter.log, reporter.warn)
        digest = graph_digest(graph)
        try:
            previous = json.loads(stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = {}
        same = previous == {"digest": digest, "store": where}
        if same and holds_export(store_dir, settings.sparql_endpoint, settings.sparql_store_endpoint):
            reporter.log(f"SPARQL store {store_name(settings)}: up to date")
            return RdfSync(store_dir, exported=False)
        stamp.unlink(missing_ok=True)
        out = store_dir.parent / RDF_EXPORT
        # The data directory is argweb's and private; with ARGWEB_OXIGRAPH_STORE elsewhere the folder
        # is the user's (their home, say) and keeps its mode. The export file itself is written 0600.
        if out.parent.resolve() == settings.data_dir.resolve():
            private_dir(out.parent)
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
        try:
            done = export_rdf(graph, out, fmt="nt", reporter=reporter)
            break
        except CorpusIncompleteError as e:
            # Another process wrote while the export read (the export was not kept): once more.
            if attempt == EXPORT_ATTEMPTS - 1:
                raise
            reporter.log(f"exporting again: {e}")
    stamp.write_text(json.dumps({"digest": digest, "store": where}), encoding="utf-8")
    if keep_export:
        reporter.log(f"{out}: kept")
    else:
        out.unlink(missing_ok=True)
        reporter.log(f"{out}: removed (the SPARQL store holds it; --keep-export keeps it)")
    seconds = done.export.seconds + (done.loaded.seconds if done.loaded else 0.0)
    return RdfSync(store_dir, exported=True, triples=done.export.triples, seconds=seconds)


@dataclass(frozen=True)
class Step:
    """One step of the main job.

    Attributes:
        name: ``load``, ``predict``, ``embed``, ``rdf`` or ``api``.
        seconds: Wall time.
        result: What the step returned (the command line words it: ``api.cli.mainjob``).
    """

    name: str
    seconds: float
    result: object


@dataclass
class MainJobReport:
    """What :func:`run` did.

    Attributes:
        root: The corpora directory loaded from.
        load: The load step's report.
        outcomes: One per (default model, loaded corpus); empty without predictions.
        counts: Gold and predicted relations per corpus and type (:func:`relation_counts`).
        others: Prediction runs in the graph besides the job's.
        embedded: The embedding step's report (None: not asked for, or failed).
        rdf: The SPARQL store.
        api: The background API (None: not asked for).
        steps: Each step with its time, in order.
        seconds: Wall time of the job.
    """

    root: Path
    load: RunReport | None = None
    outcomes: list[PredictionOutcome] = field(default_factory=list)
    counts: list[RelationCount] = field(default_factory=list)
    others: list[OtherRuns] = field(default_factory=list)
    embedded: EmbedReport | None = None
    rdf: RdfSync | None = None
    api: ApiInfo | None = None
    steps: list[Step] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> list[PredictionOutcome]:
        """The predictions (and the embedding) that failed; the rest of the job went on."""
        return [o for o in self.outcomes if o.status == "failed"]


def run(
    settings: Settings,
    *,
    bulk: bool | None = None,
    reload: bool = False,
    predict: bool = True,
    embed: bool | None = None,
    serve: bool = True,
    keep_export: bool = False,
    reporter: Reporter = SILENT,
    on_step: Callable[[Step], None] | None = None,
) -> MainJobReport:
    """The main job: load every corpus found, write the default models' predictions, write the
    vectors of semantic search, export to the SPARQL store and start the API in the background.

    Args:
        settings: Which graph, data directory, corpora and API port.
        bulk: Offline importer for the first load (None: when the embedded database is empty).
        reload: Read every corpus again, even one whose files and reader are unchanged since
            its last complete load (:func:`api.services.corpora.run_all`).
        predict: Write the default models' predictions.
        embed: None (default): write the vectors of new locutions and propositions that the
            encoder cache holds (the prediction step fills it; nothing is encoded again) and the
            vector indexes, so that search by meaning works after the job (with ``predict``
            only: without it the cache has nothing new); True: also encode the texts the cache
            lacks; False: no embedding step.
        serve: Start the API in the background (a running one is kept).
        keep_export: Keep the RDF export file after the SPARQL store was loaded from it.
        reporter: Receives every detail and the progress.
        on_step: Called after each step (the command line prints it at once).

    Raises:
        LoaderError: A corpus file is malformed. DatabaseUnavailableError: Neo4j cannot be started
        or reached. GraphStoreError: Neo4j failed.
    """
    from api.services.apiserver import api_server

    started = time.perf_counter()
    report = MainJobReport(root=corpora_root(settings))
    reporter.log(f"corpora: {report.root}")

    def step(name: str, work: Callable[[], T]) -> T:
        begun = time.perf_counter()
        result = work()
        done = Step(name, time.perf_counter() - begun, result)
        report.steps.append(done)
        if on_step is not None:
            on_step(done)
        return result

    with Graph(settings) as graph:
        load = partial(run_all, graph, report.root, reporter, bulk=bulk, reload=reload)
        report.load = step("load", load)
        if predict:
            loaded = [n for n, e in report.load.stats["corpora"].items() if e.get("status") == "complete"]
            report.outcomes = step("predict", lambda: predict_defaults(graph, loaded, reporter))
            report.others = other_runs(graph, report.outcomes)
        report.counts = relation_counts(graph, report.outcomes if predict else None)
        if embed or (embed is None and predict):
            report.embedded = step("embed", lambda: embed_units(graph, reporter, cached_only=not embed))
            if report.embedded is None:
                report.outcomes.append(PredictionOutcome("embedding", "(all)", "failed"))
        report.rdf = step("rdf", lambda: sync_rdf(graph, reporter, keep_export=keep_export))
    if serve:
        report.api = step("api", lambda: api_server(settings).start())
    report.seconds = time.perf_counter() - started
    return report
