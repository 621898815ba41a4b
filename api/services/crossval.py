"""Grouped cross-validation of the shipped training recipes (the ``--cv K`` of ``argweb evaluate``).

Thin: the files are read here, the protocol (:mod:`gnn.protocol`) and each task's folds live in
gnn (:mod:`gnn.discourse.cv`, :mod:`gnn.relations.sciarg_cv`,
:func:`gnn.relations.qt30_run.cross_validate_qt30`), but for the component tagger's, whose folds
are scored with the BAM documents of :mod:`api.services.components`. No model is read or written.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from api.services.reporting import SILENT, Reporter
from api.settings import Settings


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
