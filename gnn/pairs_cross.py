"""A recipe of the pair task: a fine-tuned cross-encoder (profile ``cross``).

The pair's two texts go through one local Hugging Face encoder together (``--encoder PATH``: any
directory ``AutoModel`` reads, DeBERTa-size included), as ``[CLS] source [SEP] target [SEP]``; a
classification head reads the first token's vector and gives the probabilities of
:data:`gnn.pairs.LABELS`. Every weight is fine-tuned by the one :class:`gnn.trainer.Trainer`
(AdamW, linear warm-up and decay, CUDA with bf16 autocast when present); the epoch and the
per-label log-biases are chosen on the tuning episodes as in the shipped recipe
(:func:`gnn.pairs.tune_bias`).

It is how a user with a GPU and large weights reaches the published figures of fine-tuned
encoders; the shipped default stays the CPU recipe (:class:`gnn.pairs.MlpRecipe`). The model
directory holds the fine-tuned encoder and its tokenizer (``cross-encoder/``), the head and its
config; it runs without the encoder it started from.

torch and transformers are imported inside the functions: the CLI imports the pair task eagerly.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gnn.pairs import LABELS, PairExample, PairTraining, RecipeCard, bias_selection, decided
from gnn.task import Resources
from ontology.errors import ApiError, ModelError

if TYPE_CHECKING:
    import torch

    from gnn.encoder import TextEncoder
    from gnn.trainer import Schedule, Selection

ENCODER_DIR = "cross-encoder"
HEAD = "cross_head.safetensors"
CONFIG = "cross_config.json"


@dataclass(frozen=True)
class CrossConfig:
    """The cross-encoder recipe.

    Attributes:
        epochs: Training epochs (the length of the warm-up and decay schedule).
        lr: Learning rate of every weight (AdamW).
        weight_decay: AdamW weight decay.
        warmup: Share of the steps spent warming up.
        batch: Pairs per batch.
        max_length: Tokens of a pair (both texts together); longer pairs are cut, the longer text first.
        class_power: Class weights of the loss are ``(n / n_c) ** class_power``.
        none_share: Sampled ``none`` pairs per gold relation of a map.
        max_steps: Batches per epoch at most (``0``: all); a smoke run takes one.
        seed: Seed of the head, the batches and the ``none`` sampling.
    """

    epochs: int = 3
    lr: float = 2e-5
    weight_decay: float = 0.01
    warmup: float = 0.1
    batch: int = 16
    max_length: int = 256
    class_power: float = 0.5
    none_share: float = 1.0
    max_steps: int = 0
    seed: int = 13

    def schedule(self) -> Schedule:
        """The Trainer's schedule: AdamW, linear warm-up and decay per step, bf16 autocast on CUDA."""
        from gnn.trainer import Schedule

        return Schedule(
            epochs=self.epochs,
            lr=self.lr,
            weight_decay=self.weight_decay,
            decay="warmup-linear",
            warmup=self.warmup,
            seed=self.seed,
            autocast=True,
        )


PROFILES: dict[str, CrossConfig] = {"cross": CrossConfig()}
"""``cross``: fine-tune the encoder given with ``--encoder`` (a GPU is advised)."""


class CrossEncoderModel:
    """A fine-tuned cross-encoder with its head, tokenizer, recipe and decision biases."""

    def __init__(self, net: Any, tokenizer: Any, config: CrossConfig, bias: list[float], device: str) -> None:
        """Wrap a trained network (:class:`_Net`)."""
        self.net = net
        self.tokenizer = tokenizer
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
        with torch.inference_mode():
            for k in range(0, len(pairs), max(self.config.batch, 1)):
                batch = _encode(self.tokenizer, pairs[k : k + self.config.batch], self.config.max_length, self.device)
                out.append(torch.softmax(self.net(batch).float(), dim=1).cpu().double().numpy())
        return np.concatenate(out)

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, float, dict[str, float]]]:
        """Per pair: the decided label, its probability, and the probability of every label."""
        return decided(self.probabilities(pairs), self.bias)

    def save(self, model_dir: Path) -> int:
        """Write the fine-tuned encoder and tokenizer, the head and the config; returns the bytes written."""
        from safetensors.torch import save_file

        from gnn.modelcard import atomic_write_bytes

        model_dir.mkdir(parents=True, exist_ok=True)
        self.net.encoder.save_pretrained(model_dir / ENCODER_DIR)
        self.tokenizer.save_pretrained(model_dir / ENCODER_DIR)
        save_file({k: v.detach().cpu().contiguous() for k, v in self.net.head.state_dict().items()},
                  str(model_dir / HEAD))  # fmt: skip
        meta = {"config": asdict(self.config), "bias": self.bias, "labels": list(LABELS)}
        atomic_write_bytes(model_dir / CONFIG, (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode())
        return sum(p.stat().st_size for p in model_dir.rglob("*") if p.is_file() and p.name != "model_card.json")


def _encode(tokenizer: Any, pairs: Sequence[tuple[str, str]], max_length: int, device: str) -> Any:
    """The tokenised pairs of one batch, on ``device``."""
    batch = tokenizer(
        [a for a, _ in pairs],
        [b for _, b in pairs],
        truncation="longest_first",
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )
    return {k: v.to(device) for k, v in batch.items()}


def _net(encoder: Any) -> torch.nn.Module:
    """The encoder with a linear head over its first token's vector."""
    from torch import nn

    class _Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.head = nn.Linear(int(encoder.config.hidden_size), len(LABELS))

        def forward(self, batch: dict[str, Any]) -> Any:
            hidden = self.encoder(**batch).last_hidden_state[:, 0]
            return self.head(hidden)

    return _Net()


def _load_encoder(where: Path) -> tuple[Any, Any]:
    """Tokenizer and encoder of a local Hugging Face directory (never downloaded).

    Raises:
        ModelError: Not such a directory.
    """
    from transformers import AutoModel, AutoTokenizer

    try:
        return (
            AutoTokenizer.from_pretrained(str(where), local_files_only=True),
            AutoModel.from_pretrained(str(where), local_files_only=True),
        )
    except (OSError, ValueError) as e:
        raise ModelError(f"{where}: cannot load a Hugging Face encoder offline: {e}") from e


class _CrossFit:
    """The :class:`gnn.trainer.Fittable` of the cross-encoder: weighted cross-entropy, tuning macro-F1."""

    def __init__(
        self, net: Any, tokenizer: Any, config: CrossConfig, train: Sequence[PairExample], tune: Sequence[PairExample]
    ) -> None:
        import torch

        self.net = net
        self.tokenizer = tokenizer
        self.config = config
        self.train = list(train)
        self.tune = list(tune)
        y = torch.tensor([LABELS.index(e.label) for e in self.train], dtype=torch.long)
        counts = torch.bincount(y, minlength=len(LABELS)).float().clamp(min=1)
        weight = (counts.sum() / counts) ** config.class_power
        self.criterion = torch.nn.CrossEntropyLoss(weight=weight / weight.mean())

    @property
    def module(self) -> torch.nn.Module:
        """The encoder with its head."""
        module: torch.nn.Module = self.net
        return module

    def param_groups(self) -> Any:
        """Every weight, the encoder's included."""
        return self.net.parameters()

    def batches(self, rng: np.random.Generator) -> list[Any]:
        """Shuffled batches of training examples (at most ``max_steps`` of them)."""
        order = rng.permutation(len(self.train))
        out = [order[k : k + self.config.batch] for k in range(0, len(order), self.config.batch)]
        return out[: self.config.max_steps] if self.config.max_steps else out

    def _device(self) -> str:
        return str(next(self.net.parameters()).device)

    def loss(self, batch: Any) -> torch.Tensor:
        """Weighted cross-entropy of one batch."""
        import torch

        rows = [self.train[int(i)] for i in batch]
        device = self._device()
        logits = self.net(_encode(self.tokenizer, [(e.source, e.target) for e in rows], self.config.max_length, device))
        gold = torch.tensor([LABELS.index(e.label) for e in rows], dtype=torch.long, device=device)
        loss: torch.Tensor = self.criterion.to(device)(logits.float(), gold)
        return loss

    def select(self) -> Selection | None:
        """Macro-F1 on the tuning pairs with biases chosen there (:func:`gnn.pairs.bias_selection`)."""
        if not self.tune:
            return None
        model = CrossEncoderModel(self.net, self.tokenizer, self.config, [0.0] * len(LABELS), self._device())
        probs = model.probabilities([(e.source, e.target) for e in self.tune])
        return bias_selection(probs, np.array([LABELS.index(e.label) for e in self.tune]))


class CrossRecipe:
    """The cross-encoder as a :class:`gnn.pairs.PairRecipe`."""

    name: str = "cross-encoder"
    config_type: type = CrossConfig
    files: tuple[str, ...] = (CONFIG, HEAD)

    @staticmethod
    def _base(resources: Resources) -> Path:
        if resources.encoder_dir is None:
            raise ApiError("the cross-encoder recipe fine-tunes a local encoder: give it with --encoder PATH")
        return resources.encoder_dir

    def fit(
        self, train: Sequence[PairExample], tune: Sequence[PairExample], config: Any, resources: Resources, refit: bool
    ) -> tuple[CrossEncoderModel, PairTraining]:
        """Fine-tune the encoder of ``resources`` on ``train``; epoch and biases chosen on ``tune``.

        With ``refit`` the encoder is fine-tuned again from its start on both, up to that epoch.

        Raises:
            ApiError: No encoder given. ModelError: No training pairs, or the encoder cannot be read.
        """
        from gnn.device import pick_device, seed_everything
        from gnn.trainer import Trainer

        if not train:
            raise ModelError("no training pairs")
        started = time.perf_counter()
        device = pick_device(resources.device)
        schedule = config.schedule()
        seed_everything(config.seed)
        tokenizer, encoder = _load_encoder(self._base(resources))
        job = _CrossFit(_net(encoder), tokenizer, config, train, tune)
        result = Trainer(schedule, device, log=resources.log, label="pairs cross: ").fit(job)
        net = job.net
        if refit and tune:
            seed_everything(config.seed)
            tokenizer, encoder = _load_encoder(self._base(resources))
            again = _CrossFit(_net(encoder), tokenizer, config, [*train, *tune], [])
            Trainer(schedule, device, log=resources.log, label="pairs cross refit: ").fit(
                again, stop_after=result.best_epoch
            )
            net = again.net
        bias = list(result.chosen.get("bias", [0.0] * len(LABELS)))
        model = CrossEncoderModel(net.eval(), tokenizer, config, bias, device)
        return model, PairTraining(result, result.best_epoch if refit and tune else None,
                                   time.perf_counter() - started, result.history)  # fmt: skip

    def card(self, config: Any, resources: Resources) -> RecipeCard:
        """The fine-tuned encoder travels in the model directory; its start is named, not fingerprinted."""
        base = self._base(resources)
        return RecipeCard(
            "pair-cross-encoder",
            [CONFIG, HEAD, f"{ENCODER_DIR}/config.json"],
            base.name,
            None,
            str(base.resolve()),
            f"Cross-encoder fine-tuned from {base.name}: [CLS] source [SEP] target [SEP], a linear head over the "
            "first token; per-label log-biases chosen on the tuning episodes. Out of context: two texts, no map.",
        )

    def load(self, model_dir: Path, encoder: TextEncoder | None, device: str | None) -> CrossEncoderModel:
        """The cross-encoder in ``model_dir`` (``encoder`` is not used: its own travels with it).

        Raises:
            ModelError: Missing or malformed files.
        """
        from safetensors.torch import load_file

        from gnn.device import pick_device

        where = pick_device(device)
        try:
            meta = json.loads((model_dir / CONFIG).read_text(encoding="utf-8"))
            config = CrossConfig(**meta["config"])
            if tuple(meta["labels"]) != LABELS:
                raise ModelError(f"{model_dir / CONFIG}: labels {meta['labels']}, expected {list(LABELS)}")
            tokenizer, base = _load_encoder(model_dir / ENCODER_DIR)
            net = _net(base)
            head: Any = net.head
            head.load_state_dict(load_file(str(model_dir / HEAD)))
        except (OSError, KeyError, TypeError, ValueError, RuntimeError) as e:
            raise ModelError(f"{model_dir}: not a pair cross-encoder ({e})") from e
        return CrossEncoderModel(net.to(where).eval(), tokenizer, config, [float(b) for b in meta["bias"]], where)


RECIPE = CrossRecipe()
"""The recipe :data:`gnn.pairs.RECIPE_MODULES` names."""
