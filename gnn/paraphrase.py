"""Paraphrase highlighter for ContextDeP: a token classifier over a (guest, host) utterance pair.

Both utterances go through a text encoder (the offline MiniLM, or any local Hugging Face encoder)
as one input (``[CLS] guest [SEP] host [SEP]``) so that every token's vector is conditioned on the
other side; a word's vector is the mean of its sub-words in two layers (the middle and the last).
The shipped model keeps the encoder frozen (:class:`ParaphraseHighlighter`); a fine-tuned encoder
(whole layers or low-rank adapters) was measured and not adopted: it is
``experiments/paraphrase_finetune.py``, a :class:`Highlighter` of its own trained by
:func:`fit_highlighter` (figures in ``docs/experiments/paraphrase.md``). Each word gets a small
feature vector, and a token-level MLP gives the probability that annotators highlight it:

* the word's encoder vector reduced by PCA (fitted on the training words) to 64 dimensions;
* alignment with the other side: the best and the mean top-3 cosine similarity of the word's
  last-layer vector to the other side's words, also averaged over windows of 5 and 11 words
  (highlights are spans);
* lexical cues: the word occurs on the other side (3+ characters), averaged over the same
  windows; relative position; which side it is on;
* pair context: how strongly the two sides align overall (mean and max of the best
  similarities of each side), and the lengths of both sides.

The pair score is the weaker side's strongest word; the paper calls a pair a paraphrase when
both sides have a word with probability >= 0.5 (Wegmann et al. 2024), i.e. at a pair score of 0.5.
The shipped recipe (``precision`` 2/3, ``pair_head``) scores each pair with a small pair model
(:func:`fit_pair_model`, a logistic regression over :func:`pair_features` of the token
probabilities), calls a pair a paraphrase only at or above a cut where that call was right at
least two times in three out of fold inside its training pairs (:func:`choose_cuts` over
:func:`inner_scores` and :func:`pair_model_scores`), says "not paraphrase" below a lower cut
chosen the same way for that call, and "not sure" in between; the highlights are the words at
0.5 or more on every pair, whatever the decision. The head (PCA + MLP) weighs about 120 kB.

A highlighter (:class:`Highlighter`) is trained by :class:`gnn.trainer.Trainer` on the same per-word
targets (``ParaphrasePair.targets``) with binary cross-entropy; after each epoch a logit offset is
chosen on the tuning pairs, and the epoch and offset that score best there are kept. They predict
and store themselves (``paraphrase_config.json`` beside one safetensors file, the encoder named by
the model card) the same way. torch and transformers are imported lazily.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeAlias, TypeVar

import numpy as np

from gnn.paraphrase_eval import (
    NOT_PARAPHRASE,
    PARAPHRASE,
    THRESHOLD,
    PairPrediction,
    ParaphrasePair,
    score_predictions,
    split_by_interview,
)
from gnn.progress import each
from gnn.protocol import Fold, FoldOutcome, cross_validate, fold_plan, grouped_folds
from gnn.task import (
    CardVersion,
    CVReport,
    Decoding,
    EvalReport,
    Fitted,
    LabelTally,
    PredictedRelation,
    Recipes,
    Resources,
    ScopePrediction,
    Task,
    TextPair,
    TrainReport,
    finish_card,
)
from gnn.trainer import FitResult, Progress, Schedule, Selection, Trainer
from gnn.weights import float_state, half_state, save_weights
from ontology.errors import ApiError, LoaderError, ModelError, NotFoundError
from ontology.records import DiscourseRecord, LocutionRecord
from ontology.scope import Scope, ScopeRecords

if TYPE_CHECKING:
    import torch
    from torch import nn
    from torch.optim.optimizer import ParamsT
    from transformers import BatchEncoding

    from gnn.encoder import TextEncoder
    from gnn.modelcard import ModelCard
    from ontology.records import CorpusBundle

CONFIG = "paraphrase_config.json"
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
    # Encoder layers whose vectors a word gets; empty: the encoder's middle and last (3 and 6 of MiniLM).
    layers: tuple[int, ...] = ()
    max_length: int = 512
    target: str = "share"
    seed: int = 13
    base_model: str = ""
    # Pairs per forward pass at prediction (and per step of a highlighter trained by pairs).
    pair_batch: int = 8
    extra: dict[str, Any] = field(default_factory=dict)
    # The pair decision: the precision the paraphrase call (and the not-paraphrase call) must reach out of
    # fold inside the training pairs, over ``decision_folds`` inner folds; 0: the paper's 0.5 rule alone.
    precision: float = 0.0
    decision_folds: int = 4
    # Chosen by training (:func:`choose_cuts`): paraphrase at or above ``cut``, not paraphrase below ``low``.
    cut: float = THRESHOLD
    low: float = THRESHOLD
    # A pair model (:func:`fit_pair_model`) whose probability is the pair score: with ``pair_head``, training
    # fits it on the inner out-of-fold pair features; its standardisation and logistic weights are stored.
    pair_head: bool = False
    pair_model: dict[str, list[float]] = field(default_factory=dict)


# The fine-tuned encoder's recipes (``finetune``, ``lora``) were measured and not adopted:
# experiments/paraphrase_finetune.py.
# ``two-way`` is the recipe of version 2 (the 0.5 rule, every pair answered), kept as the baseline of the
# decision rule under the same protocol.
PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"epochs": 5, "precision": 2 / 3, "pair_head": True},
    "full": {"epochs": 15, "precision": 2 / 3, "pair_head": True},
    "strongest": {"epochs": 15, "precision": 2 / 3},
    "two-way": {"epochs": 15},
}
# Configuration keys of the fine-tuned highlighters (experiments/paraphrase_finetune.py); a frozen
# model's configuration written while they were part of the product carries them with 0.
FINETUNE_KEYS = ("finetune_layers", "encoder_lr", "lora_rank")


def pair_encoding(
    tokenizer: Any, guest: list[str], host: list[str], max_length: int
) -> tuple[BatchEncoding, list[int]]:
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
        self, encoder: TextEncoder, layers: Sequence[int], max_length: int = 512, cache_dir: Path | None = None
    ) -> None:
        self.encoder = encoder
        self.layers = tuple(layers)
        self.max_length = max_length
        self.cache_dir = cache_dir

    def embed(self, guest: list[str], host: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(guest words x dim, host words x dim) float32; words truncated away get zero vectors."""
        from gnn.encoder import cached_half

        key = [self.encoder.cache_key(), self.layers, self.max_length, guest, host]
        # Cached as float16 (:func:`gnn.encoder.cached_half`): a pair predicts the same whether its
        # vectors were just computed or read back from the cache (or there is no cache).
        g, h = cached_half(self.cache_dir, key, ("guest", "host"), lambda: self._compute(guest, host))
        return g, h

    def _compute(self, guest: list[str], host: list[str]) -> tuple[np.ndarray, np.ndarray]:
        import torch

        tokenizer, model = self.encoder.load_transformer()
        enc, index = pair_encoding(tokenizer, guest, host, self.max_length)
        with torch.inference_mode():
            states = model(**enc.to(next(model.parameters()).device), output_hidden_states=True).hidden_states
        hidden = torch.cat([states[i][0] for i in self.layers], dim=-1).float().cpu().numpy()
        words = np.zeros((len(guest) + len(host), hidden.shape[1]), np.float32)
        counts = np.zeros(len(words))
        for pos, k in enumerate(index):
            if k >= 0:
                words[k] += hidden[pos]
                counts[k] += 1
        words /= np.maximum(counts, 1)[:, None]
        return words[: len(guest)], words[len(guest) :]


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


def _build_head(dim_in: int, hidden: int, dropout: float) -> nn.Module:
    from torch import nn

    return nn.Sequential(
        nn.Linear(dim_in, hidden),
        nn.GELU(),
        nn.Dropout(dropout),
        nn.Linear(hidden, hidden),
        nn.GELU(),
        nn.Linear(hidden, 1),
    )


def fit_pca(vectors: Sequence[np.ndarray], k: int, seed: int, sample: int = 4000) -> tuple[np.ndarray, np.ndarray]:
    """Mean and top-``k`` principal directions (rows) of the rows of ``vectors`` (a seeded sample)."""
    rows = np.concatenate(list(vectors))
    rng = np.random.default_rng(seed)
    if len(rows) > sample:
        rows = rows[rng.choice(len(rows), sample, replace=False)]
    mean = rows.mean(axis=0)
    _, _, vt = np.linalg.svd(rows - mean, full_matrices=False)
    return mean.astype(np.float32), vt[:k].astype(np.float32)


InputT = TypeVar("InputT")
"""What a highlighter kind reads of one pair (:meth:`Highlighter.read`)."""
BatchT = TypeVar("BatchT")
"""One training batch of a highlighter kind (:meth:`Highlighter.batches`)."""


class Highlighter(ABC, Generic[InputT, BatchT]):
    """What a highlighter kind implements and shares: prediction, the offset choice and storage (the
    shipped kind is :class:`ParaphraseHighlighter`; ``experiments/paraphrase_finetune.py`` holds another).

    A kind reads each pair into inputs once (:meth:`read`), gives one logit per guest-then-host
    word of each pair (:meth:`word_logits`), and for :class:`gnn.trainer.Trainer` its network
    (``module``), parameter groups, schedule, batches and loss. A word's probability is the sigmoid
    of its logit plus the offset ``config.bias`` chosen on the tuning pairs.

    Attributes:
        WEIGHTS: The kind's weights file, beside :data:`CONFIG` in the model directory.
        config: Hyper-parameters and the chosen offset.
        encoder: The text encoder the pairs are read with.
        module: The trained network.
    """

    WEIGHTS: ClassVar[str]
    config: HighlighterConfig
    encoder: TextEncoder
    module: nn.Module

    @classmethod
    @abstractmethod
    def restore(
        cls, state: dict[str, Any], config: HighlighterConfig, encoder: TextEncoder, cache_dir: Path | None
    ) -> Highlighter:
        """The highlighter whose stored tensors (:meth:`state`) are ``state``."""

    @abstractmethod
    def read(self, pair: ParaphrasePair) -> InputT:
        """What the network reads of a pair (computed once per pair)."""

    @abstractmethod
    def word_logits(self, inputs: Sequence[InputT]) -> list[torch.Tensor]:
        """Per pair, one logit per guest-then-host word, before the offset (in the network's mode)."""

    @abstractmethod
    def batches(
        self, inputs: Sequence[InputT], targets: Sequence[np.ndarray], rng: np.random.Generator
    ) -> list[BatchT]:
        """One epoch's training batches of the pairs' inputs and per-word targets."""

    @abstractmethod
    def loss(self, batch: BatchT) -> torch.Tensor:
        """Binary cross-entropy of a batch's word logits against its targets."""

    @abstractmethod
    def param_groups(self) -> ParamsT:
        """The trained parameters (groups may name their own learning rate)."""

    @abstractmethod
    def schedule(self) -> Schedule:
        """How the kind is optimised."""

    @abstractmethod
    def state(self) -> dict[str, torch.Tensor]:
        """The tensors :meth:`save` stores (on the CPU, contiguous)."""

    @property
    @abstractmethod
    def notes(self) -> str:
        """What the model is, for its card."""

    def logits(self, inputs: Sequence[InputT]) -> list[np.ndarray]:
        """:meth:`word_logits` without dropout or gradients, ``pair_batch`` pairs at a time."""
        import torch

        self.module.eval()
        step = self.config.pair_batch
        with torch.inference_mode():
            chunks = [self.word_logits(inputs[s : s + step]) for s in range(0, len(inputs), step)]
        return [v.cpu().numpy() for chunk in chunks for v in chunk]

    def from_logits(
        self, pairs: Sequence[ParaphrasePair], logits: Sequence[np.ndarray], bias: float | None = None
    ) -> list[PairPrediction]:
        """Predictions from :meth:`logits` with the offset ``bias`` (default: the trained one)."""
        shift = self.config.bias if bias is None else bias
        cut, low, head = self.config.cut, self.config.low, self.config.pair_model
        out = []
        for pair, raw in zip(pairs, logits, strict=True):
            values = (1.0 / (1.0 + np.exp(-(raw.astype(np.float64) + shift)))).tolist()
            found = PairPrediction(pair.qid, values[: len(pair.guest)], values[len(pair.guest) :], cut, low)
            out.append(replace(found, pair=pair_probability(head, found)) if head else found)
        return out

    def inputs(self, pairs: Sequence[ParaphrasePair], progress: Progress | None = None) -> list[InputT]:
        """:meth:`read` of every pair (``progress`` hears the ``encode`` stage)."""
        return each("encode", pairs, self.read, progress)

    def predict(self, pairs: Sequence[ParaphrasePair], progress: Progress | None = None) -> list[PairPrediction]:
        """Highlight probabilities for every token of every pair, in input order."""
        return self.from_logits(pairs, self.logits(self.inputs(pairs, progress)))

    def save(self, model_dir: Path) -> int:
        """Write the weights and the configuration; returns the bytes written."""
        return save_weights(model_dir, self.WEIGHTS, self.state(), CONFIG, asdict(self.config))


PairFeatures: TypeAlias = tuple[np.ndarray, np.ndarray]
"""The (guest, host) per-word feature matrices of a pair: what :class:`ParaphraseHighlighter` reads."""
WordBatch: TypeAlias = "tuple[torch.Tensor, torch.Tensor]"
"""Word features and per-word targets of one training batch of :class:`ParaphraseHighlighter`."""


class ParaphraseHighlighter(Highlighter[PairFeatures, WordBatch]):
    """Frozen encoder + PCA + token MLP.

    Build one with :func:`train_highlighter` or :func:`load_highlighter`. Its inputs are each pair's
    (guest, host) feature matrices.
    """

    WEIGHTS = "paraphrase_head.safetensors"

    def __init__(
        self, embedder: PairEmbedder, mean: np.ndarray, components: np.ndarray, config: HighlighterConfig
    ) -> None:
        self.embedder, self.encoder, self.config = embedder, embedder.encoder, config
        self.mean, self.components = mean, components
        self.module = _build_head(components.shape[0] + N_EXTRA, config.hidden, config.dropout)

    @classmethod
    def restore(
        cls, state: dict[str, Any], config: HighlighterConfig, encoder: TextEncoder, cache_dir: Path | None
    ) -> ParaphraseHighlighter:
        """The highlighter of a stored head and PCA."""
        state = float_state(state)
        mean, components = state.pop("pca.mean").numpy(), state.pop("pca.components").numpy()
        model = cls(PairEmbedder(encoder, config.layers, config.max_length, cache_dir), mean, components, config)
        model.module.load_state_dict(state)
        model.module.eval()
        return model

    @classmethod
    def fitted(
        cls,
        pairs: Sequence[ParaphrasePair],
        n_train: int,
        config: HighlighterConfig,
        encoder: TextEncoder,
        cache_dir: Path | None,
        progress: Progress | None,
    ) -> tuple[ParaphraseHighlighter, list[PairFeatures]]:
        """An untrained highlighter whose PCA is fitted on the words of the first ``n_train`` pairs, and the
        inputs of all ``pairs`` (each encoded once)."""
        config.layers = config.layers or encoder.middle_and_last()
        embedder = PairEmbedder(encoder, config.layers, config.max_length, cache_dir)
        vectors = each("encode", pairs, lambda p: embedder.embed(p.guest, p.host), progress)
        mean, components = fit_pca([v for g, h in vectors[:n_train] for v in (g, h)], config.pca, config.seed)
        model = cls(embedder, mean, components, config)
        return model, [model.features(p, g, h) for p, (g, h) in zip(pairs, vectors, strict=True)]

    @property
    def notes(self) -> str:
        """What the model is, for its card."""
        layers = list(self.config.layers)
        return (
            f"Frozen {self.encoder.name} pair encoding (guest and host in one input; layers {layers}) "
            "+ PCA and alignment features + MLP"
        )

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

    def read(self, pair: ParaphrasePair) -> PairFeatures:
        """The pair's (guest, host) feature matrices."""
        return self.features(pair, *self.embedder.embed(pair.guest, pair.host))

    def word_logits(self, inputs: Sequence[PairFeatures]) -> list[torch.Tensor]:
        """The MLP scores each word alone."""
        import torch

        device = next(self.module.parameters()).device
        return [self.module(torch.from_numpy(np.concatenate(pair)).to(device)).squeeze(-1) for pair in inputs]

    def batches(
        self, inputs: Sequence[PairFeatures], targets: Sequence[np.ndarray], rng: np.random.Generator
    ) -> list[WordBatch]:
        """Shuffled batches of ``batch_size`` words of all pairs."""
        import torch

        x = torch.from_numpy(np.concatenate([np.concatenate(pair) for pair in inputs]))
        y = torch.from_numpy(np.concatenate(targets))
        return [(x[idx], y[idx]) for idx in torch.from_numpy(rng.permutation(len(x))).split(self.config.batch_size)]

    def loss(self, batch: WordBatch) -> torch.Tensor:
        """The mean word loss."""
        import torch

        bce = torch.nn.functional.binary_cross_entropy_with_logits
        x, y = batch
        device = next(self.module.parameters()).device
        return bce(self.module(x.to(device)).squeeze(-1), y.to(device))

    def param_groups(self) -> ParamsT:
        """The head's parameters."""
        return self.module.parameters()

    def schedule(self) -> Schedule:
        """AdamW with cosine decay per epoch, no clipping."""
        c = self.config
        return Schedule(epochs=c.epochs, lr=c.lr, weight_decay=c.weight_decay, decay="cosine", clip=None, seed=c.seed)

    def state(self) -> dict[str, torch.Tensor]:
        """The head and the PCA in float16."""
        import torch

        state = half_state(self.module.state_dict())
        state["pca.mean"] = torch.from_numpy(self.mean).half()
        state["pca.components"] = torch.from_numpy(self.components).half()
        return state


@dataclass
class _Fit:
    """A highlighter as :class:`gnn.trainer.Fittable`: its network on the training pairs; after each
    epoch, the offset chosen on the tuning pairs (``chosen["bias"]``)."""

    model: Highlighter
    train: list[Any]
    targets: list[np.ndarray]
    tune: Sequence[ParaphrasePair]
    tune_inputs: list[Any]

    @property
    def module(self) -> nn.Module:
        return self.model.module

    def param_groups(self) -> Any:
        return self.model.param_groups()

    def batches(self, rng: np.random.Generator) -> list[Any]:
        return self.model.batches(self.train, self.targets, rng)

    def loss(self, batch: Any) -> torch.Tensor:
        return self.model.loss(batch)

    def select(self) -> Selection | None:
        """The offset of :data:`BIASES` best on the tuning pairs (the first of equals), scored by F1 plus the
        mean highlight Jaccard: neither the pair decision nor the highlights are sacrificed for the other."""
        logits = self.model.logits(self.tune_inputs) if self.tune else []
        best: Selection | None = None
        for bias in BIASES if self.tune else ():
            m = score_predictions(self.tune, self.model.from_logits(self.tune, logits, bias))
            score = m.f1 + (m.jaccard_guest + m.jaccard_host) / 2
            if best is None or score > best.score:
                row = {"f1": m.f1, "jaccard_guest": m.jaccard_guest, "jaccard_host": m.jaccard_host, "bias": bias}
                best = Selection(score, {"bias": bias}, row)
        return best


def train_highlighter(
    train: Sequence[ParaphrasePair],
    tune: Sequence[ParaphrasePair],
    config: HighlighterConfig,
    encoder_dir: Path | None = None,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[Highlighter, FitResult, dict[str, float | int]]:
    """Read the pairs once, fit the frozen-encoder highlighter ``config`` names on ``train``, keep the
    epoch best on ``tune`` (:func:`fit_highlighter`).

    Args:
        train: Annotated training pairs.
        tune: Annotated tuning pairs.
        config: The recipe; its ``bias`` (and, when empty, ``layers``) are set here.
        encoder_dir: A local Hugging Face encoder instead of the packaged MiniLM.
        cache_dir: The frozen encoder's pair-vector cache.
        progress: ``(stage, done, total)``: the ``encode`` stage per pair, then ``train`` per epoch.
        log: A line per epoch (loss and tuning figures).

    Returns:
        The model, the trainer's result (kept epoch, per-epoch history, time) and the tuning metrics.
    """
    from gnn.device import seed_everything
    from gnn.encoder import TextEncoder

    seed_everything(config.seed)  # the network's initial weights
    # Epoch and offset are chosen with the paper's 0.5 rule; a decision rule is chosen after (:func:`decide`).
    config.cut = config.low = THRESHOLD
    config.pair_model = {}
    encoder = TextEncoder(encoder_dir)
    config.base_model = config.base_model or encoder.name
    model, inputs = ParaphraseHighlighter.fitted([*train, *tune], len(train), config, encoder, cache_dir, progress)
    fit, tuned = fit_highlighter(model, inputs, train, tune, progress, log)
    return model, fit, tuned


def fit_highlighter(
    model: Highlighter,
    inputs: Sequence[Any],
    train: Sequence[ParaphrasePair],
    tune: Sequence[ParaphrasePair],
    progress: Progress | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[FitResult, dict[str, float | int]]:
    """Fit any :class:`Highlighter` on ``train`` and keep the epoch best on ``tune``.

    With each epoch the logit offset (``model.config.bias``, from :data:`BIASES`) is chosen on
    ``tune``; epoch and offset maximise F1 plus the mean highlight Jaccard. Without tuning pairs the
    last epoch is kept with offset 0.

    Args:
        model: The highlighter, its network initialised.
        inputs: ``model.read`` of the ``train`` then the ``tune`` pairs (:meth:`Highlighter.inputs`).
        train: Annotated training pairs.
        tune: Annotated tuning pairs.
        progress: ``(stage, done, total)``: ``train`` per epoch.
        log: A line per epoch (loss and tuning figures).

    Returns:
        The trainer's result (kept epoch, per-epoch history, time) and the tuning metrics.
    """
    config = model.config
    targets = [np.concatenate(pair.targets(config.target)).astype(np.float32) for pair in train]
    job = _Fit(model, list(inputs[: len(train)]), targets, tune, list(inputs[len(train) :]))
    fit = Trainer(model.schedule(), progress=progress, log=log).fit(job)
    config.bias = float(fit.chosen.get("bias", 0.0))
    tuned = score_predictions(tune, model.from_logits(tune, model.logits(job.tune_inputs))).as_dict() if tune else {}
    return fit, tuned


NEVER = 2.0
"""A cut above every pair score: that call is never made."""
PAIR_FOLDS = 5
"""Folds of interviews over which the pair model's own out-of-fold probabilities are computed."""


def pair_features(p: PairPrediction) -> list[float]:
    """What the pair model reads of one pair's token probabilities: the weaker side's strongest token,
    then per side (guest, host) the strongest token, the mean of the top three, the mean, the share of
    tokens at 0.5 or more and the length (``log1p / 5``)."""
    out = [p.strongest]
    for probs in (np.asarray(p.guest_probs or [0.0]), np.asarray(p.host_probs or [0.0])):
        top = np.sort(probs)[-3:]
        out += [probs.max(), top.mean(), probs.mean(), (probs >= 0.5).mean(), np.log1p(len(probs)) / 5]
    return [float(x) for x in out]


def _logistic(model: Mapping[str, list[float]], features: np.ndarray) -> np.ndarray:
    """The stored standardised logistic regression on rows of :func:`pair_features`."""
    x = (np.asarray(features, np.float64) - np.asarray(model["mean"])) / np.asarray(model["scale"])
    return np.asarray(1.0 / (1.0 + np.exp(-(x @ np.asarray(model["coef"]) + model["intercept"][0]))))


def pair_probability(model: Mapping[str, list[float]], p: PairPrediction) -> float:
    """The pair model's probability that ``p`` is a paraphrase (a standardised logistic regression)."""
    return float(_logistic(model, np.asarray([pair_features(p)]))[0])


def fit_pair_model(features: Sequence[Sequence[float]], gold: Sequence[bool]) -> dict[str, list[float]]:
    """A logistic regression (C 0.3) of the gold label on the standardised :func:`pair_features`."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    x, y = np.asarray(features, np.float64), np.asarray(gold, bool)
    scaler = StandardScaler().fit(x)
    fitted = LogisticRegression(C=0.3, max_iter=1000).fit(scaler.transform(x), y)
    return {
        "mean": scaler.mean_.tolist(),
        "scale": scaler.scale_.tolist(),
        "coef": fitted.coef_[0].tolist(),
        "intercept": [float(fitted.intercept_[0])],
    }


def pair_model_scores(
    features: Sequence[Sequence[float]], gold: Sequence[bool], groups: Sequence[str]
) -> tuple[dict[str, list[float]], list[float]] | None:
    """The pair model fitted on all ``features`` and its own out-of-fold probabilities of them
    (:data:`PAIR_FOLDS` folds of whole ``groups``); ``None`` when a fold's training part holds one class."""
    folds = min(PAIR_FOLDS, len(set(groups)))
    if folds < 2 or len(set(gold)) < 2:
        return None
    part = np.asarray(grouped_folds(groups, folds, 0))
    y = np.asarray(gold, bool)
    scores = np.zeros(len(y))
    for k in range(folds):
        if len(set(y[part != k])) < 2:
            return None
        model = fit_pair_model([f for f, q in zip(features, part, strict=True) if q != k], y[part != k].tolist())
        scores[part == k] = _logistic(model, np.asarray(features, np.float64)[part == k])
    return fit_pair_model(features, gold), scores.tolist()


MIN_CALLED = 10
"""The fewest inner out-of-fold pairs a call may rest on (a cut that calls fewer is too noisy to keep)."""


@dataclass(frozen=True)
class DecisionRule:
    """The pair decision chosen on out-of-fold scores inside the training pairs (:func:`choose_cuts`).

    Attributes:
        goal: The precision both calls must reach there.
        cut: Paraphrase at or above this pair score (:data:`NEVER`: no cut reached the goal).
        low: Not paraphrase below this pair score (0: no cut reached the goal); "not sure" in between.
        pairs: The out-of-fold pairs it was chosen on.
        precision: Of the paraphrase call on those pairs.
        recall: Of the paraphrase call on those pairs.
        negative_precision: Of the not-paraphrase call on those pairs (0 when it is never made).
        not_sure_share: Share of those pairs answered "not sure".
    """

    goal: float
    cut: float
    low: float
    pairs: int
    precision: float
    recall: float
    negative_precision: float
    not_sure_share: float

    def as_dict(self) -> dict[str, float | int]:
        """The rule's figures, rounded to 4 places (for the model card)."""
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}


def choose_cuts(
    scores: Sequence[float], gold: Sequence[bool], goal: float, min_called: int = MIN_CALLED
) -> DecisionRule:
    """The widest calls on ``scores`` that are right at least ``goal`` of the time on ``gold``.

    ``cut`` is the lowest score such that the pairs at or above it (at least ``min_called``) are
    paraphrases in at least ``goal`` of cases: the most recall at that precision. ``low`` is the
    highest score, not above ``cut``, such that the pairs below it (at least ``min_called``) are not
    paraphrases in at least ``goal`` of cases. Pairs in between are "not sure".
    """
    s, y = np.asarray(scores, np.float64), np.asarray(gold, bool)
    values = np.unique(s)
    cut = NEVER
    for v in values:  # ascending: the first cut that reaches the goal calls the most pairs
        called = s >= v
        if called.sum() >= min_called and y[called].mean() >= goal:
            cut = float(v)
            break
    low = 0.0
    for v in values[::-1]:
        below = s < v
        if v <= cut and below.sum() >= min_called and (~y[below]).mean() >= goal:
            low = float(v)
            break
    called, below = s >= cut, s < low
    return DecisionRule(
        goal,
        cut,
        low,
        len(s),
        float(y[called].mean()) if called.any() else 0.0,
        float((y & called).sum() / max(y.sum(), 1)),
        float((~y[below]).mean()) if below.any() else 0.0,
        float((~called & ~below).mean()) if len(s) else 0.0,
    )


def inner_scores(
    pairs: Sequence[ParaphrasePair],
    config: HighlighterConfig,
    trainer: HighlighterTrainer,
    encoder_dir: Path | None,
    cache_dir: Path | None,
) -> list[PairPrediction]:
    """Out-of-fold pair scores of ``pairs``: ``config.decision_folds`` folds of whole interviews
    (:func:`gnn.protocol.fold_plan`, seeded by ``config.seed``), each scored by a highlighter of the
    recipe trained (epoch and offset chosen on its own tuning part) on the other folds. Fewer
    interviews than folds: one fold per interview; a single interview: no scores (nothing can be
    held out of it)."""
    groups = [p.interview for p in pairs]
    folds = min(config.decision_folds, len(set(groups)))
    if folds < 2:
        return []
    plan = fold_plan(groups, folds, config.seed)
    found: dict[int, PairPrediction] = {}
    for fold in plan:
        model, _, _ = trainer(
            [pairs[i] for i in fold.train],
            [pairs[i] for i in fold.tune],
            replace(config, precision=0.0, pair_head=False, pair_model={}),
            encoder_dir=encoder_dir,
            cache_dir=cache_dir,
        )
        found.update(zip(fold.test, model.predict([pairs[i] for i in fold.test]), strict=True))
    return [found[i] for i in range(len(pairs))]


def decide(
    model: Highlighter,
    pairs: Sequence[ParaphrasePair],
    trainer: HighlighterTrainer,
    encoder_dir: Path | None,
    cache_dir: Path | None,
) -> DecisionRule | None:
    """Choose ``model``'s decision rule (its ``config.cut`` and ``config.low``) out of fold on ``pairs``,
    the pairs it was trained and tuned on, when its recipe asks for one (``config.precision`` > 0).

    The cuts are chosen on the scores of inner highlighters (:func:`inner_scores`) and applied to
    ``model``'s own scores: the same recipe on most of the same pairs, so its scores are on the
    same scale. With ``config.pair_head`` the score is first replaced by a pair model's probability
    (:func:`fit_pair_model` on the inner :func:`pair_features`; its cuts are chosen on its own
    out-of-fold probabilities, :func:`pair_model_scores`). Too few pairs to reach the goal (under
    :data:`MIN_CALLED` on either side, a single interview, or a single class where the pair model is
    fitted): neither call is made and every pair is "not sure". ``None``: the recipe keeps the 0.5
    rule.
    """
    config = model.config
    if config.precision <= 0:
        return None
    inner = inner_scores(pairs, config, trainer, encoder_dir, cache_dir)
    gold = [p.label for p in pairs][: len(inner)]
    scores = [p.strongest for p in inner]
    config.pair_model = {}
    if config.pair_head:
        groups = [p.interview for p in pairs][: len(inner)]
        fitted = pair_model_scores([pair_features(p) for p in inner], gold, groups)
        config.pair_model, scores = fitted if fitted is not None else ({}, [])
        gold = gold[: len(scores)]
    rule = choose_cuts(scores, gold, config.precision)
    config.cut, config.low = rule.cut, rule.low
    return rule


def load_highlighter(model_dir: Path, card: ModelCard | None = None, cache_dir: Path | None = None) -> Highlighter:
    """The frozen-encoder highlighter saved in ``model_dir``.

    Args:
        model_dir: A directory :meth:`Highlighter.save` wrote.
        card: Its model card: the encoder is then the card's (``encoder_dir``, else the packaged
            MiniLM) and must have the card's fingerprint. ``None``: the packaged MiniLM, unchecked.
        cache_dir: The frozen encoder's pair-vector cache.

    Raises:
        FileNotFoundError: ``model_dir`` lacks the configuration or the weights it names.
        ModelError: The encoder is not the one the card records (:func:`gnn.modelcard.check_encoder`), or
            the configuration names a head other than the MLP, or a fine-tuned encoder (an experiment).
    """
    from safetensors.torch import load_file

    from gnn.encoder import TextEncoder
    from gnn.modelcard import check_encoder

    config_path = model_dir / CONFIG
    if not config_path.is_file():
        raise FileNotFoundError(f"{config_path}: not a paraphrase model directory (no {CONFIG})")
    raw = json.loads(config_path.read_text(encoding="utf-8"))
    # Configurations saved while a GRU head existed name their head; the MLP is the only one left.
    head = raw.pop("head", "mlp")
    if head != "mlp":
        raise ModelError(
            f"{config_path}: head {head!r} was removed, only the MLP head loads (docs/experiments/paraphrase.md)"
        )
    finetuned = {key: raw.pop(key) for key in FINETUNE_KEYS if key in raw}
    if finetuned.get("finetune_layers", 0):
        raise ModelError(
            f"{config_path}: a fine-tuned highlighter ({finetuned['finetune_layers']} encoder layers trained) is an "
            "experiment, not a model argweb serves; load it with experiments/paraphrase_finetune.py "
            "(docs/experiments/paraphrase.md)"
        )
    config = HighlighterConfig(**raw | {"layers": tuple(raw.get("layers", ()))})
    weights = model_dir / ParaphraseHighlighter.WEIGHTS
    if not weights.is_file():
        raise FileNotFoundError(f"{weights}: not a paraphrase model directory (no {ParaphraseHighlighter.WEIGHTS})")
    encoder = TextEncoder(Path(card.encoder_dir) if card is not None and card.encoder_dir else None)
    if card is not None:
        check_encoder(model_dir, card, encoder.fingerprint(), encoder.name)
    return ParaphraseHighlighter.restore(load_file(str(weights)), config, encoder, cache_dir)


def _rule_note(config: HighlighterConfig) -> str:
    """The decision rule in words (for the card and the training summary)."""
    if (config.cut, config.low) == (THRESHOLD, THRESHOLD):
        return "a pair is a paraphrase when both sides have a token with probability >= 0.5."
    return (
        f"a pair is called a paraphrase at a pair score >= {config.cut:.4f}, not a paraphrase below "
        f"{config.low:.4f}, not sure in between (cuts chosen out of fold inside the training pairs for precision "
        f">= {config.precision:.3f}); highlights: tokens with probability >= 0.5."
    )


# -- the task ----------------------------------------------------------------------------------------

TASK_NAME = "paraphrase"
MODEL_NAME = "contextdep-highlighter"
# Bumped whenever the shipped weights change: `argweb run` skips a corpus that holds a complete
# run of the same model and version, so an unchanged version would keep the old predictions.
VERSION = 3
PAIR_CACHE = "contextdep-pairs"
"""The pair-vector cache, under the encoder cache (``<cache_dir>/embeddings/contextdep-pairs``)."""
FIGURES = ("f1", "precision", "recall", "accuracy", "jaccard_guest", "jaccard_host", "floor_f1", "not_sure_share")
"""The figures of an evaluation and of each fold (with ``pair_auc``)."""
RECIPES: Recipes[HighlighterConfig] = Recipes(
    {name: HighlighterConfig(**values) for name, values in PROFILES.items()},
    "full",
    lambda c: Schedule(epochs=c.epochs, lr=c.lr, weight_decay=c.weight_decay, decay="cosine", clip=None, seed=c.seed),
)
"""``quick`` and ``full`` (the shipped model) keep the encoder frozen and choose a decision rule of
precision 2/3; ``two-way`` is ``full`` with the paper's 0.5 rule (the recipe of version 2)."""

HighlighterTrainer = Callable[..., tuple[Highlighter, FitResult, dict[str, float | int]]]
"""``(train, tune, config, *, encoder_dir, cache_dir) -> (model, fit, tuning figures)``, as
:func:`train_highlighter` (``experiments/paraphrase_finetune.py`` passes its fine-tuned one)."""


@dataclass(frozen=True)
class ParaphraseExample:
    """A labelled ContextDeP pair and the split of the file it came from (``train``, ``dev`` ...)."""

    pair: ParaphrasePair
    split: str | None


def pairs_from_file(path: Path) -> list[ParaphrasePair]:
    """The pairs of one ``*_TOKEN-annotations.tsv`` file, in file order.

    Raises:
        LoaderError: No such file, or not a valid aggregated ContextDeP file (named in the message).
    """
    from gnn.contextdep import pairs_from_records
    from ontology.formats.contextdep import load_contextdep

    if not path.is_file():
        raise LoaderError(f"{path}: no such file")
    return pairs_from_records(load_contextdep([path]).nodes)


def pair_auc(pairs: Sequence[ParaphrasePair], predictions: Sequence[PairPrediction]) -> float:
    """ROC AUC of the pair score (:attr:`PairPrediction.score`) against the gold pair labels.

    How well the score ranks paraphrases above the rest whatever the threshold: 0.5 means no
    decision rule on that score can beat the all-paraphrase floor by much. NaN when the pairs hold
    one class only.
    """
    from sklearn.metrics import roc_auc_score

    by_qid = {p.qid: p.score for p in predictions}
    gold = [int(p.label) for p in pairs]
    if len(set(gold)) < 2:
        return float("nan")
    return float(roc_auc_score(gold, [by_qid[p.qid] for p in pairs]))


def figures(pairs: Sequence[ParaphrasePair], predictions: Sequence[PairPrediction]) -> dict[str, float]:
    """The evaluation figures (:data:`FIGURES` and ``pair_auc``) of ``predictions``."""
    scored = score_predictions(pairs, predictions)
    return {name: float(getattr(scored, name)) for name in FIGURES} | {"pair_auc": pair_auc(pairs, predictions)}


def _pair_cache(resources: Resources) -> Path:
    return resources.cache_dir / "embeddings" / PAIR_CACHE


def _encoder_name(resources: Resources) -> str:
    from gnn.encoder import TextEncoder

    return TextEncoder(resources.encoder_dir).name


def cross_validate_pairs(
    examples: Sequence[ParaphraseExample],
    config: HighlighterConfig,
    resources: Resources,
    *,
    folds: int = 5,
    seed: int = 13,
    profile: str = "",
    trainer: HighlighterTrainer = train_highlighter,
) -> CVReport:
    """Out-of-fold figures of the highlighter recipe ``config`` on ``examples``, folds by interview.

    Pairs are grouped by their MediaSum interview (the question id ``CNN-378275-5`` is question 5
    of interview ``CNN-378275``), so no interview is on both sides of a fold. Each fold
    (:func:`gnn.protocol.cross_validate`) trains ``trainer`` on its training part, which chooses the
    epoch and the logit offset on the fold's tuning part (whole interviews of the training folds,
    about a tenth) only; a recipe with a decision rule chooses its cuts by inner cross-validation
    over the training and tuning part (:func:`decide`); the held-out fold is scored once.

    Raises:
        ApiError: Fewer interviews than folds.
    """
    pairs = [e.pair for e in examples]

    def run_fold(fold: Fold) -> FoldOutcome:
        train, tune, test = ([pairs[i] for i in part] for part in (fold.train, fold.tune, fold.test))
        cache = _pair_cache(resources)
        model, fit, _ = trainer(train, tune, replace(config), encoder_dir=resources.encoder_dir, cache_dir=cache)
        decide(model, [*train, *tune], trainer, resources.encoder_dir, cache)
        predictions = model.predict(test)
        chosen = {"epoch": fit.best_epoch, "bias": model.config.bias, "cut": model.config.cut, "low": model.config.low}
        return FoldOutcome(figures(test, predictions), {"": score_predictions(test, predictions).labels()}, chosen)

    groups = [p.interview for p in pairs]
    if len(set(groups)) < folds:
        raise ApiError(f"{len(set(groups))} interview(s) of ContextDeP pairs cannot fill {folds} folds")
    protocol = (
        "ContextDeP highlighting grouped by interview (the question id without its last part); in each fold "
        "about 1/10 of the training pairs (whole interviews) choose the epoch and the logit offset; figures of "
        "the held-out fold; a decision rule's cuts are chosen by inner grouped folds over the training folds"
    )
    summary = cross_validate(
        groups, run_fold, folds, seed, protocol, log=resources.log, what="ContextDeP cross-validation"
    )
    return CVReport.of(TASK_NAME, profile, _encoder_name(resources), summary)


class ParaphraseTask(Task[HighlighterConfig, ParaphraseExample, Highlighter]):
    """The ContextDeP paraphrase highlighter on the task contract (:mod:`gnn.task`).

    Training data: ``*_TOKEN-annotations.tsv`` files. Pairs of ``*_TRAIN_*`` files (and of files
    of no split) train the head, pairs of ``*_TEST_*`` files never do; pairs of ``*_DEV_*`` files
    are divided by interview (:func:`gnn.paraphrase_eval.split_by_interview`, a fixed hash of the
    MediaSum interview id) into a tuning half (model selection) and a held-out half that is only
    scored, never tuned on.
    Over the graph it predicts every (guest, host) locution pair (``graphstore.scopes`` reader
    ``pairs``) and writes each predicted paraphrase as a ``rephrase`` relation guest -> host with
    the highlighted token positions of each side.
    """

    name = TASK_NAME
    model_name = MODEL_NAME
    version = VERSION
    reads = "contextdep"
    default_data = ("contextdep",)
    recipes = RECIPES
    graph_corpora = ("contextdep",)

    def examples(self, records: CorpusBundle, config: HighlighterConfig) -> list[ParaphraseExample]:
        """One example per annotated ContextDeP pair in ``records``, in record order, with its file's split.

        Raises:
            LoaderError: No ContextDeP pairs there.
        """
        from gnn.contextdep import pairs_from_records

        splits = {n.local_id: n.split for n in records.nodes if isinstance(n, DiscourseRecord)}
        found = [ParaphraseExample(p, splits.get(p.qid)) for p in pairs_from_records(records.nodes)]
        if not found:
            raise LoaderError(f"no ContextDeP pairs in {records.origin}")
        return found

    def group(self, example: ParaphraseExample) -> str:
        """The MediaSum interview."""
        return example.pair.interview

    def gold(self, example: ParaphraseExample) -> str:
        """``paraphrase`` when most annotators voted so, else ``not_paraphrase``."""
        return PARAPHRASE if example.pair.label else NOT_PARAPHRASE

    def inputs(self, example: ParaphraseExample) -> TextPair:
        """The guest's and the host's turn, their tokens joined by spaces."""
        return TextPair(" ".join(example.pair.guest), " ".join(example.pair.host))

    def encoder_name(self, config: HighlighterConfig, resources: Resources) -> str | None:
        """The encoder the pairs are read with."""
        return _encoder_name(resources)

    def fit(
        self,
        train: Sequence[ParaphraseExample],
        tune: Sequence[ParaphraseExample],
        config: HighlighterConfig,
        resources: Resources,
    ) -> Fitted[Highlighter]:
        """A highlighter trained on ``train``, its epoch and offset chosen on ``tune``, its decision rule by
        inner folds over both (:func:`decide`)."""
        pairs = [e.pair for e in train], [e.pair for e in tune]
        cache = _pair_cache(resources)
        model, fit, _ = train_highlighter(*pairs, replace(config), resources.encoder_dir, cache)
        decide(model, [*pairs[0], *pairs[1]], train_highlighter, resources.encoder_dir, cache)
        c = model.config
        return Fitted(model, {"epoch": fit.best_epoch, "bias": c.bias, "cut": c.cut, "low": c.low})

    def split(self, examples: Sequence[ParaphraseExample]) -> dict[str, list[ParaphrasePair]]:
        """``train`` / ``tune`` / ``heldout`` pairs (the class docstring gives the split).

        Raises:
            LoaderError: No training pairs (a ``*_TRAIN_TOKEN-annotations.tsv`` is needed).
        """
        train = [e.pair for e in examples if e.split not in ("dev", "test")]
        if not train:
            raise LoaderError("no training pairs (a *_TRAIN_TOKEN-annotations.tsv is needed)")
        tune, heldout = split_by_interview([e.pair for e in examples if e.split == "dev"])
        return {"train": train, "tune": tune, "heldout": heldout}

    def train(
        self,
        examples: Sequence[ParaphraseExample],
        out: Path,
        config: HighlighterConfig,
        profile: str,
        resources: Resources,
    ) -> TrainReport:
        """Train the highlighter into ``out`` and write its card (tuning and held-out figures)."""
        from gnn.modelcard import ModelCard

        config = replace(config)  # training sets its offset and layers
        parts = self.split(examples)
        cache = _pair_cache(resources)
        model, fit, _ = train_highlighter(
            parts["train"], parts["tune"], config, resources.encoder_dir, cache, log=resources.log
        )
        rule = decide(model, [*parts["train"], *parts["tune"]], train_highlighter, resources.encoder_dir, cache)
        tuned = score_predictions(parts["tune"], model.predict(parts["tune"])).as_dict() if parts["tune"] else {}
        metrics: dict[str, Any] = {"tune": tuned, "best_epoch": fit.best_epoch}
        if rule is not None:
            metrics["decision"] = rule.as_dict()
        if parts["heldout"]:
            metrics["heldout"] = score_predictions(parts["heldout"], model.predict(parts["heldout"])).as_dict()
        card = ModelCard(
            task=self.name,
            model=self.model_name,
            version=str(self.version),
            weights=[model.WEIGHTS, CONFIG],
            encoder=model.encoder.name,
            encoder_fingerprint=model.encoder.fingerprint(),
            encoder_dir=str(model.encoder.model_dir.resolve()) if resources.encoder_dir is not None else None,
            data={
                "files": [str(p) for p in resources.data_files],
                "split": "train files -> train; dev files split by interview (sha1 of the MediaSum id, "
                "salt argweb-contextdep, half) -> tune (epoch and offset selection) / heldout (scored only); "
                "the decision rule's cuts by inner grouped folds over train and tune",
                "pairs": {k: len(v) for k, v in parts.items()},
                "heldout_qids": [p.qid for p in parts["heldout"]],
            },
            notes=model.notes + "; " + _rule_note(model.config),
        )
        written = finish_card(out, card, config, profile, fit.history, fit.seconds, metrics, model.save(out))
        held = metrics.get("heldout", {})
        nan = float("nan")
        summary = (
            f"paraphrase model -> {out} in {written.training_seconds}s; best epoch {fit.best_epoch}; "
            f"{_rule_note(model.config)} held-out F1 {held.get('f1', nan):.3f}, precision "
            f"{held.get('precision', nan):.3f}, recall {held.get('recall', nan):.3f}, not sure "
            f"{held.get('not_sure_share', nan):.3f}, Jaccard guest {held.get('jaccard_guest', nan):.3f} "
            f"/ host {held.get('jaccard_host', nan):.3f}"
        )
        return TrainReport(self.name, out, written, CardVersion.of(written), summary)

    def load(self, model_dir: Path, *, encoder: TextEncoder | None, device: str | None) -> Highlighter:
        """The highlighter in ``model_dir`` on the encoder its card records (pair vectors cached beside
        ``encoder``'s, when it has a cache).

        Raises:
            ModelError: Its files are missing, or the encoder is not the one it was trained with.
        """
        from gnn.modelcard import read_card

        cache = encoder.cache_dir / PAIR_CACHE if encoder is not None and encoder.cache_dir is not None else None
        try:
            return load_highlighter(model_dir, read_card(model_dir, task=self.name), cache)
        except FileNotFoundError as e:
            raise ModelError(str(e)) from e

    def predict(self, loaded: Highlighter, records: Sequence[TextPair]) -> list[PredictedRelation]:
        """Whether each guest (source) -> host (target) pair is a paraphrase; tokens split at white space.

        The label is the model's three-way decision (``paraphrase``, ``not_paraphrase`` or
        ``not_sure``, :attr:`gnn.paraphrase_eval.PairPrediction.decision`); the score is the pair score
        (the pair model's probability, or the weaker side's strongest token for a model without one),
        the probabilities hold it (``paraphrase``) and its
        complement (``not_paraphrase``), and the threshold is the model's cut (paraphrase at or above
        it; its lower cut, below which the answer is ``not_paraphrase``, is on the card).
        """
        pairs = [ParaphrasePair(str(k), r.source.split(), r.target.split()) for k, r in enumerate(records)]
        out = []
        for r, p in zip(records, loaded.predict(pairs), strict=True):
            probs = {PARAPHRASE: p.score, NOT_PARAPHRASE: 1.0 - p.score}
            out.append(PredictedRelation(r.source, r.target, p.decision, p.score, probs, threshold=p.cut))
        return out

    def evaluate(self, loaded: Highlighter, examples: Sequence[ParaphraseExample], resources: Resources) -> EvalReport:
        """Classification F1/P/R against the majority vote and highlight Jaccard on ``examples``' own tokens.

        ``details["metrics"]``: every count and figure of :class:`gnn.paraphrase_eval.ParaphraseMetrics`.
        """
        pairs = [e.pair for e in examples]
        predictions = loaded.predict(pairs)
        scored = score_predictions(pairs, predictions)
        return EvalReport(
            self.name,
            self.describe(loaded),
            figures(pairs, predictions),
            LabelTally.table(scored.labels()),
            {"metrics": scored.as_dict()},
        )

    def cross_validate(
        self,
        examples: Sequence[ParaphraseExample],
        config: HighlighterConfig,
        resources: Resources,
        *,
        folds: int = 5,
        seed: int = 13,
        profile: str = "",
    ) -> CVReport:
        """:func:`cross_validate_pairs` with the shipped kind's trainer."""
        return cross_validate_pairs(examples, config, resources, folds=folds, seed=seed, profile=profile)

    # Over the graph.

    def scope_read(self, corpus: str) -> str:
        """Every corpus: its two-locution dialogues as (guest, host) pairs."""
        return "pairs"

    def decoding(self, loaded: Highlighter, model_dir: Path, scope: Scope, options: Mapping[str, str]) -> Decoding:
        """The model, its directory, its decision rule (cut and lower cut), the corpus and the dialogues' local ids.

        Raises:
            ApiError: An option (the highlighter takes none).
        """
        from gnn.modelcard import read_card

        if options:
            raise ApiError(f"the paraphrase task takes no options, got {sorted(options)}")
        card = read_card(model_dir, task=self.name)
        qids = [local or did for did, local in zip(scope.ids, scope.local_ids or scope.ids, strict=True)]
        rule = (
            (THRESHOLD,)
            if (loaded.config.cut, loaded.config.low) == (THRESHOLD, THRESHOLD)
            else (
                loaded.config.cut,
                loaded.config.low,
            )
        )
        return Decoding(
            (self.name, card.model, card.written_version, model_dir.resolve(), *rule, scope.corpus, *qids),
            {
                "corpus": scope.corpus,
                "threshold": loaded.config.cut,
                "low": loaded.config.low,
                "model_dir": str(model_dir),
            },
        )

    def predict_scope(self, loaded: Highlighter, records: ScopeRecords, options: Mapping[str, str]) -> ScopePrediction:
        """A ``rephrase`` relation guest -> host for each pair called a paraphrase, with the highlighted tokens.

        A pair answered "not sure" or "not paraphrase" writes nothing: a predicted ``rephrase`` asserts
        a paraphrase only where the model's decision rule calls one.

        Raises:
            NotFoundError: No two-locution dialogue in the scope.
        """
        from ontology.labels import RelationLabel
        from ontology.records import PredictedRelation as GraphRelation
        from ontology.records import prediction_score

        sides: dict[str, list[LocutionRecord]] = {}
        for node in records.nodes:
            if isinstance(node, LocutionRecord) and node.discourse is not None:
                sides.setdefault(node.discourse, []).append(node)
        found = [(did, sides[did][0], sides[did][1]) for did in records.scope.ids if len(sides.get(did, ())) == 2]
        if not found:
            where = records.scope.dialogue or f"corpus {records.scope.corpus!r}"
            raise NotFoundError(f"{where} has no two-locution dialogues in the graph")
        pairs = [ParaphrasePair(did, list(g.tokens or []), list(h.tokens or [])) for did, g, h in found]
        predictions = loaded.predict(pairs)
        relations = tuple(
            GraphRelation(
                source=g.id,
                target=h.id,
                label=RelationLabel.REPHRASE,
                score=prediction_score(p.score),
                scheme_label="Paraphrase",
                source_tokens=sorted(p.highlights("guest")),
                target_tokens=sorted(p.highlights("host")),
            )
            for (_, g, h), p in zip(found, predictions, strict=True)
            if p.paraphrase
        )
        return ScopePrediction(relations, len(pairs), None, None, "predicted paraphrases")


TASK = ParaphraseTask()
"""The paraphrase task (registered in :mod:`gnn.task` as ``paraphrase``)."""
