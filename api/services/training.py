"""What the model services share: the profile check, the model card of a finished run, and the check of a
model directory the caller names."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from gnn.modelcard import ModelCard, git_commit, write_card
from ontology.errors import UnknownProfileError

ConfigT = TypeVar("ConfigT")


class TrainingRun(Protocol):
    """What a training loop reports: its wall time and per-epoch history."""

    @property
    def seconds(self) -> float: ...

    @property
    def history(self) -> Any: ...


def profile_config(
    profiles: Mapping[str, Mapping[str, Any]],
    profile: str,
    seed: int,
    config: Callable[..., ConfigT],
    task: str | None = None,
) -> ConfigT:
    """The model configuration of ``profile`` (a profile of ``task``) with ``seed``.

    Raises:
        UnknownProfileError: Unknown profile.
    """
    UnknownProfileError.check(profile, profiles, task)
    return config(seed=seed, **profiles[profile])


def write_trained_card(
    out: Path, card: ModelCard, config: Any, profile: str, run: TrainingRun, metrics: dict[str, Any], size: int
) -> ModelCard:
    """Complete ``card`` with what the run was and measured, write it into ``out`` and return it.

    ``card`` names the model and describes its weights, encoder and data. The hyperparameters
    become the configuration (less its free-form ``extra``) and the profile; the metrics gain the
    run's history and the size in bytes of the weights saved into ``out``.
    """
    written = replace(
        card,
        hyperparameters={k: v for k, v in vars(config).items() if k != "extra"} | {"profile": profile},
        metrics=metrics | {"history": run.history, "bytes": size},
        training_seconds=round(run.seconds, 1),
        git_commit=git_commit(),
    )
    write_card(out, written)
    return written
