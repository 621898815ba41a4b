"""Paraphrase highlighter with a fine-tuned encoder (the ``finetune`` training profile).

The shipped highlighter (:mod:`gnn.paraphrase`) keeps the encoder frozen and trains a small head on
its word vectors. This variant fine-tunes the encoder's top ``finetune_layers`` transformer layers
(all six of MiniLM-L6 in the ``finetune`` profile) together with a linear token head:

* input: guest and host as one pair of word lists (``[CLS] guest [SEP] host [SEP]``), as the
  frozen highlighter encodes them;
* a word's logit is the mean of its sub-words' logits; words cut off by the 512-token limit keep
  logit 0;
* loss: binary cross-entropy against the same per-word targets (``ParaphrasePair.targets``);
* the frozen lower layers' outputs are computed once per pair, so an epoch costs only the
  trained layers (about 30 s for all six over the 420 ContextDeP training pairs on the 2-core
  machine);
* epoch and logit offset are chosen on the tuning pairs with the frozen highlighter's criterion
  (F1 plus the mean of the two highlight Jaccards) and offsets (:data:`gnn.paraphrase.BIASES`).

The model directory holds the trained layers and the head (float32, about 43 MB with six layers:
too large to ship within the 20 MB of packaged models, so it is trained on demand) and the
configuration; the base encoder is loaded from its package or ``base_dir``. torch and
transformers are imported lazily.
"""

from __future__ import annotations

import copy
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

from gnn.paraphrase import (
    CONFIG,
    HighlighterConfig,
    ParaphraseHighlighter,
    TrainResult,
    pair_encoding,
    score_epoch,
)
from gnn.paraphrase_eval import PairPrediction, ParaphrasePair

WEIGHTS = "paraphrase_encoder.safetensors"


# The linear maps of a BERT layer that get adapters: attention query, key, value and output, and
# the feed-forward block's two projections.
LORA_TARGETS = (
    ("attention", "self", "query"),
    ("attention", "self", "key"),
    ("attention", "self", "value"),
    ("attention", "output", "dense"),
    ("intermediate", "dense"),
    ("output", "dense"),
)


def add_lora(layers: Any, rank: int, alpha: float | None = None) -> None:
    """Freeze ``layers`` and give each of their :data:`LORA_TARGETS` a trainable low-rank update.

    ``W x`` becomes ``W x + (alpha / rank) * B A x`` (Hu et al. 2022) with ``A`` (rank x in) drawn
    like a linear layer's weight and ``B`` (out x rank) zero, so training starts from the encoder
    as it is. The layer norms stay trainable (a few thousand parameters).
    """
    import math

    import torch

    class LoraLinear(torch.nn.Module):
        def __init__(self, base: torch.nn.Linear) -> None:
            super().__init__()
            self.base = base
            self.lora_a = torch.nn.Parameter(torch.empty(rank, base.in_features))
            self.lora_b = torch.nn.Parameter(torch.zeros(base.out_features, rank))
            torch.nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))
            self.scale = (alpha if alpha is not None else 2.0 * rank) / rank

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.base(x) + (x @ self.lora_a.T @ self.lora_b.T) * self.scale

    for layer in layers:
        for p in layer.parameters():
            p.requires_grad_(False)
        for path in LORA_TARGETS:
            parent = layer
            for name in path[:-1]:
                parent = getattr(parent, name)
            setattr(parent, path[-1], LoraLinear(getattr(parent, path[-1])))
        for module in layer.modules():
            if isinstance(module, torch.nn.LayerNorm):
                for p in module.parameters():
                    p.requires_grad_(True)


def _through(layers: Any, x: Any, attention_mask: Any) -> Any:
    """``x`` (batch x sub-words x width) through BERT ``layers`` in turn (``attention_mask``: additive or ``None``)."""
    for layer in layers:
        out = layer(x, attention_mask=attention_mask)
        x = out[0] if isinstance(out, tuple) else out
    return x


class FineTunedHighlighter:
    """Frozen lower encoder layers, fine-tuned upper layers and a token head.

    Build one with :func:`train_finetuned` or :meth:`load`.

    Args:
        config: Hyper-parameters; ``finetune_layers`` is the number of trained top layers.
        base_dir: Local encoder directory (``None``: the packaged MiniLM).
    """

    def __init__(self, config: HighlighterConfig, base_dir: Path | None = None) -> None:
        import torch

        from gnn.encoder import TextEncoder

        self.config = config
        encoder = TextEncoder(base_dir)
        self.name = encoder.name
        self.tokenizer, self.base = encoder.load_transformer()
        n_layers = len(self.base.encoder.layer)
        self.frozen = n_layers - max(1, min(config.finetune_layers, n_layers))
        self.layers = torch.nn.ModuleList(
            copy.deepcopy(self.base.encoder.layer[k]) for k in range(self.frozen, n_layers)
        )
        if config.lora_rank > 0:
            add_lora(self.layers, config.lora_rank)
        self.width = int(self.base.config.hidden_size)
        self.head = torch.nn.Sequential(torch.nn.Dropout(config.dropout), torch.nn.Linear(self.width, 1))
        device = next(self.base.parameters()).device
        self.layers.to(device)
        self.head.to(device)

    # -- inputs -------------------------------------------------------------------------------
    def lower_states(self, pair: ParaphrasePair) -> tuple[Any, Any]:
        """Output of the frozen layers for one pair (float16, sub-words x width) and its word index.

        Only the embeddings and the frozen layers run: the encoder's own upper layers, which the
        trained copies replace, are skipped.
        """
        import torch

        enc, index = pair_encoding(self.tokenizer, pair.guest, pair.host, self.config.max_length)
        enc = enc.to(next(self.base.parameters()).device)
        with torch.inference_mode():
            x = self.base.embeddings(input_ids=enc["input_ids"], token_type_ids=enc.get("token_type_ids"))
            # One unpadded sequence: no attention mask is needed.
            states = _through(self.base.encoder.layer[: self.frozen], x, None)[0]
        return states.half().cpu(), torch.tensor(index)

    def word_logits(
        self, states: Sequence[Any], indexes: Sequence[Any], sizes: Sequence[int], training: bool
    ) -> list[Any]:
        """One logit per guest-then-host word of each pair, from its frozen-layer states.

        Args:
            states: Per pair, :meth:`lower_states`' states.
            indexes: Per pair, the sub-words' word indices.
            sizes: Per pair, its number of guest plus host words.
            training: Dropout on, and gradients kept.
        """
        import torch

        self.layers.train(training)
        self.head.train(training)
        device = next(self.head.parameters()).device
        length = max(s.shape[0] for s in states)
        x = torch.zeros(len(states), length, self.width, device=device)
        mask = torch.zeros(len(states), length, device=device)
        for row, s in enumerate(states):
            x[row, : len(s)] = s.float().to(device)
            mask[row, : len(s)] = 1.0
        # Padding is masked out of every sub-word's attention (an additive mask the layers broadcast).
        additive = (1.0 - mask)[:, None, None, :] * -1e9
        logits = self.head(_through(self.layers, x, additive)).squeeze(-1)
        words = []
        for row, (index, n) in enumerate(zip(indexes, sizes, strict=True)):
            index = index.to(device)
            keep = index >= 0
            total = torch.zeros(n, device=device).index_add(0, index[keep], logits[row, : len(index)][keep])
            count = torch.zeros(n, device=device).index_add(0, index[keep], torch.ones(int(keep.sum()), device=device))
            words.append(total / count.clamp_min(1.0))
        return words

    # -- prediction ---------------------------------------------------------------------------
    def logits_of(self, cached: Sequence[tuple[Any, Any]], pairs: Sequence[ParaphrasePair]) -> list[Any]:
        """Word logits (no dropout, no gradients) of pairs whose frozen-layer states are ``cached``."""
        import torch

        out: list[Any] = []
        with torch.inference_mode():
            for s in range(0, len(pairs), self.config.pair_batch):
                chunk = range(s, min(s + self.config.pair_batch, len(pairs)))
                out += [
                    v.cpu()
                    for v in self.word_logits(
                        [cached[i][0] for i in chunk],
                        [cached[i][1] for i in chunk],
                        [len(pairs[i].guest) + len(pairs[i].host) for i in chunk],
                        False,
                    )
                ]
        return out

    def from_logits(
        self, pairs: Sequence[ParaphrasePair], logits: Sequence[Any], bias: float | None = None
    ) -> list[PairPrediction]:
        """Predictions from word logits shifted by ``bias`` (default: the trained offset)."""
        import torch

        shift = self.config.bias if bias is None else bias
        out = []
        for pair, raw in zip(pairs, logits, strict=True):
            probs = torch.sigmoid(raw.double() + shift).tolist()
            out.append(PairPrediction(pair.qid, probs[: len(pair.guest)], probs[len(pair.guest) :]))
        return out

    def predict(
        self, pairs: Sequence[ParaphrasePair], progress: Callable[[int], None] | None = None
    ) -> list[PairPrediction]:
        """Highlight probabilities for every token of every pair, in input order."""
        cached = []
        for pair in pairs:
            cached.append(self.lower_states(pair))
            if progress:
                progress(1)
        return self.from_logits(pairs, self.logits_of(cached, pairs))

    def trainable(self) -> list[Any]:
        """The encoder-side parameters training updates (all of the copied layers, or their adapters)."""
        return [p for p in self.layers.parameters() if p.requires_grad]

    def stored_layer_state(self) -> dict[str, Any]:
        """What ``save`` stores of the layers: everything, or with adapters only the trained tensors."""
        if self.config.lora_rank == 0:
            return dict(self.layers.state_dict())
        return {name: p for name, p in self.layers.named_parameters() if p.requires_grad}

    # -- storage ------------------------------------------------------------------------------
    def save(self, model_dir: Path) -> int:
        """Write the trained layers, the head (float32) and the configuration; returns the bytes written."""
        from safetensors.torch import save_file

        model_dir.mkdir(parents=True, exist_ok=True)
        state = {f"layers.{k}": v.detach().cpu().contiguous() for k, v in self.stored_layer_state().items()}
        state |= {f"head.{k}": v.detach().cpu().contiguous() for k, v in self.head.state_dict().items()}
        save_file(state, str(model_dir / WEIGHTS))
        (model_dir / CONFIG).write_text(json.dumps(asdict(self.config), indent=2) + "\n", encoding="utf-8")
        return (model_dir / WEIGHTS).stat().st_size + (model_dir / CONFIG).stat().st_size

    @classmethod
    def load(cls, model_dir: Path, config: HighlighterConfig, base_dir: Path | None = None) -> FineTunedHighlighter:
        """Rebuild a saved model from ``model_dir`` (its ``config`` already read) and the base encoder.

        Raises:
            FileNotFoundError: ``model_dir`` lacks the weights.
        """
        from safetensors.torch import load_file

        weights = model_dir / WEIGHTS
        if not weights.is_file():
            raise FileNotFoundError(f"{weights}: not a fine-tuned paraphrase model directory (no {WEIGHTS})")
        model = cls(config, base_dir)
        state = load_file(str(weights))
        layers = {k[len("layers.") :]: v for k, v in state.items() if k.startswith("layers.")}
        if set(layers) != set(model.stored_layer_state()):
            raise FileNotFoundError(f"{weights}: its layer weights do not match the configuration")
        # With adapters only the trained tensors are stored; the rest are the encoder's own.
        model.layers.load_state_dict(layers, strict=config.lora_rank == 0)
        model.head.load_state_dict({k[len("head.") :]: v for k, v in state.items() if k.startswith("head.")})
        model.layers.eval()
        model.head.eval()
        return model


def train_finetuned(
    train: Sequence[ParaphrasePair],
    tune: Sequence[ParaphrasePair],
    config: HighlighterConfig,
    base_dir: Path | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[FineTunedHighlighter, TrainResult]:
    """Fine-tune on ``train``; keep the epoch and offset best on ``tune``.

    ``progress(stage, done, total)`` reports encoding (per pair) and training (per epoch).
    """
    import torch

    started = time.perf_counter()
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    model = FineTunedHighlighter(config, base_dir)
    config.base_model = config.base_model or model.name
    everything = [*train, *tune]
    cached = []
    for i, pair in enumerate(everything, start=1):
        cached.append(model.lower_states(pair))
        if progress:
            progress("encode", i, len(everything))
    train_cache, tune_cache = cached[: len(train)], cached[len(train) :]
    targets = [torch.tensor([*g, *h], dtype=torch.float32) for g, h in (p.targets(config.target) for p in train)]
    optimizer = torch.optim.AdamW(
        [
            {"params": model.trainable(), "lr": config.encoder_lr},
            {"params": model.head.parameters(), "lr": config.lr},
        ],
        weight_decay=config.weight_decay,
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    device = next(model.head.parameters()).device
    best: tuple[float, int, dict[str, Any], float, dict[str, Any]] = (-1.0, 0, {}, 0.0, {})
    history: list[dict[str, float]] = []
    for epoch in range(1, config.epochs + 1):
        # Length-sorted batches (little padding), visited in a seeded random order.
        order = sorted(range(len(train)), key=lambda i: train_cache[i][0].shape[0])
        batches = [order[k : k + config.pair_batch] for k in range(0, len(order), config.pair_batch)]
        rng.shuffle(batches)
        running = 0.0
        for batch in batches:
            logits = model.word_logits(
                [train_cache[i][0] for i in batch],
                [train_cache[i][1] for i in batch],
                [len(targets[i]) for i in batch],
                True,
            )
            loss = loss_fn(torch.cat(logits), torch.cat([targets[i] for i in batch]).to(device))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.trainable(), 1.0)
            optimizer.step()
            running += float(loss.detach())
        tune_logits = model.logits_of(tune_cache, tune)
        record, criterion, bias, metrics = score_epoch(
            epoch, running / max(len(batches), 1), tune, partial(model.from_logits, tune, tune_logits)
        )
        history.append(record)
        if criterion > best[0]:
            state = {
                "layers": copy.deepcopy(model.layers.state_dict()),
                "head": copy.deepcopy(model.head.state_dict()),
            }
            best = (criterion, epoch, state, bias, metrics.as_dict() if metrics is not None else {})
        if progress:
            progress("train", epoch, config.epochs)
    model.layers.load_state_dict(best[2]["layers"])
    model.head.load_state_dict(best[2]["head"])
    model.layers.eval()
    model.head.eval()
    config.bias = best[3]
    return model, TrainResult(best[1], best[4], history, time.perf_counter() - started)


def load_highlighter(model_dir: Path, base_dir: Path | None = None, cache_dir: Path | None = None) -> Any:
    """The highlighter saved in ``model_dir``: frozen encoder (:class:`ParaphraseHighlighter`) or fine-tuned.

    Both have ``predict(pairs, progress)``. ``cache_dir`` caches the frozen encoder's pair vectors
    (a fine-tuned encoder's states are not cached).

    Raises:
        FileNotFoundError: ``model_dir`` lacks the configuration or the weights it names.
    """
    config_path = model_dir / CONFIG
    if not config_path.is_file():
        raise FileNotFoundError(f"{config_path}: not a paraphrase model directory (no {CONFIG})")
    raw = json.loads(config_path.read_text(encoding="utf-8"))
    if int(raw.get("finetune_layers", 0)) > 0:
        raw["layers"] = tuple(raw["layers"])
        return FineTunedHighlighter.load(model_dir, HighlighterConfig(**raw), base_dir)
    return ParaphraseHighlighter.load(model_dir, base_dir, cache_dir)
