"""Every task on the contract (:mod:`gnn.task`) as a service: wiring only.

This module reads a task's files into records (:func:`ontology.formats.registry.read_records`),
finds its default data and reference corpora under the corpora directory, resolves its model directory by the one rule
(:func:`gnn.registry.resolve_model`), keeps loaded models (one cache for every task) and hands the
rest to the task: training, evaluation, cross-validation and prediction live in the task's module.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from api.settings import Settings
from gnn.modelcard import ModelCard
from gnn.task import CVReport, EvalReport, ExampleT, PredictedRelation, Resources, Task, TextPair, TrainReport, get_task
from ontology.errors import LoaderError
from ontology.formats.registry import RECORD_READERS, corpora_root, read_records
from ontology.progress import SILENT, Reporter
from ontology.records import CorpusBundle


def default_data(settings: Settings, task: Task[Any, Any, Any]) -> list[Path]:
    """The task's training data under the corpora directory.

    Raises:
        LoaderError: It is not there.
    """
    path = corpora_root(settings.corpora).joinpath(*task.default_data)
    if not task.default_data or not path.is_dir():
        raise LoaderError(f"{path}: no {task.name} training data (give --data)")
    return [path]


def references(settings: Settings, task: Task[Any, Any, Any]) -> dict[str, CorpusBundle]:
    """The reference corpora the task names that are under the corpora directory, read."""
    found = {}
    for fmt, where in task.references.items():
        path = corpora_root(settings.corpora).joinpath(*where)
        pattern = RECORD_READERS[fmt][0]
        if path.is_dir() and any(path.rglob(pattern)):
            found[fmt] = read_records(fmt, [path])
    return found


def resources(
    settings: Settings,
    task: Task[Any, Any, Any],
    *,
    encoder_dir: Path | None = None,
    data: Sequence[Path] = (),
    reporter: Reporter = SILENT,
    device: str | None = "cpu",
) -> Resources:
    """What a run of ``task`` may use: the caches, the encoder chosen, the reference corpora, the log."""
    return Resources(
        settings.cache_dir,
        encoder_dir,
        device,
        reporter.log,
        references(settings, task),
        tuple(data),
    )


def examples(
    settings: Settings, task: Task[Any, ExampleT, Any], data: Sequence[Path] | None, config: Any, reporter: Reporter
) -> tuple[list[Path], list[ExampleT]]:
    """The paths read (``data``, else the task's default data) and the task's examples in them.

    Raises:
        LoaderError: No data, or nothing the task can learn from in it.
    """
    paths = list(data or default_data(settings, task))
    reporter.log(f"reading {task.reads} files under {', '.join(map(str, paths))}")
    found = task.examples(read_records(task.reads, paths), config)
    reporter.log(f"{len(found)} {task.name} examples")
    return paths, found


def train(
    settings: Settings,
    name: str,
    data: Sequence[Path] | None,
    out: Path | None,
    *,
    profile: str | None = None,
    seed: int = 13,
    encoder_dir: Path | None = None,
    reporter: Reporter = SILENT,
) -> TrainReport:
    """Train the task ``name`` (recipe ``profile``, default the shipped one) into ``out`` (default
    ``<models_dir>/<name>``).

    Raises:
        UnknownTaskError, UnknownProfileError: The caller's mistake. LoaderError: No data.
    """
    task = get_task(name)
    config = task.recipes.config(profile or task.recipes.default, seed)
    paths, found = examples(settings, task, data, config, reporter)
    target = out or settings.models_dir / name
    use = resources(settings, task, encoder_dir=encoder_dir, data=paths, reporter=reporter, device=None)
    return task.train(found, target, config, profile or task.recipes.default, use)


def cross_validate(
    settings: Settings,
    name: str,
    data: Sequence[Path] | None,
    folds: int = 5,
    *,
    profile: str | None = None,
    seed: int = 13,
    encoder_dir: Path | None = None,
    reporter: Reporter = SILENT,
) -> CVReport:
    """Out-of-fold figures of the task's recipe ``profile`` (no model is written).

    Raises:
        UnknownTaskError, UnknownProfileError: The caller's mistake. LoaderError: No data.
    """
    task = get_task(name)
    chosen = profile or task.recipes.default
    config = task.recipes.config(chosen, seed)
    paths, found = examples(settings, task, data, config, reporter)
    use = resources(settings, task, encoder_dir=encoder_dir, data=paths, reporter=reporter)
    return task.cross_validate(found, config, use, folds=folds, seed=seed, profile=chosen)


@dataclass(frozen=True)
class LoadedModel:
    """A model loaded for a task: its directory, card and the task's loaded form."""

    task: str
    path: Path
    card: ModelCard
    model: Any


_LOADED: dict[tuple[str, str], LoadedModel] = {}
_LOCK = threading.Lock()


def forget() -> None:
    """Empty the model cache (a fresh process would load the models again)."""
    with _LOCK:
        _LOADED.clear()


def load(settings: Settings, name: str, model: Path | str | None = None) -> LoadedModel:
    """The model of task ``name`` (``model``, else the shipped one), loaded once per process.

    Raises:
        UnknownTaskError: No such task. NotFoundError, ApiError: ``model`` is not a model of the task.
        ModelError: The model is broken, or its encoder is not the one it was trained with.
    """
    from gnn.device import pick_device
    from gnn.encoder import card_encoder
    from gnn.registry import resolve_model

    task = get_task(name)
    resolved = resolve_model(name, model, settings.models_dir if model is not None else None)
    key = (name, str(resolved.path))
    with _LOCK:
        if key not in _LOADED:
            card = resolved.card
            encoder = (
                card_encoder(resolved.path, card, settings.cache_dir, device="cpu")
                if card.encoder_fingerprint
                else None
            )
            # The model runs on CUDA when present (the encoder's vectors are cached on the CPU side).
            loaded = task.load(resolved.path, encoder=encoder, device=pick_device())
            _LOADED[key] = LoadedModel(name, resolved.path, card, loaded)
        return _LOADED[key]


def evaluate(
    settings: Settings,
    name: str,
    model: Path | str | None = None,
    data: Sequence[Path] | None = None,
    reporter: Reporter = SILENT,
) -> EvalReport:
    """Score a model of task ``name`` on ``data`` (default: the task's own evaluation set, when it has one).

    Raises:
        UnknownTaskError: No such task. LoaderError: No data.
    """
    task = get_task(name)
    loaded = load(settings, name, model)
    config = task.recipes.config(task.recipes.default)
    if data:
        _, found = examples(settings, task, data, config, reporter)
    else:
        found = task.evaluation_examples()
        if not found:
            _, found = examples(settings, task, None, config, reporter)
    report = task.evaluate(loaded.model, found, resources(settings, task, reporter=reporter))
    return replace(report, model=f"{loaded.card.model} {loaded.card.version}")


def predict(
    settings: Settings, name: str, records: Sequence[TextPair], model: Path | str | None = None
) -> list[PredictedRelation]:
    """The predicted relation of each record with task ``name``'s model.

    Raises:
        UnknownTaskError: No such task.
    """
    loaded = load(settings, name, model)
    return get_task(name).predict(loaded.model, records)
