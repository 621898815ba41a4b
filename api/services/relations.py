"""Argument relation models as services: train, evaluate, and predict in the corpora's own formats.

Wiring only: the settings give the model directory, device and encoder, and the file work (reading
AIF maps, brat papers and M-Arg tables, predicting into them, scoring on them) belongs to
:mod:`gnn.relations.files`; nothing here touches Neo4j.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from api.settings import Settings
from gnn.relations.files import (
    AifPrediction,
    SciargPrediction,
    classify,
    evaluate_files,
    load_data,
    predict_aif_files,
    predict_sciarg_files,
    require_distinct,
    runtime,
)
from gnn.relations.task import FORMAT_OBJECTIVE
from gnn.task import CVReport, JsonDocument
from ontology.errors import ApiError, LoaderError, UnknownProfileError
from ontology.formats.perturb import AIF_VARIANTS
from ontology.progress import SILENT, Reporter

if TYPE_CHECKING:
    from gnn.encoder import TextEncoder
    from gnn.modelcard import ModelCard


def _runtime(settings: Settings, model: Path | str | None) -> tuple[Path, str, TextEncoder | None]:
    """The relation model directory for what the caller wrote (:func:`gnn.registry.resolve_model`), the
    device and the encoder it runs with (:func:`gnn.relations.files.runtime`).

    Raises:
        ApiError: ``model`` is not a relations model (a directory or a trained model's name).
        ModelError: The shipped model is missing or broken, or its encoder is not the one it was trained with.
    """
    from gnn.registry import resolve_model

    model_dir = resolve_model("relations", model, settings.models_dir).path
    return (model_dir, *runtime(model_dir, settings.cache_dir))


def train(
    settings: Settings,
    paths: list[Path],
    out: Path | None = None,
    *,
    profile: str = "quick",
    seed: int = 0,
    encoder_dir: Path | None = None,
    reporter: Reporter = SILENT,
    progress: Callable[[str, int, int], None] | None = None,
) -> ModelCard:
    """Train relation models on ``paths`` into ``out`` (default: the settings' model directory).

    ``encoder_dir`` is a local Hugging Face encoder to read the texts with (full profile) instead of
    the packaged MiniLM. ``progress`` hears ``(stage, done, total)`` while features are computed
    and networks trained; ``reporter`` gets a line per training epoch.

    Raises:
        UnknownProfileError: ``profile`` is not a relations profile (before any data is read).
        ApiError: ``encoder_dir`` with a profile that reads no encoder. ModelError: ``encoder_dir``
            is not a model directory.
    """
    from gnn.device import pick_device
    from gnn.encoder import encoder_for
    from gnn.relations.pipeline import PROFILES, train_relations

    UnknownProfileError.check(profile, PROFILES, "relations")
    data = load_data(paths, reporter)
    device = pick_device()
    if encoder_dir is not None and profile != "full":
        raise ApiError(f"--encoder reads the texts of the full profile; the {profile} profile uses LSA vectors")
    encoder = encoder_for(None, encoder_dir, settings.cache_dir, device=device) if profile == "full" else None
    target = out or settings.models_dir / "relations"
    return train_relations(
        data, target, profile=profile, seed=seed, device=device, encoder=encoder, progress=progress, log=reporter.log
    )


def evaluate(
    settings: Settings, model: Path, paths: list[Path], *, variants: bool = True, reporter: Reporter = SILENT
) -> JsonDocument:
    """Scores of ``model`` on ``paths`` with the TF-IDF + LR baseline of the same run.

    With ``variants`` the evaluated QT30 maps are also scored written every other valid way
    (:data:`ontology.formats.perturb.AIF_VARIANTS`: node order, id forms, colon spacing, no optional keys).
    """
    model_dir, device, encoder = _runtime(settings, model)
    changes = AIF_VARIANTS if variants else None
    return evaluate_files(model_dir, paths, device=device, encoder=encoder, variants=changes, reporter=reporter)


def predict_aif(
    settings: Settings,
    in_dir: Path,
    out_dir: Path,
    model: Path | None = None,
    *,
    objective: str = FORMAT_OBJECTIVE,
    reporter: Reporter = SILENT,
) -> AifPrediction:
    """Predict RA/CA/MA for every AIF map of ``in_dir`` into ``out_dir``, same file names.

    The settings choose the model, device and encoder; :func:`gnn.relations.files.predict_aif_files`
    does the work.

    Raises:
        LoaderError: A malformed map (named). ApiError: ``in_dir`` equals ``out_dir``.
    """
    require_distinct(in_dir, out_dir, "maps")
    model_dir, device, encoder = _runtime(settings, model)
    return predict_aif_files(
        model_dir, in_dir, out_dir, device=device, encoder=encoder, objective=objective, reporter=reporter
    )


def predict_sciarg(
    settings: Settings,
    in_dir: Path,
    out_dir: Path,
    model: Path | None = None,
    *,
    components: bool = False,
    components_model: Path | None = None,
    reporter: Reporter = SILENT,
) -> SciargPrediction:
    """Predict relations for every brat paper of ``in_dir`` (:func:`gnn.relations.files.predict_sciarg_files`).

    With ``components`` the papers are the ``.txt`` files of ``in_dir`` (any ``.ann`` there is
    ignored): the component tagger (``components_model``, else the shipped one) predicts their
    ``T`` lines first, so the output is the full pipeline's, components then relations.

    Raises:
        LoaderError: A malformed paper (named), or no ``.txt`` with ``components``. ApiError: ``in_dir``
            equals ``out_dir``.
    """
    require_distinct(in_dir, out_dir, "papers")
    if components:
        from api.services.components import predict_dir

        with tempfile.TemporaryDirectory(prefix="argweb-components-") as tmp:
            tagged = predict_dir(in_dir, Path(tmp), components_model, link=False)
            reporter.log(f"tagged {tagged.components} component(s) in {tagged.papers} paper(s)")
            result = predict_sciarg(settings, Path(tmp), out_dir, model, reporter=reporter)
        return replace(result, components=tagged.components)
    model_dir, device, encoder = _runtime(settings, model)
    return predict_sciarg_files(model_dir, in_dir, out_dir, device=device, encoder=encoder, reporter=reporter)


@dataclass(frozen=True)
class RelationsCV:
    """Out-of-fold figures of the relation recipes, per family found in the data.

    Attributes:
        qt30: The QT30 / DialAM maps' cross-validation through the task contract (``None``: no maps).
        sciarg: The Sci-Arg papers' (:func:`gnn.relations.sciarg_cv.cross_validate_sciarg`'s summary,
            whose predicted-against-gold counts are per decoding with ``--end-to-end``; ``None``: no papers).
    """

    qt30: CVReport | None
    sciarg: JsonDocument | None

    def document(self) -> JsonDocument:
        """The reports as ``evaluate relations --cv K --json`` prints them, keyed by family."""
        found: JsonDocument = {} if self.qt30 is None else {"qt30": self.qt30.document()}
        return found if self.sciarg is None else {**found, "sciarg": self.sciarg}


def cross_validate(
    settings: Settings,
    paths: list[Path],
    folds: int = 5,
    *,
    profile: str = "full",
    seed: int = 0,
    end_to_end: bool = False,
    encoder_dir: Path | None = None,
    reporter: Reporter = SILENT,
) -> RelationsCV:
    """Out-of-fold figures of the relation recipes on the data under ``paths``, per family found there.

    QT30 / DialAM maps go through the task contract (:meth:`gnn.relations.task.RelationsTask.cross_validate`:
    gold relations grouped by episode); Sci-Arg papers through
    :func:`gnn.sciarg_pipeline.cross_validate_papers` (grouped by paper, over A01-A32). With
    ``end_to_end``, each Sci-Arg fold also trains the component tagger and scores the pipeline on
    the held-out papers. The full profile reads the texts with the packaged MiniLM, or with the
    local encoder in ``encoder_dir``.

    Raises:
        LoaderError: Neither QT30 maps nor Sci-Arg papers under ``paths``; ``end_to_end`` without
            the Sci-Arg brat files.
        ApiError: ``encoder_dir`` with a profile that reads no encoder (LSA text vectors).
        UnknownProfileError: ``profile`` is not a relations profile.
    """
    from api.services import tasks
    from gnn.device import pick_device
    from gnn.encoder import encoder_for
    from gnn.relations.family import TrainOptions
    from gnn.relations.task import TASK

    UnknownProfileError.check(profile, TASK.recipes.profiles, "relations")
    if encoder_dir is not None and profile != "full":
        raise ApiError(f"the {profile} profile reads LSA text vectors, no encoder; --encoder goes with --profile full")
    src = classify(paths)
    if not (src.aif or src.brat):
        raise LoaderError(
            f"cross-validation needs QT30 / DialAM AIF maps or Sci-Arg papers; none in {', '.join(map(str, paths))}"
        )
    if end_to_end and not src.brat:
        raise LoaderError(f"--end-to-end needs the Sci-Arg papers; none in {', '.join(map(str, paths))}")
    sciarg = None
    if src.brat:
        from gnn.sciarg_pipeline import cross_validate_papers

        device = pick_device()
        encoder = encoder_for(None, encoder_dir, settings.cache_dir, device=device) if profile == "full" else None
        options = TrainOptions(profile, seed, device, encoder, log=reporter.log)
        sciarg = cross_validate_papers(
            src.brat, paths, options, folds, pipeline=end_to_end, cache_dir=settings.cache_dir
        )
    qt30 = None
    if src.aif:
        qt30 = tasks.cross_validate(
            settings,
            "relations",
            src.aif,
            folds,
            profile=profile,
            seed=seed,
            encoder_dir=encoder_dir,
            reporter=reporter,
        )
    return RelationsCV(qt30, sciarg)
