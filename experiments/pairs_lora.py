"""The pair task's cross-encoder cut to fit a CPU: MiniLM with its top layer adapted by LoRA, measured, not adopted.

The pair's two texts go through the sentence encoder together, ``[CLS] source [SEP] target [SEP]``,
so every word of one side attends to every word of the other (frozen sentence vectors carry little
of how a denial stands to the claim it denies). Fine-tuning every weight of MiniLM runs at about 32
pairs a second on two CPU cores, an epoch of QT30 in 13 minutes; this recipe keeps that reading and
cuts the cost:

- the bottom layers stay frozen: each pair's hidden states after them are computed once, kept in
  memory in float16 and shared by every fold of a cross-validation and by every epoch;
- only the top ``trained_layers`` learn, through low-rank adapters (LoRA, rank ``rank``) on each of
  their linear maps, with a linear head over the first token's and the mean token vector of the
  top layer. The model directory holds only the adapters, the head and the config (a few hundred
  kB); the encoder is the one its card names, fingerprinted.

The loss is class-weighted cross-entropy; the epoch and the per-label log-biases are chosen on the
tuning episodes (:func:`gnn.pairs.bias_selection`) by the one :class:`gnn.trainer.Trainer`. With
``mirror`` the symmetric relations (attack, rephrase) are also trained in the other order, as
examples of their own.

The recipe (:data:`RECIPE`, a :class:`gnn.pairs.PairRecipe`) is not a profile of the product: the
pair task of this script (:data:`TASK`, the product's :class:`gnn.pairs.PairTask` that also knows
this recipe) trains and cross-validates it through the task's public methods, with the folds of
``argweb model evaluate pairs --cv 5``. Probed on fold 0 of those folds (about 50 minutes a fold on
two cores): attack F1 0.161 and macro-F1 0.342 against 0.199 and 0.408 for the shipped model on
that fold, so the shipped pair model stayed the MLP. Figures and protocol: docs/experiments/pairs.md,
"A cross-encoder that fits the CPU".

Usage: ``python -m experiments.pairs_lora [--data DIR ...] [--encoder DIR] [--folds 5] [--fold F]
[--seed 13] [--epochs 4] [--trained-layers 1] [--rank 8] [--mirror] [--max-steps 0] [--train OUT]
[--json OUT]`` (default data: the pair task's QT30 / DialAM maps under the settings' corpora
directory; ``--fold F`` runs fold F only, as the probe did; ``--train OUT`` trains a model
directory with its card instead, read back by :func:`load`).

torch and transformers are imported inside the functions.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gnn.pairs import (
    LABELS,
    PairExample,
    PairPredictor,
    PairRecipe,
    PairTask,
    PairTraining,
    RecipeCard,
    bias_selection,
    decided,
)
from gnn.pairs_cross import CrossConfig
from gnn.task import EvalReport, Resources
from ontology.errors import ApiError, ModelError

if TYPE_CHECKING:
    import torch

    from gnn.encoder import TextEncoder
    from gnn.trainer import Selection

WEIGHTS = "lora_pairs.safetensors"
CONFIG = "lora_pairs_config.json"
SYMMETRIC = (LABELS[2], LABELS[3])
"""Labels whose pair says the same read the other way round (:attr:`LoraConfig.mirror`)."""


@dataclass(frozen=True)
class LoraConfig(CrossConfig):
    """The LoRA cross-encoder recipe: the product's cross-encoder recipe and its schedule
    (:meth:`gnn.pairs_cross.CrossConfig.schedule`: AdamW, linear warm-up and decay per step), other
    defaults, and the adapters.

    Attributes:
        encoder: The packaged encoder whose layers are read (``--encoder DIR``: a local one).
        trained_layers: Top layers that learn (through adapters); those below are frozen and cached.
        rank: Rank of each adapter.
        alpha: Adapter scale numerator (the update is ``alpha / rank * B A``).
        dropout: Dropout before the head and on the adapters' input.
        epochs: Training epochs (the length of the warm-up and decay schedule).
        lr: Learning rate of the adapters and the head (AdamW).
        batch: Pairs per batch.
        max_length: Tokens of a pair (both texts together); longer pairs are cut, the longer text first.
        mirror: Also train attacks and rephrases read target -> source (examples of their own).
        seed: Seed of the adapters, the head, the batches and the ``none`` sampling.
    """

    epochs: int = 4
    lr: float = 1e-3
    batch: int = 32
    max_length: int = 96
    encoder: str = "all-MiniLM-L6-v2"
    trained_layers: int = 1
    rank: int = 8
    alpha: float = 16.0
    dropout: float = 0.1
    mirror: bool = False


# -- the network ---------------------------------------------------------------------------------


def _lora_linear(base: Any, rank: int, alpha: float, dropout: float) -> torch.nn.Module:
    """``base`` (frozen) plus a trainable low-rank update that starts at zero."""
    import torch
    from torch import nn

    class _Lora(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.base = base
            for p in self.base.parameters():
                p.requires_grad_(False)
            self.lora_a = nn.Parameter(torch.randn(rank, base.in_features) / base.in_features**0.5)
            self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank))
            self.scale = alpha / rank
            self.drop = nn.Dropout(dropout)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = self.base(x) + (self.drop(x) @ self.lora_a.T @ self.lora_b.T) * self.scale
            return out

    return _Lora()


def _adapt(layers: Any, config: LoraConfig) -> None:
    """Put an adapter on every linear map of ``layers`` (in place); everything else is frozen."""
    from torch import nn

    for p in layers.parameters():
        p.requires_grad_(False)
    for layer in layers:
        for child in list(layer.modules()):
            for attr, sub in list(child.named_children()):
                if isinstance(sub, nn.Linear):
                    setattr(child, attr, _lora_linear(sub, config.rank, config.alpha, config.dropout))


class _Top:
    """Builds the trainable top of the encoder: copies of its top layers with adapters, and a head."""

    @staticmethod
    def build(model: Any, config: LoraConfig) -> torch.nn.Module:
        import torch
        from torch import nn

        depth = len(model.encoder.layer)
        if not 1 <= config.trained_layers < depth + 1:
            raise ModelError(f"trained_layers {config.trained_layers}: the encoder has {depth} layers")
        layers = nn.ModuleList(copy.deepcopy(list(model.encoder.layer[depth - config.trained_layers :])))
        _adapt(layers, config)
        hidden = int(model.config.hidden_size)

        class _Net(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.layers = layers
                self.drop = nn.Dropout(config.dropout)
                self.head = nn.Linear(2 * hidden, len(LABELS))

            def forward(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
                h = states.float()
                # Additive mask over the keys: 0 where a token is, a large negative where padding is.
                extended = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
                for layer in self.layers:
                    out = layer(h, attention_mask=extended)
                    h = out[0] if isinstance(out, tuple) else out
                m = mask.unsqueeze(-1).float()
                mean = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
                logits: torch.Tensor = self.head(self.drop(torch.cat([h[:, 0], mean], dim=1)))
                return logits

        return _Net()


def _bottom(model: Any, config: LoraConfig) -> Any:
    """A copy of ``model`` without its top ``trained_layers`` (frozen, in eval mode)."""
    bottom = copy.deepcopy(model)
    depth = len(bottom.encoder.layer)
    bottom.encoder.layer = bottom.encoder.layer[: depth - config.trained_layers]
    bottom.eval()
    for p in bottom.parameters():
        p.requires_grad_(False)
    return bottom


class _States:
    """Pairs -> the frozen bottom's hidden states (float16, one tensor per pair, padding cut off)."""

    def __init__(self, tokenizer: Any, bottom: Any, config: LoraConfig, keep: bool, batch: int = 64) -> None:
        """``keep``: hold every pair's states (training); else only those of the batch asked for."""
        self.tokenizer = tokenizer
        self.bottom = bottom
        self.max_length = config.max_length
        self.keep = keep
        self.batch = batch
        self._kept: dict[tuple[str, str], Any] = {}

    def add(self, pairs: Sequence[tuple[str, str]], log: Any = None) -> None:
        """Compute the states of the pairs not yet kept."""
        self._kept.update(self._compute([p for p in set(pairs) if p not in self._kept], log))

    def _compute(self, pairs: Sequence[tuple[str, str]], log: Any = None) -> dict[tuple[str, str], Any]:
        """The states of ``pairs`` (longest first, so batches pad little)."""
        import torch

        found: dict[tuple[str, str], Any] = {}
        new = sorted(set(pairs), key=lambda p: (-len(p[0]) - len(p[1]), p))
        device = next(self.bottom.parameters()).device
        started = time.perf_counter()
        with torch.inference_mode():
            for k in range(0, len(new), self.batch):
                chunk = new[k : k + self.batch]
                enc = self.tokenizer([a for a, _ in chunk], [b for _, b in chunk], truncation="longest_first",
                                     max_length=self.max_length, padding=True, return_tensors="pt")  # fmt: skip
                enc = {key: v.to(device) for key, v in enc.items()}
                hidden = self.bottom(**enc).last_hidden_state.to(torch.float16).cpu()
                lengths = enc["attention_mask"].sum(1).tolist()
                for pair, h, n in zip(chunk, hidden, lengths, strict=True):
                    found[pair] = h[: int(n)].clone()
                if log is not None and (k // self.batch) % 100 == 99:
                    log(f"pairs cross-lora: states of {k + len(chunk)}/{len(new)} pairs "
                        f"({time.perf_counter() - started:.0f} s)")  # fmt: skip
        return found

    def batch_of(self, pairs: Sequence[tuple[str, str]], device: str) -> tuple[torch.Tensor, torch.Tensor]:
        """Padded states and mask of ``pairs`` (their states computed if not kept)."""
        import torch

        if self.keep:
            self.add(pairs)
            kept = self._kept
        else:
            kept = {**self._kept, **self._compute([p for p in pairs if p not in self._kept])}
        rows = [kept[p] for p in pairs]
        width = max(int(r.shape[0]) for r in rows)
        states = torch.zeros(len(rows), width, int(rows[0].shape[1]), dtype=torch.float16)
        mask = torch.zeros(len(rows), width, dtype=torch.long)
        for i, r in enumerate(rows):
            states[i, : r.shape[0]] = r
            mask[i, : r.shape[0]] = 1
        return states.to(device), mask.to(device)


class LoraPairModel:
    """The adapted top with its head, the frozen bottom's states, the recipe and the decision biases."""

    def __init__(self, net: Any, states: _States, config: LoraConfig, bias: list[float], device: str) -> None:
        """Wrap a trained network."""
        self.net = net
        self.states = states
        self.config = config
        self.bias = bias
        self.device = device

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """``(len(pairs), 4)`` probabilities over :data:`LABELS`."""
        import torch

        if not pairs:
            return np.zeros((0, len(LABELS)), dtype=np.float64)
        self.net.eval()
        out = []
        step = max(self.config.batch, 1) * 4
        with torch.inference_mode():
            for k in range(0, len(pairs), step):
                states, mask = self.states.batch_of(pairs[k : k + step], self.device)
                out.append(torch.softmax(self.net(states, mask).float(), dim=1).cpu().double().numpy())
        return np.concatenate(out)

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, float, dict[str, float]]]:
        """Per pair: the decided label, its probability, and the probability of every label."""
        return decided(self.probabilities(pairs), self.bias)

    def save(self, model_dir: Path) -> int:
        """Write the adapters and the head (float32) and the config; returns the bytes written."""
        from safetensors.torch import save_file

        from gnn.modelcard import atomic_write_bytes

        model_dir.mkdir(parents=True, exist_ok=True)
        trained = {k: v.detach().cpu().contiguous() for k, v in self.net.named_parameters() if v.requires_grad}
        save_file(trained, str(model_dir / WEIGHTS))
        meta = {"config": asdict(self.config), "bias": self.bias, "labels": list(LABELS)}
        atomic_write_bytes(model_dir / CONFIG, (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode())
        return sum((model_dir / f).stat().st_size for f in (WEIGHTS, CONFIG))


def _parts(encoder: TextEncoder, config: LoraConfig) -> tuple[Any, Any, Any]:
    """Tokenizer, the model's frozen bottom and a fresh trainable top, from ``encoder``'s weights.

    The encoder's own model is copied, never changed: other tasks of the process read it.
    """
    tokenizer, model = encoder.load_transformer()
    return tokenizer, _bottom(model, config), _Top.build(model, config)


def _pair_rows(examples: Sequence[PairExample], mirror: bool) -> list[tuple[tuple[str, str], int]]:
    """``((source, target), label index)`` of the examples; with ``mirror`` the symmetric ones read backwards too."""
    rows = [((e.source, e.target), LABELS.index(e.label)) for e in examples]
    if mirror:
        rows += [((e.target, e.source), LABELS.index(e.label)) for e in examples if e.label in SYMMETRIC]
    return rows


class _LoraFit:
    """The :class:`gnn.trainer.Fittable` of the adapters: weighted cross-entropy, tuning macro-F1."""

    def __init__(
        self, net: Any, states: _States, config: LoraConfig, train: Sequence[PairExample], tune: Sequence[PairExample]
    ) -> None:
        import torch

        self.net = net
        self.states = states
        self.config = config
        self.rows = _pair_rows(train, config.mirror)
        self.tune = list(tune)
        y = torch.tensor([k for _, k in self.rows], dtype=torch.long)
        counts = torch.bincount(y, minlength=len(LABELS)).float().clamp(min=1)
        weight = (counts.sum() / counts) ** config.class_power
        self.criterion = torch.nn.CrossEntropyLoss(weight=weight / weight.mean())

    @property
    def module(self) -> torch.nn.Module:
        """The adapted top layers with the head."""
        module: torch.nn.Module = self.net
        return module

    def param_groups(self) -> Any:
        """The adapters and the head (the copied layers' own weights stay frozen)."""
        return [p for p in self.net.parameters() if p.requires_grad]

    def batches(self, rng: np.random.Generator) -> list[Any]:
        """Shuffled batches of training rows (at most ``max_steps`` of them)."""
        order = rng.permutation(len(self.rows))
        out = [order[k : k + self.config.batch] for k in range(0, len(order), self.config.batch)]
        return out[: self.config.max_steps] if self.config.max_steps else out

    def _device(self) -> str:
        return str(next(self.net.parameters()).device)

    def loss(self, batch: Any) -> torch.Tensor:
        """Weighted cross-entropy of one batch."""
        import torch

        rows = [self.rows[int(i)] for i in batch]
        device = self._device()
        states, mask = self.states.batch_of([p for p, _ in rows], device)
        gold = torch.tensor([k for _, k in rows], dtype=torch.long, device=device)
        loss: torch.Tensor = self.criterion.to(device)(self.net(states, mask).float(), gold)
        return loss

    def select(self) -> Selection | None:
        """Macro-F1 on the tuning pairs with biases chosen there (:func:`gnn.pairs.bias_selection`)."""
        if not self.tune:
            return None
        model = LoraPairModel(self.net, self.states, self.config, [0.0] * len(LABELS), self._device())
        probs = model.probabilities([(e.source, e.target) for e in self.tune])
        return bias_selection(probs, np.array([LABELS.index(e.label) for e in self.tune]))


class LoraRecipe:
    """The LoRA cross-encoder as a :class:`gnn.pairs.PairRecipe`."""

    name: str = "cross-lora"
    config_type: type = LoraConfig
    files: tuple[str, ...] = (CONFIG, WEIGHTS)

    def __init__(self) -> None:
        """No states yet: they are kept per encoder and recipe shape once computed."""
        self._states: dict[tuple[str, int, int], _States] = {}

    def _encoder(self, config: LoraConfig, resources: Resources) -> TextEncoder:
        return resources.encoder(config.encoder)

    def _kept_states(self, encoder: TextEncoder, config: LoraConfig, tokenizer: Any, bottom: Any) -> _States:
        """The states of the frozen bottom, shared by the folds and the refit of one run."""
        key = (encoder.fingerprint(), config.trained_layers, config.max_length)
        if key not in self._states:
            self._states = {key: _States(tokenizer, bottom, config, keep=True)}  # one encoder's states at a time
        return self._states[key]

    def fit(
        self, train: Sequence[PairExample], tune: Sequence[PairExample], config: Any, resources: Resources, refit: bool
    ) -> tuple[LoraPairModel, PairTraining]:
        """Adapt the top layers on ``train``; epoch and biases chosen on ``tune``.

        With ``refit`` the adapters are trained again from their start on both, up to that epoch.

        Raises:
            ModelError: No training pairs, or the encoder cannot be read.
        """
        from gnn.device import pick_device, seed_everything
        from gnn.trainer import Trainer

        if not train:
            raise ModelError("no training pairs")
        started = time.perf_counter()
        device = pick_device(resources.device)
        schedule = config.schedule()
        encoder = self._encoder(config, resources)
        seed_everything(config.seed)
        tokenizer, bottom, net = _parts(encoder, config)
        states = self._kept_states(encoder, config, tokenizer, bottom.to(device))
        states.add([p for p, _ in _pair_rows([*train, *tune], config.mirror)], log=resources.log)
        job = _LoraFit(net, states, config, train, tune)
        result = Trainer(schedule, device, log=resources.log, label="pairs cross-lora: ").fit(job)
        net = job.net
        if refit and tune:
            seed_everything(config.seed)
            again = _LoraFit(_parts(encoder, config)[2], states, config, [*train, *tune], [])
            Trainer(schedule, device, log=resources.log, label="pairs cross-lora refit: ").fit(
                again, stop_after=result.best_epoch
            )
            net = again.net
        bias = list(result.chosen.get("bias", [0.0] * len(LABELS)))
        model = LoraPairModel(net.eval(), states, config, bias, device)
        return model, PairTraining(result, result.best_epoch if refit and tune else None,
                                   time.perf_counter() - started, result.history)  # fmt: skip

    def card(self, config: Any, resources: Resources) -> RecipeCard:
        """Adapters over the encoder the card names (its fingerprint checked on load)."""
        encoder = self._encoder(config, resources)
        return RecipeCard(
            "pair-cross-lora",
            list(self.files),
            encoder.name,
            encoder.fingerprint(),
            str(resources.encoder_dir.resolve()) if resources.encoder_dir else None,
            f"Cross-encoder over {encoder.name}: [CLS] source [SEP] target [SEP]; the bottom layers frozen, "
            f"the top {config.trained_layers} adapted with rank-{config.rank} LoRA, a linear head over the first "
            "token and the mean token; per-label log-biases chosen on the tuning episodes. Out of context: "
            "two texts, no map.",
        )

    def load(self, model_dir: Path, encoder: TextEncoder | None, device: str | None) -> LoraPairModel:
        """The adapted cross-encoder in ``model_dir`` over ``encoder`` (the one its card names).

        Raises:
            ModelError: No encoder given, or missing or malformed files.
        """
        from safetensors.torch import load_file

        from gnn.device import pick_device

        if encoder is None:
            raise ModelError(f"{model_dir}: the pair cross-encoder adapts an encoder; none was given")
        where = pick_device(device)
        try:
            meta = json.loads((model_dir / CONFIG).read_text(encoding="utf-8"))
            config = LoraConfig(**meta["config"])
            if tuple(meta["labels"]) != LABELS:
                raise ModelError(f"{model_dir / CONFIG}: labels {meta['labels']}, expected {list(LABELS)}")
            tokenizer, bottom, net = _parts(encoder, config)
            missing = net.load_state_dict(load_file(str(model_dir / WEIGHTS)), strict=False)
            if missing.unexpected_keys or any(k for k in missing.missing_keys if "lora_" in k or "head" in k):
                raise ModelError(f"{model_dir / WEIGHTS}: adapters do not fit the recipe ({missing})")
        except (OSError, KeyError, TypeError, ValueError, RuntimeError) as e:
            raise ModelError(f"{model_dir}: not a pair cross-encoder with adapters ({e})") from e
        states = _States(tokenizer, bottom.to(where), config, keep=False)
        return LoraPairModel(net.to(where).eval(), states, config, [float(b) for b in meta["bias"]], where)


RECIPE = LoraRecipe()
"""The LoRA cross-encoder recipe (no profile of the product names it)."""


# -- the recipe run through the pair task ------------------------------------------------------------


class LoraPairTask(PairTask):
    """The product's pair task, handed :data:`RECIPE` directly: a :class:`LoraConfig` trains and loads with it.

    Everything else (examples, the tuning part and refit of :meth:`train`, the card, the challenge
    and M-Arg scores, the folds of :meth:`cross_validate`) is the product's pair task unchanged.
    """

    def recipe(self, config: Any) -> PairRecipe:
        """:data:`RECIPE` for a :class:`LoraConfig`, else the product's recipe of ``config``."""
        if isinstance(config, LoraConfig):
            return RECIPE
        return super().recipe(config)

    def load(self, model_dir: Path, *, encoder: TextEncoder | None, device: str | None) -> PairPredictor:
        """The adapters in ``model_dir`` when its files are :data:`RECIPE`'s, else the product's pair model.

        Raises:
            ModelError: Not a pair model of either, or no encoder given for the adapters.
        """
        if all((model_dir / f).is_file() for f in RECIPE.files):
            return RECIPE.load(model_dir, encoder, device)
        return super().load(model_dir, encoder=encoder, device=device)


TASK = LoraPairTask()
"""The pair task that trains :data:`RECIPE`."""


def load(model_dir: Path, cache_dir: Path, device: str | None = "cpu") -> LoraPairModel:
    """The model ``--train`` wrote to ``model_dir``, over the encoder its card names (fingerprint checked).

    Raises:
        ModelError: No card, the card's encoder is missing or another, or not a LoRA pair model.
    """
    from gnn.encoder import card_encoder
    from gnn.modelcard import read_card

    if not all((model_dir / f).is_file() for f in RECIPE.files):
        raise ModelError(f"{model_dir}: not a LoRA pair model (no {' / '.join(RECIPE.files)})")
    encoder = card_encoder(model_dir, read_card(model_dir), cache_dir, device="cpu")
    return RECIPE.load(model_dir, encoder, device)


@dataclass(frozen=True)
class FoldReport:
    """One fold of the protocol run alone: what was chosen on its tuning part, its held-out figures.

    Attributes:
        fold: The fold's index (0-based, as ``--fold`` names it).
        folds: Folds of the protocol it belongs to.
        sizes: Training, tuning and held-out pairs.
        chosen: Epoch and biases chosen on the tuning part.
        evaluation: The fold model's figures on the held-out pairs, predicted against gold per label.
        seconds: Wall time of the fold.
    """

    fold: int
    folds: int
    sizes: Mapping[str, int]
    chosen: Mapping[str, Any]
    evaluation: EvalReport
    seconds: float

    def document(self) -> dict[str, Any]:
        """The fold as ``--json`` writes it."""
        return {
            "fold": self.fold,
            "folds": self.folds,
            "sizes": dict(self.sizes),
            "chosen": dict(self.chosen),
            **self.evaluation.document(),
            "seconds": self.seconds,
        }


def one_fold(
    examples: Sequence[PairExample], config: LoraConfig, resources: Resources, *, folds: int, fold: int, seed: int
) -> FoldReport:
    """Fold ``fold`` of the folds :meth:`LoraPairTask.cross_validate` cuts (:func:`gnn.protocol.fold_plan`).

    Raises:
        ApiError: ``fold`` is not one of the ``folds`` folds, or fewer episodes than folds.
    """
    from gnn.protocol import fold_plan

    groups = [TASK.group(e) for e in examples]
    if not 0 <= fold < folds:
        raise ApiError(f"fold {fold}: the protocol has folds 0 to {folds - 1}")
    if len(set(groups)) < folds:
        raise ApiError(f"{len(set(groups))} episode(s) cannot fill {folds} folds")
    started = time.perf_counter()
    plan = fold_plan(groups, folds, seed)[fold]
    train, tune, test = ([examples[i] for i in part] for part in (plan.train, plan.tune, plan.test))
    fitted = TASK.fit(train, tune, config, resources)
    evaluation = TASK.evaluate(fitted.model, test, resources)
    sizes = {"train": len(train), "tune": len(tune), "test": len(test)}
    return FoldReport(fold, folds, sizes, fitted.chosen, evaluation, round(time.perf_counter() - started, 1))


def main(argv: list[str] | None = None) -> int:
    """Cross-validate the recipe (all folds, or one), or train a model directory; print the figures."""
    from api.services import tasks
    from api.settings import get_settings
    from ontology.progress import SILENT

    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--data", type=Path, nargs="*", help="QT30 / DialAM AIF folders (default: the pair task's)")
    ap.add_argument("--encoder", type=Path, help="a local Hugging Face encoder (default: the packaged MiniLM)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--fold", type=int, help="run this fold of the protocol only (0-based)")
    ap.add_argument("--seed", type=int, default=13)
    base = LoraConfig()
    ap.add_argument("--epochs", type=int, default=base.epochs)
    ap.add_argument("--trained-layers", type=int, default=base.trained_layers)
    ap.add_argument("--rank", type=int, default=base.rank)
    ap.add_argument("--mirror", action="store_true", help="also train attacks and rephrases read backwards")
    ap.add_argument("--max-steps", type=int, default=base.max_steps, help="batches per epoch at most (0: all)")
    ap.add_argument("--train", type=Path, metavar="OUT", help="train a model directory here instead")
    ap.add_argument("--json", type=Path, help="write the report here")
    args = ap.parse_args(argv)
    if args.fold is not None and not 0 <= args.fold < args.folds:
        ap.error(f"--fold {args.fold}: the protocol's {args.folds} folds are 0 to {args.folds - 1}")
    config = replace(
        base,
        epochs=args.epochs,
        trained_layers=args.trained_layers,
        rank=args.rank,
        mirror=args.mirror,
        max_steps=args.max_steps,
        seed=args.seed,
    )
    settings = get_settings()
    paths, examples = tasks.examples(settings, TASK, args.data, config, SILENT)
    use = tasks.resources(settings, TASK, encoder_dir=args.encoder, data=paths, device=None)
    use = replace(use, log=lambda msg: print(msg, file=sys.stderr, flush=True))
    document: dict[str, Any]
    if args.train is not None:
        report = TASK.train(examples, args.train, config, "cross-lora", use)
        print(report.summary)
        document = {"model_dir": str(report.model_dir), "metrics": report.card.metrics}
    elif args.fold is not None:
        found = one_fold(examples, config, use, folds=args.folds, fold=args.fold, seed=args.seed)
        document = found.document()
        print(json.dumps(document, indent=1, default=str))
    else:
        cv = TASK.cross_validate(examples, config, use, folds=args.folds, seed=args.seed, profile="cross-lora")
        document = cv.document()
        for name, figure in sorted(cv.figures.items()):
            print(f"{name:24} {figure.mean} ± {figure.std} (folds {list(figure.folds)})")
        for label, tally in sorted(cv.labels.items()):
            print(f"{label:24} predicted {tally.predicted} for {tally.gold} gold, {tally.right} right")
    if args.json is not None:
        document["config"] = asdict(config)
        args.json.write_text(json.dumps(document, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
