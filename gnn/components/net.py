"""The component tagger's network and training: frozen encoder word vectors, a BiLSTM-CRF over each
sentence's tokens, and its fit through the one Trainer (the heavy half of :mod:`gnn.components`,
imported when a tagger is trained or loaded, so that the task registry stays light)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.optim.optimizer import ParamsT
from torch_geometric.data import Batch, Data
from torch_geometric.utils import to_dense_batch

from gnn.bam import BratDocument, Component
from gnn.components import (
    CONFIG,
    N_POSITION,
    TAGS,
    WEIGHTS,
    TaggerConfig,
    _Sentence,
    _tokens_in,
    decode,
    gold_tags,
    join_citations,
    schedule,
    sentences_of,
)
from gnn.encoder import TextEncoder, cached_half
from gnn.trainer import FitResult, Progress, Selection, Trainer
from gnn.weights import float_state, half_state, save_weights
from ontology.errors import ModelError


def allowed_transitions() -> np.ndarray:
    """``allowed[i, j]``: tag ``j`` may follow tag ``i`` (an ``I-X`` only after ``B-X`` or ``I-X``)."""
    allowed = np.ones((len(TAGS), len(TAGS)), dtype=bool)
    for j, tag in enumerate(TAGS):
        if tag.startswith("I-"):
            for i, prev in enumerate(TAGS):
                allowed[i, j] = prev[2:] == tag[2:]
    return allowed


_FORBIDDEN = -1e4  # score of a transition the BIO scheme forbids


class BiLstmCrf(nn.Module):
    """Token vectors -> BiLSTM emissions -> linear-chain CRF over :data:`TAGS`."""

    def __init__(self, dim_in: int, config: TaggerConfig) -> None:
        super().__init__()
        self.drop = nn.Dropout(config.dropout)
        projection, hidden = config.widths
        self.project = nn.Linear(dim_in, projection)
        self.lstm = nn.LSTM(projection, hidden, batch_first=True, bidirectional=True)
        self.emit = nn.Linear(2 * hidden, len(TAGS))
        self.transitions = nn.Parameter(torch.zeros(len(TAGS), len(TAGS)))
        self.start = nn.Parameter(torch.zeros(len(TAGS)))
        self.end = nn.Parameter(torch.zeros(len(TAGS)))
        # Plain tensors, not buffers: they are rebuilt from TAGS, never saved.
        self.allowed = torch.from_numpy(allowed_transitions())
        self.may_start = torch.tensor([not t.startswith("I-") for t in TAGS])

    def emissions(self, batch: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Emission scores ``(sentences, length, tags)`` of a :func:`sentence_batch`; its mask (1.0: a token)."""
        x, mask = to_dense_batch(batch.x, batch.batch)
        hidden, _ = self.lstm(self.drop(torch.relu(self.project(self.drop(x)))))
        return self.emit(self.drop(hidden)), mask.float()

    def _scores(self) -> tuple[torch.Tensor, torch.Tensor]:
        return (
            self.transitions.masked_fill(~self.allowed.to(self.transitions.device), _FORBIDDEN),
            self.start.masked_fill(~self.may_start.to(self.start.device), _FORBIDDEN),
        )

    def loss(self, em: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Mean negative log-likelihood of the gold ``tags`` (``mask`` 1 on real tokens, which come first)."""
        trans, start = self._scores()
        gold = start[tags[:, 0]] + em[:, 0].gather(1, tags[:, :1]).squeeze(1)
        alpha = start + em[:, 0]
        for i in range(1, em.shape[1]):
            on = mask[:, i]
            step = trans[tags[:, i - 1], tags[:, i]] + em[:, i].gather(1, tags[:, i : i + 1]).squeeze(1)
            gold = gold + step * on
            nxt = torch.logsumexp(alpha[:, :, None] + trans[None] + em[:, i, None, :], dim=1)
            alpha = torch.where(on[:, None] > 0, nxt, alpha)
        last = tags.gather(1, (mask.sum(1).long() - 1)[:, None]).squeeze(1)
        gold = gold + self.end[last]
        return (torch.logsumexp(alpha + self.end, dim=1) - gold).mean()

    def viterbi(self, em: torch.Tensor, mask: torch.Tensor) -> list[list[int]]:
        """Best tag sequence of each padded sentence (batched Viterbi)."""
        trans, start = self._scores()
        score = start + em[:, 0]
        keep = torch.arange(len(TAGS), device=em.device).expand(em.shape[0], -1)
        back = []
        for i in range(1, em.shape[1]):
            best, arg = (score[:, :, None] + trans[None]).max(dim=1)
            on = mask[:, i, None] > 0
            score = torch.where(on, best + em[:, i], score)
            back.append(torch.where(on, arg, keep))  # padding: stay on the same tag
        tag = (score + self.end).argmax(dim=1)
        path = [tag]
        for arg in reversed(back):
            tag = arg.gather(1, tag[:, None]).squeeze(1)
            path.append(tag)
        full = torch.stack(path[::-1], dim=1).tolist()
        lengths = mask.sum(1).long().tolist()
        return [row[:n] for row, n in zip(full, lengths, strict=True)]


def paper_rows(sentences: Sequence[_Sentence], vectors: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Network inputs of the sentences of one paper, in order: one ``(tokens, width)`` array each.

    A token's row is its word vector, then the four position features.
    """
    out = []
    for sentence, vec in zip(sentences, vectors, strict=True):
        n = len(sentence.spans)
        extra = np.zeros((n, N_POSITION), np.float32)
        extra[:, 0] = sentence.position
        extra[:, 1] = min(n, 80) / 80
        extra[:, 2] = np.arange(n) / n
        extra[:, 3] = np.arange(n)[::-1] / n
        out.append(np.concatenate([vec.astype(np.float32), extra], axis=1))
    return out


def input_width(vector_dim: int) -> int:
    """Width of a token's input row (see :func:`paper_rows`)."""
    return vector_dim + N_POSITION


def sentence_batch(
    rows: Sequence[np.ndarray], tags: Sequence[np.ndarray] | None = None, device: str | torch.device = "cpu"
) -> Batch:
    """Sentences as one PyG batch: a graph per sentence, its tokens the nodes (``x``: input rows, ``y``:
    gold tag ids), no edges; the network pads them back into sequences with ``to_dense_batch``."""
    ys = [None] * len(rows) if tags is None else [torch.from_numpy(t) for t in tags]
    graphs = [Data(x=torch.from_numpy(r), y=y) for r, y in zip(rows, ys, strict=True)]
    return Batch.from_data_list(graphs).to(device)


@dataclass
class TokenVectors:
    """The frozen encoder's word vectors of whole papers, cached per paper as ``.npz``.

    Attributes:
        encoder: The offline encoder (default: the packaged MiniLM).
        layers: Hidden layers whose states are concatenated.
        max_length: Sub-word limit per sentence.
        cache_dir: Where papers' vectors are kept; ``None`` = no cache.
    """

    encoder: TextEncoder = field(default_factory=TextEncoder)
    layers: tuple[int, ...] = (3, 6)
    max_length: int = 256
    cache_dir: Path | None = None

    @property
    def dim(self) -> int:
        """Width of a word vector."""
        return self.encoder.dim * len(self.layers)

    def of(self, sentences: Sequence[_Sentence]) -> list[np.ndarray]:
        """One ``(words, dim)`` array per sentence of one paper."""
        words = [s.words for s in sentences]
        # Rounded to float16 whether cached or not (:func:`gnn.encoder.cached_half`), so a run that
        # computes the vectors and one that reads them from the cache see the same numbers.
        return cached_half(
            self.cache_dir,
            [self.encoder.cache_key(), self.layers, self.max_length, words],
            [f"arr_{i}" for i in range(len(words))],
            lambda: self.encoder.word_states(words, self.layers, self.max_length),
        )


class ComponentTagger:
    """Frozen encoder word vectors + BiLSTM-CRF. Build one with :func:`train_tagger` or :meth:`load`."""

    def __init__(self, network: BiLstmCrf, config: TaggerConfig, vectors: TokenVectors) -> None:
        self.network, self.config, self.vectors = network.eval(), config, vectors

    @classmethod
    def load(
        cls, model_dir: Path, encoder: TextEncoder | None = None, cache_dir: Path | None = None
    ) -> ComponentTagger:
        """Rebuild a saved tagger on the (offline) base encoder.

        Raises:
            FileNotFoundError: ``model_dir`` lacks the weights or the configuration.
            ModelError: The configuration names a variant this tagger no longer has.
        """
        from safetensors.torch import load_file

        for needed in (model_dir / WEIGHTS, model_dir / CONFIG):
            if not needed.is_file():
                raise FileNotFoundError(f"{needed}: not a component tagger directory (no {needed.name})")
        raw = json.loads((model_dir / CONFIG).read_text(encoding="utf-8"))
        if raw.pop("context", False):  # written before the unadopted variant was removed, switched on
            raise ModelError(f"{model_dir / CONFIG}: a tagger with sentence context, which argweb no longer has")
        config = TaggerConfig(**raw | {"layers": tuple(raw["layers"]), "widths": tuple(raw["widths"])})
        vectors = TokenVectors(encoder or TextEncoder(), config.layers, config.max_length, cache_dir)
        network = BiLstmCrf(input_width(vectors.dim), config)
        network.load_state_dict(float_state(load_file(str(model_dir / WEIGHTS))))
        return cls(network, config, vectors)

    def save(self, model_dir: Path) -> int:
        """Write the weights (float16) and the configuration; returns the bytes written."""
        return save_weights(model_dir, WEIGHTS, half_state(self.network.state_dict()), CONFIG, asdict(self.config))

    def tag(self, rows: Sequence[np.ndarray]) -> list[list[int]]:
        """Tag ids per sentence, given the sentences' input rows (:func:`paper_rows`)."""
        out: list[list[int]] = []
        self.network.eval()
        device = next(self.network.parameters()).device
        with torch.inference_mode():
            for start in range(0, len(rows), 64):
                em, mask = self.network.emissions(sentence_batch(rows[start : start + 64], device=device))
                out.extend(self.network.viterbi(em, mask))
        return out

    def components(self, sentences: Sequence[_Sentence], rows: Sequence[np.ndarray]) -> list[set[tuple[str, int, int]]]:
        """(label, start, end) of the components found in each sentence."""
        out = []
        for sentence, tags in zip(sentences, self.tag(rows), strict=True):
            found = decode(sentence.spans, tags)
            if self.config.join_citations:
                found = join_citations(sentence, found)
            out.append({c for c in found if _tokens_in(sentence, c) >= self.config.min_tokens})
        return out

    def predict(self, doc: BratDocument, text: str) -> list[Component]:
        """Components of ``doc`` (its sentences are used, its components ignored), ids ``T1``, ``T2``..."""
        sentences = sentences_of(doc, lambda s, e: text[s:e])
        if not sentences:
            return []
        rows = paper_rows(sentences, self.vectors.of(sentences))
        found = set().union(*self.components(sentences, rows))
        ordered = sorted(found, key=lambda c: (c[1], c[2]))
        return [Component(f"T{i}", label, ((s, e),)) for i, (label, s, e) in enumerate(ordered, 1)]


@dataclass(eq=False)
class TaggerFit:
    """The tagger's network as :class:`gnn.trainer.Trainer` fits it (a :class:`~gnn.trainer.Fittable`).

    Attributes:
        config: Hyper-parameters.
        vectors: The word vectors' encoder.
        rows: Input rows of the training sentences (:func:`paper_rows`).
        tags: Their gold tag ids.
        tune_sentences: The tuning papers' sentences, with their ``tags``; none: no choice of epoch.
        tune_rows: Their input rows.
    """

    config: TaggerConfig
    vectors: TokenVectors
    rows: Sequence[np.ndarray]
    tags: Sequence[np.ndarray]
    tune_sentences: Sequence[_Sentence] = ()
    tune_rows: Sequence[np.ndarray] = ()

    @cached_property
    def module(self) -> BiLstmCrf:
        """The network, built on first use: inside the trainer's seeded run, so the seed sets its initial weights."""
        return BiLstmCrf(input_width(self.vectors.dim), self.config)

    def param_groups(self) -> ParamsT:
        """Every parameter of the network."""
        return self.module.parameters()

    def batches(self, rng: np.random.Generator) -> list[list[int]]:
        """Length buckets (positions of training sentences) in shuffled order: sentences of similar length
        share a batch, so the CRF loops over little padding."""
        order, size = sorted(range(len(self.rows)), key=lambda i: len(self.rows[i])), self.config.batch_size
        buckets = [order[k : k + size] for k in range(0, len(order), size)]
        return [buckets[b] for b in rng.permutation(len(buckets))]

    def loss(self, batch: list[int]) -> torch.Tensor:
        """CRF negative log-likelihood of one bucket's sentences."""
        device = next(self.module.parameters()).device
        data = sentence_batch([self.rows[i] for i in batch], [self.tags[i] for i in batch], device)
        em, mask = self.module.emissions(data)
        return self.module.loss(em, to_dense_batch(data.y, data.batch)[0], mask)

    def select(self) -> Selection | None:
        """Exact-span F1 on the tuning papers (``None`` without them)."""
        if not self.tune_sentences:
            return None
        found = ComponentTagger(self.module, self.config, self.vectors).components(self.tune_sentences, self.tune_rows)
        gold = [set(decode(s.spans, s.tags)) for s in self.tune_sentences if s.tags is not None]
        tp, total = sum(len(f & g) for f, g in zip(found, gold, strict=True)), sum(map(len, [*found, *gold]))
        f1 = 2 * tp / total if total else 0.0
        return Selection(f1, row={"tune_exact_f1": f1})


def train_tagger(
    train: Mapping[str, tuple[BratDocument, str]],
    tune: Mapping[str, tuple[BratDocument, str]],
    config: TaggerConfig,
    progress: Progress | None = None,
    vectors: TokenVectors | None = None,
) -> tuple[ComponentTagger, FitResult]:
    """Train on ``train`` papers (document, text); keep the epoch with the best exact-span F1 on ``tune``.

    Args:
        train: Training papers by name.
        tune: Papers that choose the epoch (never trained on).
        config: Hyper-parameters.
        progress: Called with (stage, done, total): ``encode`` per paper, ``train`` per epoch.
        vectors: Word vectors of the encoder (default: packaged MiniLM, no cache).

    Returns:
        The tagger and what the fit did (``seconds`` with the encoding).
    """
    started = time.perf_counter()
    vectors = vectors or TokenVectors(layers=config.layers, max_length=config.max_length)

    def prepared(papers: Mapping[str, tuple[BratDocument, str]]) -> tuple[list[_Sentence], list[np.ndarray]]:
        sentences: list[_Sentence] = []
        encoded: list[np.ndarray] = []
        for k, (doc, text) in enumerate(papers.values(), 1):
            mine = sentences_of(doc, lambda a, b, t=text: t[a:b])  # type: ignore[misc]
            for s in mine:
                s.tags = gold_tags(s, list(doc.components.values()))
            sentences.extend(mine)
            encoded.extend(paper_rows(mine, vectors.of(mine)) if mine else [])
            if progress:
                progress("encode", k, len(papers))
        return sentences, encoded

    train_s, rows = prepared(train)
    tags = [s.tags for s in train_s if s.tags is not None]
    job = TaggerFit(config, vectors, rows, tags, *prepared(tune))
    result = Trainer(schedule(config), progress=progress).fit(job)
    return ComponentTagger(job.module, config, vectors), replace(result, seconds=time.perf_counter() - started)
