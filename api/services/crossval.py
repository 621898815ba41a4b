"""Grouped cross-validation of the shipped training recipes (the ``--cv K`` of ``argweb evaluate``).

Thin: the files are read here, the protocol (:mod:`gnn.protocol`) and each task's folds live in
gnn (:mod:`gnn.discourse.cv`, :mod:`gnn.relations.sciarg_cv`,
:func:`gnn.relations.qt30_run.cross_validate_qt30`; the component tagger's end-to-end figure is
:func:`gnn.sciarg_pipeline.end_to_end`). No model is read or written.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from api.services.reporting import SILENT, Reporter
from api.settings import Settings
from ontology.errors import ApiError, LoaderError


def discourse(
    settings: Settings,
    data: list[Path] | None,
    folds: int = 5,
    *,
    profile: str = "full",
    seed: int = 13,
    members: int | None = None,
    reporter: Reporter = SILENT,
) -> dict[str, Any]:
    """Out-of-fold figures of the discourse recipe ``profile`` on the Molweni/STAC files ``data``.

    Args:
        settings: Settings (corpora directory, embedding cache).
        data: Molweni/STAC JSON files; default: Molweni dev and STAC train (what the shipped model reads).
        folds: Number of folds.
        profile: Recipe of the fold models.
        seed: Seed of the folds and the networks.
        members: Networks per ensemble instead of the profile's (a cheaper run).
        reporter: Progress lines.

    Raises:
        UnknownProfileError: Unknown profile. NotFoundError: No data file.
    """
    from api.services.discourse import read_dialogues, recipe_data
    from gnn.discourse.cv import cross_validate_discourse
    from gnn.discourse.train import PROFILES, ParserConfig
    from gnn.encoder import encoder_for

    data = recipe_data(settings, profile, data)
    files = {path.name: read_dialogues(path)[0] for path in data}
    config = ParserConfig(seed=seed, **PROFILES[profile])
    if members is not None:
        config = replace(config, members=members)
    out = cross_validate_discourse(
        files, encoder_for(None, None, settings.cache_dir), config, folds, seed, log=reporter.log
    )
    return {**out, "profile": profile}


def relations(
    settings: Settings,
    paths: list[Path],
    folds: int = 5,
    *,
    profile: str = "full",
    seed: int = 0,
    end_to_end: bool = False,
    encoder_dir: Path | None = None,
    reporter: Reporter = SILENT,
) -> dict[str, Any]:
    """Out-of-fold figures of the relation recipes on the data under ``paths``, per family found there.

    QT30 / DialAM maps are grouped by episode (:func:`gnn.relations.qt30_run.cross_validate_qt30`),
    Sci-Arg papers by paper (:func:`gnn.relations.sciarg_cv.cross_validate_sciarg`, over A01-A32).
    With ``end_to_end``, each Sci-Arg fold also trains the component tagger (its recipe of the same
    profile, seed 13) on the same papers and scores the pipeline on the held-out ones
    (:func:`gnn.sciarg_pipeline.end_to_end`).
    The full profile reads the texts with the packaged MiniLM, or with the local encoder in
    ``encoder_dir``.

    Raises:
        LoaderError: Neither QT30 maps nor Sci-Arg papers under ``paths``; ``end_to_end`` without
            the Sci-Arg brat files.
        ApiError: ``encoder_dir`` with a profile that reads no encoder (LSA text vectors).
    """
    from api.services.relations import load_data
    from gnn.device import pick_device
    from gnn.encoder import encoder_for
    from gnn.relations.family import TrainOptions
    from gnn.relations.qt30_run import cross_validate_qt30
    from gnn.relations.sciarg_cv import SHIPPED_PAPERS, cross_validate_sciarg
    from gnn.sciarg_pipeline import end_to_end as end_to_end_scorer

    if encoder_dir is not None and profile != "full":
        raise ApiError(f"the {profile} profile reads LSA text vectors, no encoder; --encoder goes with --profile full")
    data = load_data(paths, reporter)
    if not (data.qt30 or data.sciarg):
        raise LoaderError(
            f"cross-validation needs QT30 / DialAM AIF maps or Sci-Arg papers; none in {', '.join(map(str, paths))}"
        )
    device = pick_device()
    encoder = encoder_for(None, encoder_dir, settings.cache_dir, device=device) if profile == "full" else None
    options = TrainOptions(profile, seed, device, encoder, log=reporter.log)
    out: dict[str, Any] = {}
    if end_to_end and not data.sciarg:
        raise LoaderError(f"--end-to-end needs the Sci-Arg papers; none in {', '.join(map(str, paths))}")
    # The papers the shipped card trains on (A33-A40 are the official test papers), when present.
    kept = [p for p in data.sciarg if p.name in SHIPPED_PAPERS] or data.sciarg
    # Built first, so that a missing brat folder is said before any fold trains.
    scorer = (
        end_to_end_scorer(_brat_dir(paths), [p.name for p in kept], options, settings.cache_dir) if end_to_end else None
    )
    if data.qt30:
        out["qt30"] = cross_validate_qt30(data.qt30, options, folds)
    if kept:
        out["sciarg"] = cross_validate_sciarg(kept, options, folds, only=None, end_to_end=scorer)
    return out


def _brat_dir(paths: list[Path]) -> Path:
    """The one folder under ``paths`` that holds the Sci-Arg ``.ann`` files."""
    found = {
        ann.parent
        for path in paths
        for ann in ([path] if path.is_file() else path.rglob("*.ann"))
        if ann.suffix == ".ann"
    }
    if len(found) != 1:
        raise LoaderError(f"the end-to-end figure needs one folder of Sci-Arg brat files; found {len(found)}")
    return found.pop()
