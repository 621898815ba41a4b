"""The discourse task's corpus-format commands: wiring of ``argweb train|evaluate|parse discourse``.

The task itself (training, scoring, cross-validation, graph predictions) is
:mod:`gnn.discourse.task`, and what is done with a Molweni/STAC file (reading it, scoring it,
writing a parse in its own format) is :mod:`gnn.discourse.files`; here the files are found under
the settings' corpora and the model is resolved and loaded through the one model cache
(:func:`api.services.tasks.load`). Predictions over dialogues stored in the graph go
through :func:`api.services.predictions.predict_scope`. torch is imported lazily (inside the
functions): the CLI imports this module at start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from api.services import tasks
from api.settings import Settings
from gnn.discourse.files import FileEvaluation, ParseResult, evaluate_file, parse_file
from gnn.task import CVReport, TrainReport
from ontology.errors import NotFoundError, UnknownProfileError
from ontology.formats.perturb import DIALOGUE_VARIANTS
from ontology.formats.registry import corpora_root
from ontology.progress import SILENT, Reporter, stages

if TYPE_CHECKING:
    from gnn.discourse.train import DiscourseModel

TASK = "discourse"
DEFAULT_DATA = ("molweni/DP/dev.json", "stac/train.json")
"""The files the shipped model trains on, under the corpora directory."""


def default_model() -> Path:
    """The model shipped inside the package (:func:`gnn.registry.resolve_model` with no name).

    Raises:
        ModelError: None is shipped, or its card is broken.
    """
    from gnn.registry import resolve_model

    return resolve_model(TASK).path


def load(settings: Settings, model_dir: Path | None = None) -> DiscourseModel:
    """A discourse model (default: the packaged one), loaded once per process (:func:`api.services.tasks.load`).

    Raises:
        ApiError: ``model_dir`` is not a discourse model (a directory or a trained model's name).
        ModelError: The shipped model is missing or broken, or its encoder differs.
    """
    loaded: DiscourseModel = tasks.load(settings, TASK, model_dir).model
    return loaded


def recipe_data(settings: Settings, profile: str, data: Sequence[Path] | None) -> list[Path]:
    """The Molweni/STAC files a discourse recipe reads: ``data``, or :data:`DEFAULT_DATA` under the corpora.

    Raises:
        UnknownProfileError: ``profile`` is not a discourse profile.
        NotFoundError: No data given and none of the default files present.
    """
    from gnn.discourse.train import PROFILES

    UnknownProfileError.check(profile, PROFILES, TASK)
    if data:
        return list(data)
    root = corpora_root(settings.corpora)
    found = [root / rel for rel in DEFAULT_DATA if (root / rel).is_file()]
    if not found:
        raise NotFoundError(f"no Molweni/STAC files under {root} ({', '.join(DEFAULT_DATA)})")
    return found


def train(
    settings: Settings,
    data: list[Path] | None = None,
    out: Path | None = None,
    *,
    profile: str = "full",
    seed: int = 13,
    encoder_dir: Path | None = None,
    reporter: Reporter = SILENT,
) -> TrainReport:
    """Train the discourse parser (:func:`gnn.discourse.task.train_model`) and write a model directory with its card.

    Args:
        settings: Settings (embedding cache, corpora directory, models directory).
        data: Molweni/STAC JSON files; default: Molweni dev and STAC train of the corpora directory.
        out: Model directory; default ``<models dir>/discourse``.
        profile: ``quick``, ``full`` (or ``tiny``, for tests).
        seed: Random seed (model and splits).
        encoder_dir: A local Hugging Face encoder instead of the packaged MiniLM.
        reporter: Progress and log lines.

    Raises:
        NotFoundError: No data file found.
        UnknownProfileError: Unknown profile.
    """
    from gnn.discourse.task import TASK as DISCOURSE
    from gnn.discourse.task import train_model

    paths = recipe_data(settings, profile, data)
    config = DISCOURSE.recipes.config(profile, seed)
    found = DISCOURSE.examples(tasks.read_records(DISCOURSE.reads, paths), config)
    use = tasks.resources(settings, DISCOURSE, encoder_dir=encoder_dir, data=paths, reporter=reporter, device=None)
    with stages(reporter) as progress:
        return train_model(DISCOURSE, found, out or settings.models_dir / TASK, config, profile, use, progress)


def cross_validate(
    settings: Settings,
    data: list[Path] | None,
    folds: int = 5,
    *,
    profile: str = "full",
    seed: int = 13,
    members: int | None = None,
    reporter: Reporter = SILENT,
) -> CVReport:
    """Out-of-fold figures of the discourse recipe ``profile`` (``DiscourseTask.cross_validate``).

    Args:
        settings: Settings (corpora directory, embedding cache).
        data: Molweni/STAC JSON files; default: Molweni dev and STAC train (what the shipped model reads).
        folds: Number of folds.
        profile: Recipe of the fold models.
        seed: Seed of the folds and the networks.
        members: Networks per ensemble instead of the profile's (a cheaper run).
        reporter: Progress lines.

    Raises:
        UnknownProfileError: Unknown profile. NotFoundError: No data file. ApiError: Too few groups.
    """
    from gnn.discourse.task import TASK as DISCOURSE

    paths = recipe_data(settings, profile, data)
    config = DISCOURSE.recipes.config(profile, seed)
    if members is not None:
        config = replace(config, members=members)
    found = DISCOURSE.examples(tasks.read_records(DISCOURSE.reads, paths), config)
    use = tasks.resources(settings, DISCOURSE, data=paths, reporter=reporter, device=None)
    return DISCOURSE.cross_validate(found, config, use, folds=folds, seed=seed, profile=profile)


def evaluate(
    settings: Settings,
    data: Path,
    model_dir: Path | None = None,
    scheme: str | None = None,
    reporter: Reporter = SILENT,
) -> FileEvaluation:
    """Micro link and link & relation F1 of a model on every dialogue of a Molweni/STAC file.

    :func:`gnn.discourse.files.evaluate_file` with the model resolved here and the file also
    written every other valid way (:data:`ontology.formats.perturb.DIALOGUE_VARIANTS`).
    """
    model = load(settings, model_dir)
    name = str(model_dir or default_model())
    return evaluate_file(model, data, name, DIALOGUE_VARIANTS, scheme, reporter)


def parse(
    settings: Settings,
    source: Path,
    out: Path,
    model_dir: Path | None = None,
    scheme: str | None = None,
    reporter: Reporter = SILENT,
) -> ParseResult:
    """Predict the relations of every dialogue of ``source`` and write them to ``out`` in its format.

    :func:`gnn.discourse.files.parse_file` with the model resolved here.
    """
    return parse_file(load(settings, model_dir), source, out, scheme, reporter)
