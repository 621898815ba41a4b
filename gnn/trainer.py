"""The one training loop of ``gnn``: every task's network is fitted by :class:`Trainer`.

A task hands the trainer a :class:`Fittable` (its network, its batches for one epoch, the loss of a
batch and, when it has tuning data, a score to maximise after each epoch); the trainer owns what
is the same for every task: seeding, the optimiser and its schedule, gradient clipping, early
stopping, the refit that stops at an epoch chosen earlier, weight averaging, the device (CUDA with
bf16 autocast when present) and progress through one callback.

torch is imported inside the functions: the CLI imports this module eagerly and must stay fast.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from gnn.device import pick_device, seed_everything
from ontology.progress import Progress as Progress

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class Schedule:
    """How a network is optimised: the settings every task's training shares.

    Attributes:
        epochs: Passes over the training batches (the length of the learning-rate schedule).
        lr: Learning rate (of every parameter group that does not name its own ``lr``).
        weight_decay: Decoupled weight decay (AdamW) or L2 (Adam).
        optimizer: ``adamw`` or ``adam``.
        decay: ``cosine`` (per epoch, to zero at ``epochs``), ``warmup-linear`` (per step: a
            linear warm-up over ``warmup`` of the steps, then linear decay to ``floor``), or
            ``none``.
        warmup: Share of the steps spent warming up (``warmup-linear``).
        floor: Smallest learning-rate factor (``warmup-linear``).
        clip: Largest gradient norm; ``None``: no clipping.
        patience: Stop when the tuning score has not improved for this many epochs; ``None``:
            train every epoch.
        average_from: From this epoch (1-based) on, the running average of the weights competes
            with the current weights for selection; ``None``: no averaging.
        seed: Seeds Python, NumPy and torch, and the generator given to ``batches``.
        autocast: Run forward passes in bf16 autocast when the device is CUDA.
    """

    epochs: int
    lr: float
    weight_decay: float = 0.0
    optimizer: Literal["adamw", "adam"] = "adamw"
    decay: Literal["cosine", "warmup-linear", "none"] = "cosine"
    warmup: float = 0.05
    floor: float = 0.05
    clip: float | None = 1.0
    patience: int | None = None
    average_from: int | None = None
    seed: int = 0
    autocast: bool = True


@dataclass
class Selection:
    """A tuning score after an epoch, and what was chosen with it.

    Attributes:
        score: The number to maximise.
        chosen: Settings chosen on the tuning data with this epoch's weights (a threshold, an
            offset), kept with the best epoch and returned in :attr:`FitResult.chosen`.
        row: Figures for the history row (tuning F1 ...).
    """

    score: float
    chosen: dict[str, Any] = field(default_factory=dict)
    row: dict[str, Any] = field(default_factory=dict)


class Fittable(Protocol):
    """What a task gives the trainer for one training run."""

    @property
    def module(self) -> torch.nn.Module:
        """The network whose weights are trained, selected and restored."""
        ...

    def param_groups(self) -> Iterable[Any]:
        """Parameters (or torch parameter groups) to optimise."""
        ...

    def batches(self, rng: np.random.Generator) -> Sequence[Any]:
        """One epoch's batches, in the order to visit them (``rng`` is the trainer's seeded generator)."""
        ...

    def loss(self, batch: Any) -> torch.Tensor:
        """The scalar loss of one batch (the module is in training mode, on the trainer's device)."""
        ...

    def select(self) -> Selection | None:
        """The tuning score of the current weights; ``None`` when there is no tuning data."""
        ...


@dataclass
class FitResult:
    """What a fit did.

    Attributes:
        best_epoch: The epoch (1-based) whose weights were kept.
        best_score: Its tuning score (``None`` without tuning data).
        averaged: Whether the kept weights are the running average.
        chosen: The settings chosen with the kept epoch (:attr:`Selection.chosen`).
        history: One row per epoch: ``epoch``, ``loss``, ``seconds`` and the tuning figures.
        seconds: Wall time of the fit.
    """

    best_epoch: int
    best_score: float | None
    averaged: bool
    chosen: dict[str, Any]
    history: list[dict[str, Any]]
    seconds: float


def _optimizer(schedule: Schedule, groups: Iterable[Any]) -> torch.optim.Optimizer:
    import torch

    if schedule.optimizer == "adam":
        return torch.optim.Adam(groups, lr=schedule.lr, weight_decay=schedule.weight_decay)
    return torch.optim.AdamW(groups, lr=schedule.lr, weight_decay=schedule.weight_decay)


def _snapshot(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


class Trainer:
    """Fits a :class:`Fittable` under a :class:`Schedule`.

    Args:
        schedule: Optimiser, learning-rate schedule, stopping and seed.
        device: Torch device; ``None`` picks CUDA when present, else CPU.
        progress: Called with ``("train", epoch, epochs)`` after each epoch.
        log: Called with one line per epoch (loss and tuning figures).
        label: Prefix of the log lines (an ensemble member's seed ...).
    """

    def __init__(
        self,
        schedule: Schedule,
        device: str | None = None,
        progress: Progress | None = None,
        log: Callable[[str], None] | None = None,
        label: str = "",
    ) -> None:
        self.schedule = schedule
        self.device = pick_device(device)
        self.progress = progress
        self.log = log
        self.label = label

    def _autocast(self) -> Any:
        import contextlib

        import torch

        if self.schedule.autocast and self.device.startswith("cuda"):
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def fit(self, job: Fittable, stop_after: int | None = None) -> FitResult:
        """Train ``job.module`` in place and keep the best epoch's weights.

        Without tuning data (``job.select()`` is ``None``) or with ``stop_after`` (a refit on more
        data whose epoch an earlier, tuned run chose), training ends after that epoch (1-based)
        and keeps its weights; the learning-rate schedule still spans ``schedule.epochs``, so the
        weights are those the same epoch of a full run would have.

        Args:
            job: The task's network, batches, loss and tuning score.
            stop_after: Last epoch to train (1-based); ``None``: select on the tuning score.

        Returns:
            The kept epoch, its score and chosen settings, and the per-epoch history.
        """
        import torch

        s = self.schedule
        started = time.perf_counter()
        seed_everything(s.seed)
        rng = np.random.default_rng(s.seed)
        job.module.to(self.device)
        optimizer = _optimizer(s, job.param_groups())
        scheduler: Any = None
        per_step = False
        if s.decay == "cosine":
            scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(s.epochs, 1))
        elif s.decay == "warmup-linear":
            steps = max(s.epochs * len(job.batches(np.random.default_rng(s.seed))), 1)
            warm = max(1, int(steps * s.warmup))
            scheduler = torch.optim.lr_scheduler.LambdaLR(
                optimizer, lambda step: min((step + 1) / warm, max(s.floor, 1 - step / steps))
            )
            per_step = True
        last = s.epochs if stop_after is None else min(stop_after, s.epochs)
        best: tuple[float, int, bool, dict[str, torch.Tensor], dict[str, Any]] | None = None
        averaged: dict[str, torch.Tensor] = {}
        history: list[dict[str, Any]] = []
        stale = 0
        for epoch in range(1, last + 1):
            t0 = time.perf_counter()
            job.module.train()
            total, count = 0.0, 0
            for batch in job.batches(rng):
                with self._autocast():
                    loss = job.loss(batch)
                optimizer.zero_grad()
                loss.backward()
                if s.clip is not None:
                    torch.nn.utils.clip_grad_norm_(job.module.parameters(), s.clip)
                optimizer.step()
                if per_step:
                    scheduler.step()
                total += float(loss.detach())
                count += 1
            if scheduler is not None and not per_step:
                scheduler.step()
            row: dict[str, Any] = {"epoch": epoch, "loss": round(total / max(count, 1), 5)}
            candidates = [(False, _snapshot(job.module))]
            if s.average_from is not None and epoch >= s.average_from:
                n = epoch - s.average_from + 1
                current = candidates[0][1]
                averaged = {k: v if n == 1 else averaged[k] + (v - averaged[k]) / n for k, v in current.items()}
                candidates.append((True, averaged))
            improved = False
            if stop_after is None:
                for is_average, state in candidates:
                    if is_average:
                        job.module.load_state_dict(state)
                    job.module.eval()
                    with torch.inference_mode():
                        picked = job.select()
                    if is_average:
                        job.module.load_state_dict(candidates[0][1])
                    if picked is None:
                        break
                    suffix = "_averaged" if is_average else ""
                    row.update({f"{k}{suffix}": v for k, v in picked.row.items()})
                    row[f"tune{suffix}"] = round(picked.score, 5)
                    if best is None or picked.score > best[0]:
                        best = (picked.score, epoch, is_average, dict(state), dict(picked.chosen))
                        improved = True
            row["seconds"] = round(time.perf_counter() - t0, 2)
            history.append(row)
            if self.log is not None:
                shown = {k: f"{v:.4f}" if isinstance(v, float) else v for k, v in row.items()}
                tuned = "".join(f", {k} {v}" for k, v in shown.items() if k not in ("epoch", "loss", "seconds"))
                took = f"({row['seconds']:.0f} s)"
                self.log(f"{self.label}epoch {epoch}/{s.epochs}: loss {row['loss']:.4f}{tuned} {took}")
            if self.progress is not None:
                self.progress("train", epoch, last)
            stale = 0 if improved else stale + 1
            if best is not None and s.patience is not None and stale >= s.patience:
                break
        job.module.eval()
        if best is None:  # no tuning data, or a refit: the last epoch's weights stay
            for row in history[-1:]:
                row["selected"] = True
            return FitResult(len(history), None, False, {}, history, time.perf_counter() - started)
        job.module.load_state_dict(best[3])
        history[best[1] - 1]["selected"] = "averaged" if best[2] else True
        return FitResult(best[1], best[0], best[2], best[4], history, time.perf_counter() - started)
