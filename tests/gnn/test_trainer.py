"""The one training loop: selection, refit, early stopping, averaging and seeding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import torch

from gnn.trainer import Schedule, Selection, Trainer

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier


class Line:
    """y = 2x + 1 fitted by one linear layer; the tuning score is chosen by the test."""

    def __init__(self, scores: Sequence[float] | None = None) -> None:
        torch.manual_seed(0)
        self.module = torch.nn.Linear(1, 1)
        self.x = torch.linspace(-1, 1, 64).unsqueeze(1)
        self.y = 2 * self.x + 1
        self.scores = list(scores) if scores is not None else None
        self.calls = 0

    def param_groups(self) -> Any:
        return self.module.parameters()

    def batches(self, rng: np.random.Generator) -> list[torch.Tensor]:
        order = torch.from_numpy(rng.permutation(64))
        return [order[k : k + 16] for k in range(0, 64, 16)]

    def loss(self, batch: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.mse_loss(self.module(self.x[batch]), self.y[batch])

    def select(self) -> Selection | None:
        if self.scores is None:
            return None
        score = self.scores[min(self.calls, len(self.scores) - 1)]
        self.calls += 1
        return Selection(score, chosen={"offset": self.calls}, row={"tune_f1": score})


def test_the_best_tuning_epoch_is_kept_with_what_was_chosen_with_it() -> None:
    job = Line([0.1, 0.5, 0.3, 0.2])
    result = Trainer(Schedule(epochs=4, lr=0.1, seed=1), device="cpu").fit(job)
    assert result.best_epoch == 2 and result.best_score == 0.5
    assert result.chosen == {"offset": 2}
    assert [row.get("selected") for row in result.history] == [None, True, None, None]
    # the kept weights are epoch 2's: a run stopped after 2 epochs has the same weights
    again = Line()
    Trainer(Schedule(epochs=4, lr=0.1, seed=1), device="cpu").fit(again, stop_after=2)
    for a, b in zip(job.module.parameters(), again.module.parameters(), strict=True):
        assert torch.equal(a, b)


def test_a_refit_follows_the_full_schedule_up_to_its_epoch() -> None:
    full, short = Line(), Line()
    Trainer(Schedule(epochs=3, lr=0.05, seed=3), device="cpu").fit(full)  # no tuning data: all epochs
    result = Trainer(Schedule(epochs=6, lr=0.05, seed=3), device="cpu").fit(short, stop_after=3)
    assert result.best_epoch == 3 and len(result.history) == 3 and result.best_score is None
    # a 6-epoch cosine schedule stopped at 3 is not a 3-epoch schedule: the weights differ
    assert not torch.equal(full.module.weight, short.module.weight)


def test_patience_stops_and_restores_the_best() -> None:
    job = Line([0.9, 0.1, 0.2, 0.3, 0.4, 0.5])
    result = Trainer(Schedule(epochs=6, lr=0.1, patience=2, seed=0), device="cpu").fit(job)
    assert len(result.history) == 3 and result.best_epoch == 1


def test_averaged_weights_compete_and_can_win() -> None:
    # tuning scores alternate current / averaged from epoch 2: the averaged weights of epoch 3 win
    job = Line([0.1, 0.2, 0.3, 0.2, 0.9, 0.4, 0.1])
    result = Trainer(Schedule(epochs=4, lr=0.1, average_from=2, seed=0), device="cpu").fit(job)
    assert result.best_epoch == 3 and result.averaged
    assert result.history[2]["selected"] == "averaged"
    assert "tune_averaged" in result.history[2]


@pytest.mark.parametrize("decay", ["cosine", "warmup-linear", "none"])
def test_the_same_seed_gives_the_same_weights_and_the_loss_falls(decay: str) -> None:
    a, b = Line(), Line()
    ra = Trainer(Schedule(epochs=5, lr=0.05, decay=decay, seed=7), device="cpu").fit(a)  # type: ignore[arg-type]
    Trainer(Schedule(epochs=5, lr=0.05, decay=decay, seed=7), device="cpu").fit(b)  # type: ignore[arg-type]
    assert torch.equal(a.module.weight, b.module.weight)
    assert ra.history[-1]["loss"] < ra.history[0]["loss"]


def test_progress_and_log_hear_every_epoch() -> None:
    seen: list[tuple[str, int, int]] = []
    lines: list[str] = []
    Trainer(Schedule(epochs=3, lr=0.1), device="cpu", progress=lambda *a: seen.append(a), log=lines.append).fit(
        Line([0.1, 0.2, 0.3])
    )
    assert seen == [("train", 1, 3), ("train", 2, 3), ("train", 3, 3)]
    assert len(lines) == 3 and "tune_f1 0.3" in lines[-1]
