"""The model registry: which model directory a task runs, by one rule.

Every model is a directory with a ``model_card.json`` (:mod:`gnn.modelcard`) and its weights. The
shipped models live in ``gnn/models/<task>``. :func:`resolve_model` is the one rule the CLI, the
HTTP routes, the main job and ``mine`` use to turn what a caller wrote (nothing, a model name, a
path) into a directory and its card:

* nothing: the task's shipped model (the main job's predictions never depend on what someone
  trained into a cache);
* a path to a directory: that directory;
* a bare name: ``<models_dir>/<name>`` (where ``argweb train <task>`` writes, ``<task>`` by
  default), else the shipped model of that name.

A name or directory the caller gave that is not a model of the task is the caller's mistake
(:class:`~ontology.errors.NotFoundError` or :class:`~ontology.errors.ApiError`: exit 2 / 4xx); a
shipped model that is missing or broken is not (:class:`~ontology.errors.ModelError`: exit 1 /
5xx). A new task is one registration (:func:`gnn.task.register`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gnn.modelcard import CARD_FILE, ModelCard, read_card
from gnn.task import SHIPPED, SHIPPED_DIR
from ontology.errors import ApiError, ModelError, NotFoundError, UnknownTaskError

__all__ = ["SHIPPED_DIR", "TASKS", "ResolvedModel", "registered_models", "resolve_model", "shipped_model"]

PACKAGE = Path(__file__).resolve().parent

TASKS: dict[str, Path] = SHIPPED
"""Task name -> the directory of its shipped model: every task registered with :func:`gnn.task.register`."""


@dataclass(frozen=True)
class ResolvedModel:
    """A model directory and its card.

    Attributes:
        path: The model directory.
        card: Its model card.
        shipped: Whether it is the task's shipped model.
    """

    path: Path
    card: ModelCard
    shipped: bool


def shipped_model(task: str) -> Path:
    """The directory of ``task``'s shipped model.

    Raises:
        UnknownTaskError: Unknown task (a client error).
    """
    if task not in TASKS:
        raise UnknownTaskError(f"unknown model task {task!r}; expected one of {sorted(TASKS)}")
    return TASKS[task]


def resolve_model(task: str, name_or_path: str | Path | None = None, models_dir: Path | None = None) -> ResolvedModel:
    """The model directory ``task`` runs for what the caller wrote (the module docstring gives the rule).

    Args:
        task: ``discourse``, ``relations``, ``paraphrase``, ``components`` or ``pairs``.
        name_or_path: ``None`` (the shipped model), a directory, or a model name.
        models_dir: Where trained models live by name (the settings' ``models_dir``).

    Returns:
        The directory, its card (of ``task``) and whether it is the shipped one.

    Raises:
        NotFoundError: No model of that name, or no such directory (the message names it).
        ApiError: Unknown task, or a named directory that is not a model of ``task``.
        ModelError: The shipped model is missing or broken.
    """
    shipped = shipped_model(task)
    if name_or_path is None:
        if not (shipped / CARD_FILE).is_file():
            raise ModelError(f"no shipped {task} model in {shipped}; train one with `argweb train {task}`")
        return ResolvedModel(shipped, read_card(shipped, task=task), True)
    given = Path(name_or_path)
    if not given.is_dir() and len(given.parts) == 1:
        named = [d for d in ((models_dir / given.name) if models_dir else None, TASKS.get(given.name)) if d]
        found = next((d for d in named if (d / CARD_FILE).is_file()), None)
        if found is None:
            where = " or ".join(str(d) for d in named)
            raise NotFoundError(f"no model named {str(name_or_path)!r} (looked in {where})")
        given = found
    if not given.is_dir():
        raise NotFoundError(f"{given}: no such model directory")
    try:
        card = read_card(given, task=task)
    except ModelError as e:
        raise ApiError(str(e)) from e
    return ResolvedModel(given, card, given.resolve() == shipped.resolve())


def registered_models(models_dir: Path | None = None) -> list[ResolvedModel]:
    """Every task's shipped model, then the trained models under ``models_dir`` (by task and name).

    A shipped model whose card is missing or broken is left out of the list (:func:`resolve_model`
    reports it when the task runs); a folder under ``models_dir`` without a readable card is not a
    model and is skipped.
    """
    found: list[ResolvedModel] = []
    for task, path in TASKS.items():
        if (path / CARD_FILE).is_file():
            try:
                found.append(ResolvedModel(path, read_card(path, task=task), True))
            except ModelError:
                continue
    trained = (
        sorted(d for d in models_dir.iterdir() if (d / CARD_FILE).is_file())
        if models_dir and models_dir.is_dir()
        else []
    )
    for path in trained:
        try:
            card = read_card(path)
        except ModelError:
            continue
        if card.task in TASKS:
            found.append(ResolvedModel(path, card, False))
    return sorted(found, key=lambda m: (list(TASKS).index(m.card.task), not m.shipped, str(m.path)))
