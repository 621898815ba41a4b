"""The out-of-context pair model as a service: wiring of :mod:`gnn.pairs` (the task on the contract).

Training, the card, evaluation, cross-validation and prediction live in :class:`gnn.pairs.PairTask`;
this module names the task for the routes, the CLI and the benchmarks (:mod:`api.services.tasks`
does the reading, the model resolution and the one model cache). ``POST /predict`` with ``task:
pair`` answers through :func:`classify`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from api.services import tasks
from api.settings import Settings
from gnn.modelcard import ModelCard
from gnn.pairs import CHALLENGE, CHALLENGE_SECOND, MODEL_NAME, TASK_NAME, PairPredictor, score_marg
from gnn.pairs import TASK as PAIR_TASK
from gnn.pairs import VERSION as _VERSION
from gnn.task import CVReport, TrainReport
from ontology.labels import RelationLabel
from ontology.progress import SILENT, Reporter

if TYPE_CHECKING:
    from gnn.relations.marg_task import Pair

TASK = TASK_NAME
VERSION = str(_VERSION)
__all__ = ["CHALLENGE", "CHALLENGE_SECOND", "MODEL_NAME", "TASK", "VERSION", "score_marg"]


def train(
    settings: Settings,
    data: Sequence[Path] | None,
    out: Path,
    *,
    profile: str = "full",
    seed: int = 13,
    encoder_dir: Path | None = None,
    reporter: Reporter = SILENT,
) -> TrainReport:
    """Train the pair model into ``out`` and write its card (:meth:`gnn.pairs.PairTask.train`).

    Raises:
        UnknownProfileError: Unknown profile. LoaderError: No QT30 maps.
    """
    return tasks.train(
        settings, TASK, data, out, profile=profile, seed=seed, encoder_dir=encoder_dir, reporter=reporter
    )


def cross_validate(
    settings: Settings,
    data: Sequence[Path] | None,
    folds: int = 5,
    *,
    profile: str = "full",
    seed: int = 13,
    encoder_dir: Path | None = None,
    reporter: Reporter = SILENT,
) -> CVReport:
    """Out-of-fold figures of the pair recipe ``profile``, folds by QT30 episode (no model is written).

    Raises:
        UnknownProfileError: Unknown profile. LoaderError: No QT30 maps.
    """
    return tasks.cross_validate(
        settings, TASK, data, folds, profile=profile, seed=seed, encoder_dir=encoder_dir, reporter=reporter
    )


def model_dir(settings: Settings, model: Path | str | None = None) -> Path:
    """The pair model directory for what the caller wrote (:func:`gnn.registry.resolve_model`).

    Raises:
        NotFoundError: No such model. ApiError: Not a pair model. ModelError: The shipped one is broken.
    """
    from gnn.registry import resolve_model

    return resolve_model(TASK, model, settings.models_dir if model is not None else None).path


def load(settings: Settings, model: Path | str | None = None) -> tuple[ModelCard, PairPredictor]:
    """The model card and the loaded model (``model``, else the shipped one), loaded once per process.

    Raises:
        ModelError: The model is broken, or its encoder is not the one it was trained with.
    """
    loaded = tasks.load(settings, TASK, model)
    return loaded.card, loaded.model


def classify(
    settings: Settings, pairs: Sequence[tuple[str, str]], model: Path | str | None = None
) -> list[tuple[RelationLabel, float, dict[str, float]]]:
    """Label (source, target) text pairs, out of context.

    Returns:
        Per pair: the label (support, attack, rephrase or none), its probability and the
        probability of every label.
    """
    from gnn.task import TextPair

    found = tasks.predict(settings, TASK, [TextPair(a, b) for a, b in pairs], model)
    return [(RelationLabel(p.label), p.score, dict(p.probabilities)) for p in found]


def marg_pairs(settings: Settings) -> list[Pair]:
    """M-Arg's gold pairs under the corpora directory (empty when it is not there)."""
    return PAIR_TASK.marg_pairs(tasks.resources(settings, PAIR_TASK))
