"""Paraphrase highlighter for ContextDeP: a token classifier over a (guest, host) utterance pair.

Both utterances go through the offline MiniLM encoder as one input (``[CLS] guest [SEP] host
[SEP]``) so that every token's vector is conditioned on the other side; a word's vector is the mean
of its sub-words in two layers (the middle and the last). The encoder stays frozen here: a model
with a fine-tuned encoder (gnn.paraphrase_finetune, the ``finetune`` profile) scores somewhat
better, but its weights (43 MB) are too large to ship. Each word
then gets a small feature vector, and a token-level MLP gives the probability that annotators
highlight it:

* the word's encoder vector reduced by PCA (fitted on the training words) to 64 dimensions;
* alignment with the other side: the best and the mean top-3 cosine similarity of the word's
  last-layer vector to the other side's words, also averaged over windows of 5 and 11 words
  (highlights are spans);
* lexical cues: the word occurs on the other side (3+ characters), averaged over the same
  windows; relative position; which side it is on;
* pair context: how strongly the two sides align overall (mean and max of the best
  similarities of each side), and the lengths of both sides.

A pair is a paraphrase when both sides have a word with probability >= 0.5 (Wegmann et al.
2024). The head (PCA + MLP) weighs about 150 kB. The ``gru`` profile replaces the token MLP by a
GRU over each side's words (gnn.paraphrase_heads). torch and transformers are imported lazily.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gnn.paraphrase_eval import PairPrediction, ParaphraseMetrics, ParaphrasePair, score_predictions
from gnn.weights import float_state, half_state

if TYPE_CHECKING:
    from torch import nn

WEIGHTS = "paraphrase_head.safetensors"
CONFIG = "paraphrase_config.json"
TASK = "contextdep-paraphrase-highlighting"
_WORD = re.compile(r"[^\w]+")


@dataclass
class HighlighterConfig:
    """Hyper-parameters of the highlighter (stored in the model directory)."""

    epochs: int = 15
    batch_size: int = 512
    lr: float = 3e-3
    weight_decay: float = 0.01
    hidden: int = 64
    dropout: float = 0.1
    pca: int = 64
    bias: float = 0.0
    layers: tuple[int, ...] = (3, 6)
    max_length: int = 512
    target: str = "share"
    seed: int = 13
    base_model: str = ""
    # Fine-tuning (gnn.paraphrase_finetune): trained top encoder layers (0 = frozen encoder with
    # the PCA + MLP head), their learning rate (``lr`` is the head's) and pairs per step.
    finetune_layers: int = 0
    encoder_lr: float = 5e-5
    pair_batch: int = 8
    # Low-rank adapters instead of whole trained layers (0: the layers themselves are trained).
    lora_rank: int = 0
    # Frozen-encoder head: ``mlp`` scores each word alone, ``gru`` reads each side in order
    # (gnn.paraphrase_heads).
    head: str = "mlp"
    extra: dict[str, Any] = field(default_factory=dict)


# ``finetune`` fine-tunes all six MiniLM layers with a linear token head (about 6 minutes on the
# 2-core machine); its 43 MB of weights are too large to ship, so the shipped model is a frozen
# one. ``lora`` trains low-rank adapters instead (docs/bam-and-paraphrase.md compares the three;
# its encoder learning rate, 1e-3 rather than 5e-4, was chosen on the tuning half).
PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"epochs": 5},
    "full": {"epochs": 15},
    # The token MLP replaced by a GRU over each side (gnn.paraphrase_heads); not the shipped model
    # (docs/bam-and-paraphrase.md: better highlights in cross-validation, a lower held-out F1).
    "gru": {"epochs": 15, "head": "gru"},
    "finetune": {"epochs": 10, "finetune_layers": 6, "lr": 1e-3, "dropout": 0.1},
    # Rank-8 adapters on the six layers instead of the layers themselves: 1.4 MB of weights.
    "lora": {"epochs": 10, "finetune_layers": 6, "lora_rank": 8, "encoder_lr": 1e-3, "lr": 1e-3, "dropout": 0.1},
}


def pair_encoding(tokenizer: Any, guest: list[str], host: list[str], max_length: int) -> tuple[Any, list[int]]:
    """The encoder input of a (guest, host) pair and, per sub-word, the index of its word.

    Words are indexed guest first, then host. Blank words are encoded as ``_`` and an empty side as
    a single ``_``, which belongs to no word; sub-words of no word (special tokens, that ``_``) get
    -1. Both the frozen highlighter's vectors and the fine-tuned highlighter's logits are the mean
    over a word's sub-words.
    """
    enc = tokenizer(
        [w if w.strip() else "_" for w in guest] or ["_"],
        [w if w.strip() else "_" for w in host] or ["_"],
        is_split_into_words=True,
        truncation="longest_first",
        max_length=max_length,
        return_tensors="pt",
    )
    sizes = (len(guest), len(host))
    index = [
        -1 if word is None or seq is None or word >= sizes[seq] else word + (sizes[0] if seq else 0)
        for word, seq in zip(enc.word_ids(0), enc.sequence_ids(0), strict=True)
    ]
    return enc, index


class PairEmbedder:
    """Frozen encoder that turns a (guest, host) pair into one vector per word of each side.

    Results are cached as ``.npz`` files keyed by the encoder's fingerprint, the layers and the
    two token lists, so that training runs, evaluation and prediction encode each pair once.
    """

    def __init__(
        self,
        model_dir: Path | None = None,
        layers: Sequence[int] = (3, 6),
        max_length: int = 512,
        cache_dir: Path | None = None,
    ) -> None:
        from gnn.encoder import TextEncoder

        self.encoder = TextEncoder(model_dir)
        self.layers = tuple(layers)
        self.max_length = max_length
        self.cache_dir = cache_dir

    @property
    def name(self) -> str:
        """Encoder name (``all-MiniLM-L6-v2`` for the packaged model)."""
        return self.encoder.name

    def _key(self, guest: list[str], host: list[str]) -> str:
        raw = json.dumps([self.encoder.cache_key(), self.layers, self.max_length, guest, host], ensure_ascii=False)
        return hashlib.sha1(raw.encode("utf-8")).hexdigest()

    def embed(self, guest: list[str], host: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(guest words x dim, host words x dim) float32; words truncated away get zero vectors."""
        path = self.cache_dir / f"{self._key(guest, host)}.npz" if self.cache_dir else None
        if path is not None and path.is_file():
            with np.load(path) as data:
                return data["guest"].astype(np.float32), data["host"].astype(np.float32)
        import torch

        tokenizer, model = self.encoder.load_transformer()
        enc, index = pair_encoding(tokenizer, guest, host, self.max_length)
        with torch.inference_mode():
            states = model(**enc.to(next(model.parameters()).device), output_hidden_states=True).hidden_states
        hidden = torch.cat([states[i][0] for i in self.layers], dim=-1).float().cpu().numpy()
        n_guest = len(guest)
        words = np.zeros((n_guest + len(host), hidden.shape[1]), np.float32)
        counts = np.zeros(len(words))
        for pos, k in enumerate(index):
            if k >= 0:
                words[k] += hidden[pos]
                counts[k] += 1
        words /= np.maximum(counts, 1)[:, None]
        # The cache stores float16; rounding here too makes a pair predict the same whether its
        # vectors were just computed or read back from the cache (or there is no cache).
        words = words.astype(np.float16)
        sides = {0: words[:n_guest], 1: words[n_guest:]}
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp.npz")
            np.savez(tmp, guest=sides[0], host=sides[1])
            tmp.replace(path)
        return sides[0].astype(np.float32), sides[1].astype(np.float32)


def _norm(word: str) -> str:
    return _WORD.sub("", word.lower())


def _window_mean(values: np.ndarray, width: int) -> np.ndarray:
    """Mean over a centred window of ``width`` words (shorter at the edges)."""
    if len(values) == 0:
        return values
    half = width // 2
    padded = np.concatenate([[0.0], np.cumsum(values)])
    idx = np.arange(len(values))
    lo, hi = np.maximum(idx - half, 0), np.minimum(idx + half + 1, len(values))
    return (padded[hi] - padded[lo]) / (hi - lo)


N_EXTRA = 16
# Logit offsets tried on the tuning pairs: the >= 0.5 rule is kept, the calibration is tuned.
BIASES = tuple(x / 4 for x in range(-8, 17))


def alignment_features(
    own: np.ndarray, other: np.ndarray, words: list[str], other_words: list[str], side: int
) -> np.ndarray:
    """The non-PCA features of one side's words (``N_EXTRA`` columns); ``own``/``other``: last-layer vectors."""
    n = len(words)
    if n == 0:
        return np.zeros((0, N_EXTRA), np.float32)
    a = own / np.maximum(np.linalg.norm(own, axis=1, keepdims=True), 1e-6)
    b = other / np.maximum(np.linalg.norm(other, axis=1, keepdims=True), 1e-6)
    sim = a @ b.T if len(b) else np.zeros((n, 1), np.float32)
    best = sim.max(axis=1)
    top3 = np.sort(sim, axis=1)[:, -3:].mean(axis=1)
    others = {_norm(w) for w in other_words}
    lexical = np.array([float(len(k) >= 3 and k in others) for k in map(_norm, words)])
    back = sim.max(axis=0) if len(b) else np.zeros(1)
    cols = [
        best,
        top3,
        _window_mean(best, 5),
        _window_mean(best, 11),
        lexical,
        _window_mean(lexical, 5),
        _window_mean(lexical, 11),
        np.arange(n) / n,
        np.full(n, float(side)),
        np.full(n, best.mean()),
        np.full(n, best.max()),
        np.full(n, back.mean()),
        np.full(n, back.max()),
        np.full(n, np.log1p(n) / 5),
        np.full(n, np.log1p(len(other_words)) / 5),
        np.full(n, lexical.mean()),
    ]
    return np.stack(cols, axis=1).astype(np.float32)


@dataclass
class _Example:
    guest: np.ndarray  # words x features
    host: np.ndarray
    target_guest: np.ndarray | None = None
    target_host: np.ndarray | None = None


HEADS = ("mlp", "gru")


def _build_head(dim_in: int, hidden: int, dropout: float, kind: str = "mlp") -> nn.Module:
    from torch import nn

    if kind not in HEADS:
        raise ValueError(f"unknown highlighter head {kind!r}; expected one of {HEADS}")
    if kind == "gru":
        from gnn.paraphrase_heads import SequenceHead

        return SequenceHead(dim_in, hidden, dropout)
    return nn.Sequential(
        nn.Linear(dim_in, hidden),
        nn.GELU(),
        nn.Dropout(dropout),
        nn.Linear(hidden, hidden),
        nn.GELU(),
        nn.Linear(hidden, 1),
    )


@dataclass(eq=False)
class ParaphraseHighlighter:
    """Frozen encoder + PCA + token MLP. Build one with :func:`train_highlighter` or :meth:`load`."""

    embedder: PairEmbedder
    mean: np.ndarray
    components: np.ndarray
    head: nn.Module
    config: HighlighterConfig

    @classmethod
    def load(
        cls, model_dir: Path, base_dir: Path | None = None, cache_dir: Path | None = None
    ) -> ParaphraseHighlighter:
        """Rebuild a saved highlighter from ``model_dir`` and the (offline) base encoder.

        Raises:
            FileNotFoundError: ``model_dir`` lacks the head weights or its configuration.
        """
        from safetensors.torch import load_file

        weights, config_path = model_dir / WEIGHTS, model_dir / CONFIG
        for needed in (weights, config_path):
            if not needed.is_file():
                raise FileNotFoundError(f"{needed}: not a paraphrase model directory (no {needed.name})")
        raw = json.loads(config_path.read_text(encoding="utf-8"))
        raw["layers"] = tuple(raw["layers"])
        config = HighlighterConfig(**raw)
        state = float_state(load_file(str(weights)))
        mean, components = state.pop("pca.mean").numpy(), state.pop("pca.components").numpy()
        head = _build_head(components.shape[0] + N_EXTRA, config.hidden, config.dropout, config.head)
        head.load_state_dict(state)
        head.eval()
        return cls(PairEmbedder(base_dir, config.layers, config.max_length, cache_dir), mean, components, head, config)

    def save(self, model_dir: Path) -> int:
        """Write PCA + head (float16) and the configuration; returns the bytes written."""
        import torch
        from safetensors.torch import save_file

        model_dir.mkdir(parents=True, exist_ok=True)
        state = half_state(self.head.state_dict())
        state["pca.mean"] = torch.from_numpy(self.mean).half()
        state["pca.components"] = torch.from_numpy(self.components).half()
        save_file(state, str(model_dir / WEIGHTS))
        (model_dir / CONFIG).write_text(json.dumps(asdict(self.config), indent=2) + "\n", encoding="utf-8")
        return (model_dir / WEIGHTS).stat().st_size + (model_dir / CONFIG).stat().st_size

    def features(self, pair: ParaphrasePair, g: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-word feature matrices of both sides from their encoder vectors."""
        dim = g.shape[1] // len(self.config.layers)  # the last layer's slice is the similarity space
        out = []
        for own, other, words, other_words, side in (
            (g, h, pair.guest, pair.host, 0),
            (h, g, pair.host, pair.guest, 1),
        ):
            reduced = (own - self.mean) @ self.components.T
            extra = alignment_features(own[:, -dim:], other[:, -dim:], words, other_words, side)
            out.append(np.concatenate([reduced.astype(np.float32), extra], axis=1))
        return out[0], out[1]

    def examples(
        self, pairs: Sequence[ParaphrasePair], progress: Callable[[int], None] | None = None
    ) -> list[_Example]:
        """Features of ``pairs`` (targets attached when the pairs carry annotations)."""
        out = []
        for pair in pairs:
            ex = _Example(*self.features(pair, *self.embedder.embed(pair.guest, pair.host)))
            if pair.guest_hl is not None and pair.host_hl is not None and pair.share is not None:
                tg, th = pair.targets(self.config.target)
                ex.target_guest, ex.target_host = np.asarray(tg, np.float32), np.asarray(th, np.float32)
            out.append(ex)
            if progress:
                progress(1)
        return out

    def logits(self, examples: Sequence[_Example]) -> list[np.ndarray]:
        """Raw head outputs per pair (guest words, then host words), before the calibration offset."""
        import torch

        self.head.eval()
        with torch.inference_mode():
            if self.config.head == "gru":
                out = []
                for start in range(0, len(examples), 32):
                    chunk = examples[start : start + 32]
                    sides = self.head([torch.from_numpy(x) for ex in chunk for x in (ex.guest, ex.host)])
                    out += [torch.cat(sides[2 * k : 2 * k + 2]).numpy() for k in range(len(chunk))]
                return out
            return [
                self.head(torch.from_numpy(np.concatenate([ex.guest, ex.host]))).squeeze(-1).numpy() for ex in examples
            ]

    def from_logits(
        self, pairs: Sequence[ParaphrasePair], logits: Sequence[np.ndarray], bias: float | None = None
    ) -> list[PairPrediction]:
        """Predictions from :meth:`logits` with the offset ``bias`` (default: the trained one)."""
        shift = self.config.bias if bias is None else bias
        out = []
        for pair, raw in zip(pairs, logits, strict=True):
            values = (1.0 / (1.0 + np.exp(-(raw.astype(np.float64) + shift)))).tolist()
            out.append(PairPrediction(pair.qid, values[: len(pair.guest)], values[len(pair.guest) :]))
        return out

    def predict_examples(self, pairs: Sequence[ParaphrasePair], examples: Sequence[_Example]) -> list[PairPrediction]:
        """Predictions for pairs whose features are computed, in input order."""
        return self.from_logits(pairs, self.logits(examples))

    def predict(
        self, pairs: Sequence[ParaphrasePair], progress: Callable[[int], None] | None = None
    ) -> list[PairPrediction]:
        """Highlight probabilities for every token of every pair, in input order."""
        return self.predict_examples(pairs, self.examples(pairs, progress))


def selection_criterion(metrics: ParaphraseMetrics) -> float:
    """What epoch and offset selection maximise on the tuning pairs: F1 plus the mean highlight Jaccard.

    Neither the pair decision nor the highlights are sacrificed for the other.
    """
    return metrics.f1 + (metrics.jaccard_guest + metrics.jaccard_host) / 2


def best_offset(
    tune: Sequence[ParaphrasePair], predictions_at: Callable[[float], list[PairPrediction]]
) -> tuple[float, float, ParaphraseMetrics] | None:
    """The logit offset of :data:`BIASES` whose predictions on ``tune`` score best.

    Returns:
        (criterion, offset, metrics) of the best offset (the first of equals); ``None`` without tuning pairs.
    """
    best: tuple[float, float, ParaphraseMetrics] | None = None
    for candidate in BIASES if tune else ():
        scored = score_predictions(tune, predictions_at(candidate))
        value = selection_criterion(scored)
        if best is None or value > best[0]:
            best = (value, candidate, scored)
    return best


def score_epoch(
    epoch: int, loss: float, tune: Sequence[ParaphrasePair], predictions_at: Callable[[float], list[PairPrediction]]
) -> tuple[dict[str, float], float, float, ParaphraseMetrics | None]:
    """An epoch's history row and what selection compares: (row, criterion, offset, tune metrics).

    The offset is :func:`best_offset`'s. Without tuning pairs the criterion is the epoch number
    (so the last epoch is kept), the offset 0 and the metrics ``None``.
    """
    record: dict[str, float] = {"epoch": epoch, "loss": loss}
    chosen = best_offset(tune, predictions_at)
    if chosen is None:
        return record, float(epoch), 0.0, None
    criterion, bias, metrics = chosen
    record.update(f1=metrics.f1, jaccard_guest=metrics.jaccard_guest, jaccard_host=metrics.jaccard_host, bias=bias)
    return record, criterion, bias, metrics


@dataclass
class TrainResult:
    """What :func:`train_highlighter` returns besides the model."""

    best_epoch: int
    tune: dict[str, float | int]
    history: list[dict[str, float]]
    seconds: float


def fit_pca(vectors: Sequence[np.ndarray], k: int, seed: int, sample: int = 4000) -> tuple[np.ndarray, np.ndarray]:
    """Mean and top-``k`` principal directions (rows) of the rows of ``vectors`` (a seeded sample)."""
    rows = np.concatenate(list(vectors))
    rng = np.random.default_rng(seed)
    if len(rows) > sample:
        rows = rows[rng.choice(len(rows), sample, replace=False)]
    mean = rows.mean(axis=0)
    _, _, vt = np.linalg.svd(rows - mean, full_matrices=False)
    return mean.astype(np.float32), vt[:k].astype(np.float32)


def _word_tensors(examples: Sequence[_Example]) -> tuple[Any, Any]:
    """Every word's features and target, all pairs' words in one tensor each (what the token MLP trains on)."""
    import torch

    x = torch.from_numpy(np.concatenate([np.concatenate([e.guest, e.host]) for e in examples]))
    y = torch.from_numpy(np.concatenate([np.concatenate([e.target_guest, e.target_host]) for e in examples]))
    return x, y


def _token_epoch(head: Any, optimizer: Any, words: tuple[Any, Any], config: HighlighterConfig) -> float:
    """One epoch of the token MLP over shuffled batches of ``words`` (:func:`_word_tensors`); returns the
    mean word loss."""
    import torch

    x, y = words
    loss_fn = torch.nn.BCEWithLogitsLoss()
    perm = torch.randperm(len(x))
    running = 0.0
    for start in range(0, len(x), config.batch_size):
        idx = perm[start : start + config.batch_size]
        loss = loss_fn(head(x[idx]).squeeze(-1), y[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += float(loss.detach()) * len(idx)
    return running / len(x)


def _pair_epoch(head: Any, optimizer: Any, examples: Sequence[_Example], config: HighlighterConfig) -> float:
    """One epoch of the sequence head over shuffled batches of ``config.pair_batch`` pairs.

    Each pair weighs the same (the mean loss of its words): a long guest turn does not outweigh
    the short turns. Returns the mean pair loss.
    """
    import torch

    bce = torch.nn.functional.binary_cross_entropy_with_logits
    perm = torch.randperm(len(examples)).tolist()
    running = 0.0
    for start in range(0, len(perm), config.pair_batch):
        chunk = [examples[i] for i in perm[start : start + config.pair_batch]]
        sides = head([torch.from_numpy(x) for ex in chunk for x in (ex.guest, ex.host)])
        losses = []
        for k, ex in enumerate(chunk):
            target = torch.from_numpy(np.concatenate([ex.target_guest, ex.target_host]))
            losses.append(bce(torch.cat(sides[2 * k : 2 * k + 2]), target))
        loss = torch.stack(losses).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += float(loss.detach()) * len(chunk)
    return running / len(examples)


def train_highlighter(
    train: Sequence[ParaphrasePair],
    tune: Sequence[ParaphrasePair],
    config: HighlighterConfig,
    base_dir: Path | None = None,
    cache_dir: Path | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[ParaphraseHighlighter, TrainResult]:
    """Encode the pairs once, fit PCA and the head on ``train``, keep the epoch best on ``tune``.

    The selection criterion is :func:`selection_criterion` (tune F1 plus the mean of the two
    highlight Jaccards); with each epoch a logit offset
    (``config.bias``, from :data:`BIASES`) is chosen on ``tune`` the same way. ``progress(stage, done, total)``
    reports encoding (per pair) and training (per epoch).
    """
    import torch

    started = time.perf_counter()
    random.seed(config.seed)
    torch.manual_seed(config.seed)
    embedder = PairEmbedder(base_dir, config.layers, config.max_length, cache_dir)
    config.base_model = config.base_model or embedder.name
    vectors = []
    for i, pair in enumerate([*train, *tune], start=1):
        vectors.append(embedder.embed(pair.guest, pair.host))
        if progress:
            progress("encode", i, len(train) + len(tune))
    mean, components = fit_pca([v for g, h in vectors[: len(train)] for v in (g, h)], config.pca, config.seed)
    head = _build_head(config.pca + N_EXTRA, config.hidden, config.dropout, config.head)
    model = ParaphraseHighlighter(embedder, mean, components, head, config)
    examples = []
    for pair, (g, h) in zip([*train, *tune], vectors, strict=True):
        ex = _Example(*model.features(pair, g, h))
        if pair.share is not None and pair.guest_hl is not None:
            tg, th = pair.targets(config.target)
            ex.target_guest, ex.target_host = np.asarray(tg, np.float32), np.asarray(th, np.float32)
        examples.append(ex)
    train_ex, tune_ex = examples[: len(train)], examples[len(train) :]
    optimizer = torch.optim.AdamW(head.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=config.epochs)
    words = None if config.head == "gru" else _word_tensors(train_ex)
    best: tuple[float, int, dict[str, Any], ParaphraseMetrics | None] = (-1.0, 0, {}, None)
    history: list[dict[str, float]] = []
    for epoch in range(1, config.epochs + 1):
        head.train()
        if words is None:
            loss = _pair_epoch(head, optimizer, train_ex, config)
        else:
            loss = _token_epoch(head, optimizer, words, config)
        scheduler.step()
        tune_logits = model.logits(tune_ex)
        record, criterion, bias, metrics = score_epoch(epoch, loss, tune, partial(model.from_logits, tune, tune_logits))
        history.append(record)
        if criterion > best[0]:
            state = {k: v.detach().clone() for k, v in head.state_dict().items()}
            best = (criterion, epoch, state | {"bias": torch.tensor(bias)}, metrics)
        if progress:
            progress("train", epoch, config.epochs)
    config.bias = float(best[2].pop("bias")) if "bias" in best[2] else 0.0
    head.load_state_dict(best[2])
    head.eval()
    tune_metrics = best[3].as_dict() if best[3] is not None else {}
    return model, TrainResult(best[1], tune_metrics, history, time.perf_counter() - started)
