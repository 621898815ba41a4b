"""The task contract: what every model task of argweb is, the same shape for each, and its registry.

A task is one module: a subclass of :class:`Task` that says what it reads (the corpus format of
its records), how records become its examples, its recipes (:class:`Recipes`: a frozen config per
task with named profiles and one :meth:`Recipes.schedule`), and how it trains
(:class:`TrainReport`), evaluates (:class:`EvalReport`), cross-validates through the one fold
protocol (:class:`CVReport`, :mod:`gnn.protocol`), loads a model directory and predicts relations
with scores (:class:`PredictedRelation`). Reports are frozen dataclasses.

The registry follows the plugin pattern: :func:`register` adds a task (an instance, or a
``"module:attribute"`` path imported on first use), :func:`get_task` finds it and
:func:`task_names` lists them. Every registered task has a directory for its shipped model
(:data:`SHIPPED`, which is :data:`gnn.registry.TASKS`), so ``argweb model list`` and
:func:`gnn.registry.resolve_model` see it; tasks not yet on the contract are registered by name only
and run through their own code.

torch is imported inside the functions: the CLI imports this module eagerly.
"""

from __future__ import annotations

import importlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeAlias, TypeVar

from gnn.modelcard import ModelCard, git_commit, write_card
from gnn.protocol import Fold, FoldOutcome, Pooled, cross_validate
from ontology.errors import ApiError, ModelError, UnknownProfileError, UnknownTaskError
from ontology.scope import Scope, ScopeRecords

if TYPE_CHECKING:
    from gnn.encoder import TextEncoder
    from gnn.trainer import Schedule
    from ontology.records import CorpusBundle
    from ontology.records import PredictedRelation as GraphRelation

JsonDocument: TypeAlias = dict[str, Any]
"""A JSON object in the shape a command prints with ``--json`` (an outside format, named as such)."""

ConfigT = TypeVar("ConfigT")
ExampleT = TypeVar("ExampleT")
LoadedT = TypeVar("LoadedT")


def _silent(_message: str) -> None:
    """The log of a run nobody listens to."""


# -- the one version scheme of model cards -------------------------------------------------------


@dataclass(frozen=True)
class CardVersion:
    """The version of a model: an integer, with the training date and the commit beside it.

    Attributes:
        number: Bumped whenever the task's shipped weights change (``model_version`` of predictions).
        trained: The training date (ISO ``YYYY-MM-DD``; empty when the card has no creation time).
        commit: The git commit of the code that trained it (``None`` outside a checkout).
    """

    number: int
    trained: str
    commit: str | None

    @classmethod
    def of(cls, card: ModelCard) -> CardVersion:
        """The version a card records.

        Raises:
            ModelError: The card's version is not an integer.
        """
        try:
            number = int(card.version)
        except ValueError as e:
            raise ModelError(f"model {card.model}: version {card.version!r} is not an integer") from e
        return cls(number, card.created_at[:10], card.git_commit)

    def __str__(self) -> str:
        """The number, as cards and predictions carry it."""
        return str(self.number)


# -- recipes ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recipes(Generic[ConfigT]):
    """A task's recipes: named profiles, each a frozen config, and the one schedule of a config.

    Attributes:
        profiles: Profile name -> its config (the seed is set when one is asked for).
        default: The profile that trains the shipped model.
        schedule_of: The optimiser schedule of a config (:class:`gnn.trainer.Schedule`).
    """

    profiles: Mapping[str, ConfigT]
    default: str
    schedule_of: Callable[[ConfigT], Schedule]

    def config(self, profile: str, seed: int | None = None) -> ConfigT:
        """The config of ``profile`` (with ``seed`` when given).

        Raises:
            UnknownProfileError: No such profile.
        """
        UnknownProfileError.check(profile, self.profiles)
        chosen = self.profiles[profile]
        return chosen if seed is None else replace(chosen, seed=seed)  # type: ignore[type-var]

    def schedule(self, config: ConfigT) -> Schedule:
        """The optimiser schedule ``config`` trains under."""
        return self.schedule_of(config)


# -- what a run can use ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Resources:
    """What a task's run may use besides its examples: caches, the encoder, the device, the log.

    Attributes:
        cache_dir: Where encoder vectors are cached (``<cache_dir>/embeddings``).
        encoder_dir: A local Hugging Face encoder the caller chose (``--encoder``); ``None``: the
            recipe's packaged one.
        device: Torch device (``None``: CUDA when present).
        log: Receives progress lines.
        references: Reference corpora the task names (:attr:`Task.references`) that were found,
            read into records by the caller.
        data_files: The files the training records were read from (named in the card).
    """

    cache_dir: Path
    encoder_dir: Path | None = None
    device: str | None = "cpu"
    log: Callable[[str], None] = _silent
    references: Mapping[str, CorpusBundle] = field(default_factory=dict)
    data_files: tuple[Path, ...] = ()

    def encoder(self, name: str | None) -> TextEncoder:
        """The encoder ``name`` (:func:`gnn.encoder.encoder_for`), or the chosen local one."""
        from gnn.encoder import encoder_for

        return encoder_for(name, self.encoder_dir, self.cache_dir, device="cpu")


# -- reports ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelTally:
    """Predicted against gold for one label.

    Attributes:
        gold: Items whose gold label it is.
        predicted: Items predicted with it.
        right: Items predicted with it whose gold label it is.
        recall: ``right / gold`` (``None`` without gold).
    """

    gold: int
    predicted: int
    right: int
    recall: float | None

    @classmethod
    def table(cls, pooled: Pooled) -> dict[str, LabelTally]:
        """Every label of a :class:`gnn.protocol.Pooled` tally."""
        return {label: cls(**row) for label, row in pooled.as_dict().items()}


@dataclass(frozen=True)
class TrainReport:
    """What a training run wrote and measured.

    Attributes:
        task: The task.
        model_dir: The model directory written.
        card: Its model card.
        version: The card's version.
        summary: One line on the run (what the CLI prints).
    """

    task: str
    model_dir: Path
    card: ModelCard
    version: CardVersion
    summary: str


@dataclass(frozen=True)
class EvalReport:
    """A model's scores on labelled examples.

    Attributes:
        task: The task.
        model: The model's name and version.
        scores: Figure name -> value.
        labels: Predicted against gold per label.
        details: Further figures of the task (JSON-ready: per-set counts, out-of-domain scores).
    """

    task: str
    model: str
    scores: Mapping[str, float]
    labels: Mapping[str, LabelTally]
    details: Mapping[str, Any] = field(default_factory=dict)

    def document(self) -> JsonDocument:
        """The report as ``model evaluate --json`` prints it."""
        labels = {k: {f.name: getattr(v, f.name) for f in fields(v)} for k, v in self.labels.items()}
        return {"model": self.model, "scores": dict(self.scores), "labels": labels, **self.details}


@dataclass(frozen=True)
class Spread:
    """A figure over the folds: mean, sample standard deviation and per-fold values (``None``: undefined)."""

    mean: float | None
    std: float
    folds: tuple[float | None, ...]


@dataclass(frozen=True)
class CVReport:
    """Out-of-fold figures of a recipe through the one fold protocol (:func:`gnn.protocol.cross_validate`).

    Attributes:
        task: The task.
        profile: The recipe profile of the fold models.
        encoder: The encoder the fold models read texts with (``None``: none).
        protocol: How the items were cut and scored.
        items: Items cross-validated.
        groups: Groups they fall in.
        figures: Figure -> its spread over the folds.
        labels: Predicted against gold per label, pooled over the held-out folds.
        folds: Per fold: sizes, what was chosen, figures, seconds (JSON-ready rows).
        seconds: Wall time.
    """

    task: str
    profile: str
    encoder: str | None
    protocol: str
    items: int
    groups: int
    figures: Mapping[str, Spread]
    labels: Mapping[str, LabelTally]
    folds: tuple[Mapping[str, Any], ...]
    seconds: float

    @classmethod
    def of(cls, task: str, profile: str, encoder: str | None, summary: Mapping[str, Any]) -> CVReport:
        """The report of what :func:`gnn.protocol.cross_validate` returned (one decoding)."""
        return cls(
            task,
            profile,
            encoder,
            summary["protocol"],
            summary["items"],
            summary["groups"],
            {k: Spread(v["mean"], v["std"], tuple(v["folds"])) for k, v in summary["figures"].items()},
            {k: LabelTally(**v) for k, v in summary["labels"].items()},
            tuple(summary["folds"]),
            summary["seconds"],
        )

    def document(self) -> JsonDocument:
        """The report as ``model evaluate --cv K --json`` prints it (and :func:`api.cli.options.print_cv` reads)."""
        return {
            "protocol": self.protocol,
            "items": self.items,
            "groups": self.groups,
            "figures": {k: {"mean": v.mean, "std": v.std, "folds": list(v.folds)} for k, v in self.figures.items()},
            "labels": {k: {f.name: getattr(v, f.name) for f in fields(v)} for k, v in self.labels.items()},
            "folds": [dict(row) for row in self.folds],
            "seconds": self.seconds,
            "profile": self.profile,
            "encoder": self.encoder,
        }


@dataclass(frozen=True)
class TextPair:
    """Two texts to relate: the source and the target of the relation asked about."""

    source: str
    target: str


@dataclass(frozen=True)
class PredictedRelation:
    """A predicted relation from ``source`` to ``target``: its label, score and every label's probability
    (and, for a task that decides by a threshold on the score, that threshold: below it such a task may
    answer a label of no probability, an abstention such as the paraphrase task's ``not_sure``)."""

    source: str
    target: str
    label: str
    score: float
    probabilities: Mapping[str, float]
    threshold: float | None = None


@dataclass(frozen=True)
class Decoding:
    """What makes a run's output what it is besides the model and the scope.

    Attributes:
        id_parts: What the run id derives from, after the task's prefix (model, version, model
            directory, decoding, scope ids ...). The same parts give the same run id.
        parameters: Stored on the run (corpus, model directory, thresholds ...).
    """

    id_parts: tuple[object, ...]
    parameters: Mapping[str, Any]


@dataclass(frozen=True)
class ScopePrediction:
    """A task's predicted relations over a scope, with what they score against the gold ones in it.

    Attributes:
        relations: Predicted relations between graph units (the rows the one prediction job writes).
        inputs: Discourses (or pairs) predicted over.
        gold: Gold relations in scope (``None``: none to score against).
        scores: The predictions' figures against those gold relations (``None``: none).
        what: What a written row is, for the log ("predicted discourse relations").
    """

    relations: tuple[GraphRelation, ...]
    inputs: int
    gold: int | None
    scores: Mapping[str, Any] | None
    what: str


@dataclass(frozen=True)
class Fitted(Generic[LoadedT]):
    """A model fitted inside one fold (or for training): the model and what was chosen on tuning data."""

    model: LoadedT
    chosen: Mapping[str, Any]


# -- the contract ----------------------------------------------------------------------------------


class Task(ABC, Generic[ConfigT, ExampleT, LoadedT]):
    """A model task: the same shape for every one (the module docstring gives the parts).

    Class attributes:
        name: The task's name (``argweb model train NAME``).
        model_name: The model family its cards name.
        version: The version of the shipped weights (:class:`CardVersion`).
        reads: The corpus format its training records are read in (``aif`` ...).
        default_data: Where its training data sits under a corpora directory.
        references: Reference corpora it scores itself on when they are there: name -> path
            under a corpora directory (read in the format of that name).
        shipped: Its shipped model directory (``None``: it ships none).
        recipes: Its recipes.
    """

    name: ClassVar[str]
    model_name: ClassVar[str]
    version: ClassVar[int] = 1
    reads: ClassVar[str]
    default_data: ClassVar[tuple[str, ...]] = ()
    references: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    shipped: ClassVar[Path | None] = None
    recipes: Recipes[ConfigT]

    # What the task reads and how records become examples.

    @abstractmethod
    def examples(self, records: CorpusBundle, config: ConfigT) -> list[ExampleT]:
        """The task's labelled examples in ``records``.

        Raises:
            LoaderError: The records hold nothing the task can learn from.
        """

    @abstractmethod
    def group(self, example: ExampleT) -> str:
        """The group that keeps an example on one side of a fold (episode, session, paper ...)."""

    @abstractmethod
    def gold(self, example: ExampleT) -> str:
        """An example's gold label."""

    @abstractmethod
    def inputs(self, example: ExampleT) -> TextPair:
        """What a prediction of the example is asked on."""

    # Training, loading and predicting.

    @abstractmethod
    def fit(
        self, train: Sequence[ExampleT], tune: Sequence[ExampleT], config: ConfigT, resources: Resources
    ) -> Fitted[LoadedT]:
        """A model trained on ``train``, everything it chooses chosen on ``tune``."""

    @abstractmethod
    def train(
        self, examples: Sequence[ExampleT], out: Path, config: ConfigT, profile: str, resources: Resources
    ) -> TrainReport:
        """Train a model on ``examples`` into ``out`` and write its card."""

    @abstractmethod
    def load(self, model_dir: Path, *, encoder: TextEncoder | None, device: str | None) -> LoadedT:
        """The model in ``model_dir`` (``encoder``: the one its card names, when it reads one).

        Raises:
            ModelError: Not a model of this task.
        """

    @abstractmethod
    def predict(self, loaded: LoadedT, records: Sequence[TextPair]) -> list[PredictedRelation]:
        """The predicted relation of each record, with its score."""

    # Predicting over discourses stored in the graph (the main job, ``predict TASK --corpus``, ``POST /predict``).

    graph_corpora: ClassVar[tuple[str, ...]] = ()
    """The corpora the main job predicts with the shipped model, when they are loaded."""

    def scope_read(self, corpus: str) -> str:
        """How a scope of ``corpus`` is read back from the graph (a reader of ``graphstore.scopes``).

        Raises:
            UnknownTaskError: The task does not predict over stored discourses (the default).
        """
        raise UnknownTaskError(f"task {self.name!r} does not predict over dialogues stored in the graph")

    def decoding(self, loaded: LoadedT, model_dir: Path, scope: Scope, options: Mapping[str, str]) -> Decoding:
        """The run id parts and stored parameters of ``loaded``'s predictions over ``scope``.

        Raises:
            ApiError: An option the task does not know, or a value it does not take.
        """
        raise UnknownTaskError(f"task {self.name!r} does not predict over dialogues stored in the graph")

    def predict_scope(self, loaded: LoadedT, records: ScopeRecords, options: Mapping[str, str]) -> ScopePrediction:
        """The predicted relations between the units of ``records`` (graph ids), scored against their gold ones.

        Raises:
            ApiError: Nothing in the scope to predict over (the message says what is missing).
        """
        raise UnknownTaskError(f"task {self.name!r} does not predict over dialogues stored in the graph")

    # Evaluation: shared, through the predictions.

    def scores(self, gold: Sequence[str], predicted: Sequence[str]) -> dict[str, float]:
        """The figures of predicted against gold labels (default: accuracy)."""
        right = sum(g == p for g, p in zip(gold, predicted, strict=True))
        return {"accuracy": right / len(gold) if gold else 0.0}

    def predicted_labels(self, loaded: LoadedT, examples: Sequence[ExampleT]) -> list[str]:
        """The label predicted for each labelled example, as evaluation and cross-validation score it.

        Default: :meth:`predict` on the example's inputs; a task whose model reads an example in its
        context (a relation inside its map) predicts it there.
        """
        return [p.label for p in self.predict(loaded, [self.inputs(e) for e in examples])]

    def figures(
        self, loaded: LoadedT, examples: Sequence[ExampleT], gold: Sequence[str], predicted: Sequence[str]
    ) -> dict[str, float]:
        """The figures of an evaluation or a held-out fold (default: :meth:`scores` of the labels)."""
        return self.scores(gold, predicted)

    def evaluate(self, loaded: LoadedT, examples: Sequence[ExampleT], resources: Resources) -> EvalReport:
        """Score ``loaded`` on labelled ``examples``: its figures and predicted against gold per label."""
        predicted = self.predicted_labels(loaded, examples)
        gold = [self.gold(e) for e in examples]
        tally = Pooled()
        tally.add_pairs(list(enumerate(gold)), list(enumerate(predicted)))
        figures = self.figures(loaded, examples, gold, predicted)
        return EvalReport(self.name, self.describe(loaded), figures, LabelTally.table(tally))

    def evaluation_examples(self) -> list[ExampleT]:
        """The task's own fixed evaluation set, scored when no data is given (default: none)."""
        return []

    def describe(self, loaded: LoadedT) -> str:
        """The model's name and version, as an evaluation names it."""
        return f"{self.model_name} {self.version}"

    def protocol(self, examples: Sequence[ExampleT]) -> str:
        """One sentence on how the examples are cut and what is chosen inside the training folds."""
        return f"{len(examples)} {self.name} examples grouped by {self.name} group"

    def encoder_name(self, config: ConfigT, resources: Resources) -> str | None:
        """The name of the encoder the recipe reads texts with (``None``: none)."""
        return None

    def cross_validate(
        self,
        examples: Sequence[ExampleT],
        config: ConfigT,
        resources: Resources,
        *,
        folds: int = 5,
        seed: int = 13,
        profile: str = "",
    ) -> CVReport:
        """Out-of-fold figures of ``config`` on ``examples``: :meth:`fit` per fold, the held-out fold scored once.

        Raises:
            ApiError: Fewer groups than folds.
        """

        def run_fold(fold: Fold) -> FoldOutcome:
            fitted = self.fit([examples[i] for i in fold.train], [examples[i] for i in fold.tune], config, resources)
            test = [examples[i] for i in fold.test]
            predicted = self.predicted_labels(fitted.model, test)
            gold = [self.gold(e) for e in test]
            tally = Pooled()
            tally.add_pairs(list(enumerate(gold)), list(enumerate(predicted)))
            figures = self.figures(fitted.model, test, gold, predicted)
            return FoldOutcome(figures, {"": tally}, dict(fitted.chosen))

        groups = [self.group(e) for e in examples]
        if len(set(groups)) < folds:
            raise ApiError(f"{len(set(groups))} group(s) of {self.name} examples cannot fill {folds} folds")
        summary = cross_validate(
            groups,
            run_fold,
            folds,
            seed,
            self.protocol(examples),
            log=resources.log,
            what=f"{self.name} cross-validation",
        )
        return CVReport.of(self.name, profile, self.encoder_name(config, resources), summary)

    # Prediction inputs from a file.

    def read_inputs(self, path: Path) -> list[TextPair]:
        """The records of a JSON-lines file of ``{"source": ..., "target": ...}`` objects.

        Raises:
            ApiError: A line that is not such an object (file and line named); nothing is predicted.
        """
        out = []
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                out.append(TextPair(str(row["source"]), str(row["target"])))
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                raise ApiError(f"{path}:{n}: not a source/target record ({e})") from e
        return out


def finish_card(
    out: Path,
    card: ModelCard,
    config: Any,
    profile: str,
    history: Any,
    seconds: float,
    metrics: Mapping[str, Any],
    size: int,
) -> ModelCard:
    """Complete ``card`` with the recipe, the run's figures and commit, write it into ``out`` and return it.

    The config (less its free-form ``extra``) and the profile become the hyperparameters; the
    metrics gain the per-epoch history and the bytes of the weights.
    """
    written = replace(
        card,
        hyperparameters={k: v for k, v in vars(config).items() if k != "extra"} | {"profile": profile},
        metrics=dict(metrics) | {"history": history, "bytes": size},
        training_seconds=round(seconds, 1),
        git_commit=git_commit(),
    )
    write_card(out, written)
    return written


# -- the registry ----------------------------------------------------------------------------------

SHIPPED_DIR = Path(__file__).resolve().parent / "models"
"""Where the shipped models live: ``gnn/models/<task>``."""

SHIPPED: dict[str, Path] = {}
"""Task name -> the directory of its shipped model, for every registered task (:data:`gnn.registry.TASKS`)."""


@dataclass
class _Entry:
    """A registered task's contract: an instance, where to import it, or ``None`` (not on the contract)."""

    task: Task[Any, Any, Any] | str | None


_REGISTRY: dict[str, _Entry] = {}


def register(name: str, task: Task[Any, Any, Any] | str | None, shipped: Path | None = None) -> None:
    """Register the task ``name``.

    Args:
        name: The task's name.
        task: Its contract: an instance, a ``"module:attribute"`` path imported on first use, or
            ``None`` for a task that runs through its own code.
        shipped: The directory of its shipped model (it need not exist); default
            ``gnn/models/<name>``.
    """
    _REGISTRY[name] = _Entry(task)
    SHIPPED[name] = shipped or SHIPPED_DIR / name


def unregister(name: str) -> None:
    """Remove the task ``name`` (a task registered for a while, as in a test)."""
    _REGISTRY.pop(name, None)
    SHIPPED.pop(name, None)


def task_names() -> list[str]:
    """Every registered task, in registration order."""
    return list(_REGISTRY)


def contract_tasks() -> list[str]:
    """The registered tasks on the contract (the CLI builds their commands from it)."""
    return [name for name, entry in _REGISTRY.items() if entry.task is not None]


def get_task(name: str) -> Task[Any, Any, Any]:
    """The contract of the registered task ``name``.

    Raises:
        UnknownTaskError: No such task, or a task that is not on the contract.
    """
    entry = _REGISTRY.get(name)
    if entry is None or entry.task is None:
        raise UnknownTaskError(f"unknown model task {name!r}; expected one of {sorted(contract_tasks())}")
    if isinstance(entry.task, str):
        module, _, attribute = entry.task.partition(":")
        entry.task = getattr(importlib.import_module(module), attribute)
    assert isinstance(entry.task, Task)
    return entry.task


# The tasks argweb ships: one line each. Those still off the contract run through their own code.
register("discourse", "gnn.discourse.task:TASK")
register("relations", "gnn.relations.task:TASK")
register("paraphrase", "gnn.paraphrase:TASK")
register("components", "gnn.components:TASK")
register("pairs", "gnn.pairs:TASK")
