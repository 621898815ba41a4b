"""Argument component tagger for Sci-Arg: BIO tags over the words of each sentence, BiLSTM-CRF.

Each token (a word or a punctuation mark, split as :func:`sentences_of` does) gets the contextual
vector of the offline encoder (frozen MiniLM: the mean of its sub-words' states in layers 3 and 6,
the sentence being one input) plus four position features (the sentence's place in the paper, its
length, the token's place from either end). A bidirectional LSTM over the sentence gives emission
scores for seven tags (``O`` and ``B-``/``I-`` for ``background_claim``, ``own_claim``, ``data``)
and a linear-chain CRF, whose transitions forbid an ``I-X`` after anything but ``B-X``/``I-X``,
decodes the best sequence. A component is a run of ``B-X I-X ...``; its span runs from its first
token's start to its last token's end.

Why a CRF over frozen vectors: exact-span F1 depends on both ends of a span being right, which
per-token decisions get wrong far more often (the hashed-feature linear tagger this replaces
reached 0.12 exact F1 on A21-A24, this one 0.51); the frozen encoder keeps training within the
15-minute budget on a 2-core CPU (encoding the 32 papers' 14,300 sentences takes about 4 minutes
and is cached per paper). The weights (float16) weigh about 1.2 MB.

The task (:class:`ComponentsTask`, registered as ``components``) trains, scores and
cross-validates the tagger on whole papers; :func:`gnn.sciarg_pipeline.end_to_end` scores the
Sci-Arg pipeline (components, then relations) in a fold of the relation cross-validation.

This module imports torch: the services import it inside functions.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
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

from gnn.bam import BratDocument, Component, Relation, documents_from_records
from gnn.bam import evaluate as evaluate_bam
from gnn.encoder import TextEncoder, cached_half
from gnn.metrics import PRF
from gnn.modelcard import ModelCard
from gnn.protocol import Fold, FoldOutcome, Pooled, cross_validate
from gnn.task import (
    CardVersion,
    CVReport,
    EvalReport,
    Fitted,
    LabelTally,
    PredictedRelation,
    Recipes,
    Resources,
    Task,
    TextPair,
    TrainReport,
    finish_card,
)
from gnn.trainer import FitResult, Progress, Schedule, Selection, Trainer
from gnn.weights import float_state, half_state, save_weights
from ontology.errors import ApiError, LoaderError, ModelError
from ontology.records import CorpusBundle, EdgeRecord, NodeRecord

LABELS = ("background_claim", "own_claim", "data")
TAGS = ("O", *(f"{p}-{lab}" for lab in LABELS for p in ("B", "I")))
WEIGHTS = "components_tagger.safetensors"
CONFIG = "components_config.json"
N_POSITION = 4  # position features appended to each token's encoder vector
_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass
class TaggerConfig:
    """Hyper-parameters of the component tagger (stored in the model directory).

    Attributes:
        max_length: Sub-word limit per sentence.
        dropout: Dropout rate (inputs, projection, LSTM outputs).
        epochs: Passes over the training sentences.
        lr: Adam's learning rate.
        batch_size: Sentences per batch.
        widths: Width of the inputs' projection and of each LSTM direction.
        layers: Encoder layers whose states, concatenated, make a word's vector.
        extra: Free-form notes.
        average_from: From this epoch on, the weights' running average competes with each epoch's own.
        min_tokens: Shorter components are dropped.
        seed: Random seed.
    """

    max_length: int = 256
    dropout: float = 0.3
    epochs: int = 12
    lr: float = 1e-3
    batch_size: int = 32
    widths: tuple[int, int] = (256, 128)
    layers: tuple[int, ...] = (3, 6)
    extra: dict[str, Any] = field(default_factory=dict)
    average_from: int = 3
    min_tokens: int = 1
    seed: int = 13


PROFILES: dict[str, dict[str, Any]] = {"quick": {"epochs": 2}, "full": {"epochs": 12}}


@dataclass
class _Sentence:
    spans: list[tuple[int, int]]
    words: list[str]
    position: float = 0.0  # place of the sentence in its paper, 0..1
    tags: np.ndarray | None = None


def sentences_of(doc: BratDocument, text_of: Callable[[int, int], str]) -> list[_Sentence]:
    """Token spans and words of every sentence of ``doc`` (``text_of(start, end)`` slices the text)."""
    out = []
    total = max(len(doc.sentences), 1)
    for k, ((start, _), text) in enumerate(zip(doc.sentences, doc.sentence_texts, strict=True)):
        spans = [(start + m.start(), start + m.end()) for m in _TOKEN.finditer(text)]
        if spans:
            out.append(_Sentence(spans, [text_of(s, e) for s, e in spans], k / total))
    return out


def gold_tags(sentence: _Sentence, components: Sequence[Component]) -> np.ndarray:
    """BIO tag ids of a sentence's tokens from the gold components."""
    tags = np.zeros(len(sentence.spans), dtype=np.int64)
    for comp in sorted(components, key=lambda c: c.spans):
        for s, e in comp.spans:
            first = True
            for i, (ts, te) in enumerate(sentence.spans):
                if ts < e and te > s and tags[i] == 0:
                    tags[i] = TAGS.index(f"{'B' if first else 'I'}-{comp.label}")
                    first = False
    return tags


def decode(spans: Sequence[tuple[int, int]], tags: Sequence[int] | np.ndarray) -> list[tuple[str, int, int]]:
    """(label, start, end) of the components in a tag sequence.

    A component is a maximal run of non-``O`` tokens, cut before every ``B`` tag; its label is the
    most frequent label of its tokens (ties: the first token's), so that a label flipping inside
    a run does not break one component into several. (The CRF never produces such flips; gold tags
    and hand-made sequences may.)
    """
    out: list[tuple[str, int, int]] = []
    run: list[tuple[str, int, int]] = []

    def close() -> None:
        if run:
            labels = [lab for lab, _, _ in run]
            best = max(dict.fromkeys(labels), key=labels.count)
            out.append((best, run[0][1], run[-1][2]))
            run.clear()

    for (s, e), tag in zip(spans, tags, strict=True):
        name = TAGS[int(tag)]
        if name == "O":
            close()
            continue
        prefix, label = name.split("-", 1)
        if prefix == "B":
            close()
        run.append((label, s, e))
    close()
    return out


def _tokens_in(sentence: _Sentence, component: tuple[str, int, int]) -> int:
    return sum(component[1] <= s and e <= component[2] for s, e in sentence.spans)


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
        return [
            {c for c in decode(sentence.spans, tags) if _tokens_in(sentence, c) >= self.config.min_tokens}
            for sentence, tags in zip(sentences, self.tag(rows), strict=True)
        ]

    def predict(self, doc: BratDocument, text: str) -> list[Component]:
        """Components of ``doc`` (its sentences are used, its components ignored), ids ``T1``, ``T2``..."""
        sentences = sentences_of(doc, lambda s, e: text[s:e])
        if not sentences:
            return []
        rows = paper_rows(sentences, self.vectors.of(sentences))
        found = set().union(*self.components(sentences, rows))
        ordered = sorted(found, key=lambda c: (c[1], c[2]))
        return [Component(f"T{i}", label, ((s, e),)) for i, (label, s, e) in enumerate(ordered, 1)]


def schedule(c: TaggerConfig) -> Schedule:
    """The tagger's recipe: Adam, gradients clipped at norm 5, averaged weights competing from ``average_from``.

    Exact-span F1 on the tune papers swings by several points from one epoch (and one seed) to the
    next; the average of the later epochs' weights is steadier, so after each epoch both compete.
    """
    return Schedule(c.epochs, c.lr, optimizer="adam", decay="none", clip=5.0, average_from=c.average_from, seed=c.seed)


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


def nearest_claim_relations(components: Sequence[Component], window: int = 600) -> list[tuple[str, str, str]]:
    """Fallback linker: every ``data`` component supports the nearest claim within ``window`` characters.

    Returns ``(label, source id, target id)`` triples. Used to score the pipeline end to end when
    no trained relation model is given (about 0.31 R on gold components, issue 8).
    """
    claims = [c for c in components if c.label != "data"]
    out = []
    for comp in components:
        if comp.label != "data" or not claims:
            continue
        start = comp.spans[0][0]
        best = min(claims, key=lambda c: abs(c.spans[0][0] - start))
        if abs(best.spans[0][0] - start) <= window:
            out.append(("supports", comp.id, best.id))
    return out


# -- papers, predicted documents and their brat lines ------------------------------------------------

Paper = tuple[BratDocument, str]
"""A Sci-Arg paper: its gold document (sentences, components, relations) and its raw text."""

Linker = Callable[[Sequence[Component]], list[tuple[str, str, str]]]


def read_papers(directory: Path, names: Sequence[str] | None = None) -> dict[str, Paper]:
    """(document, raw text) of the papers of a brat directory (all, or those named).

    Texts are sliced exactly as the Sci-Arg loader slices them (raw UTF-8, BOM and ``\\r`` kept),
    so predicted offsets index the same characters as gold ones.

    Raises:
        LoaderError: Missing files or annotations the Sci-Arg loader rejects.
    """
    from ontology.formats.common import decode_utf8, read_bytes
    from ontology.formats.sciarg import load_paper

    if not directory.is_dir():
        raise LoaderError(f"{directory}: not a directory")
    anns = sorted(directory.glob("*.ann"))
    if names is not None:
        anns = [a for a in anns if a.stem in set(names)]
    if not anns:
        raise LoaderError(f"{directory}: no brat .ann files{' for ' + ', '.join(names) if names else ''}")
    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    texts = {}
    for ann in anns:
        txt = ann.with_suffix(".txt")
        if not txt.is_file():
            raise LoaderError(f"{ann}: no {txt.name} next to it")
        load_paper(ann.stem, ann, txt, nodes, edges)
        texts[ann.stem] = decode_utf8(txt, read_bytes(txt), keep_bom=True)
    docs = documents_from_records(nodes, edges)
    return {name: (docs[name], texts[name]) for name in sorted(docs)}


def papers_from_records(nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> dict[str, Paper]:
    """The papers of Sci-Arg loader records, each text rebuilt from its sentences' raw slices.

    The tagger reads nothing but the sentences (their tokens, sliced from the text), and a
    predicted component lies inside one sentence, so a text that holds every sentence's raw slice
    at its offsets (spaces between them) gives the tagger, and :func:`fragments`, what the file does.
    """
    out = {}
    for name, doc in sorted(documents_from_records(nodes, edges).items()):
        parts, at = [], 0
        for (start, end), text in zip(doc.sentences, doc.sentence_texts, strict=True):
            if start >= at:
                parts.append(" " * (start - at) + text)
                at = end
        out[name] = (doc, "".join(parts))
    return out


def predicted_document(tagger: Any, doc: BratDocument, text: str, linker: Linker | None = None) -> BratDocument:
    """A document with the tagger's components (and ``linker``'s relations) on the sentences of ``doc``.

    A component that crosses a line break is cut there (:func:`fragments`), as its brat line will
    be and as gold components are, so that it is scored as it is written.
    """
    components = [
        Component(c.id, c.label, tuple(fragments(text, c.spans)) or c.spans) for c in tagger.predict(doc, text)
    ]
    out = BratDocument(doc.name, list(doc.sentences), list(doc.sentence_texts), {c.id: c for c in components})
    if linker is not None:
        out.relations = [Relation(label, src, tgt) for label, src, tgt in linker(components)]
    return out


_LINE_BREAK = re.compile("[\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+")


def fragments(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` cut at line breaks (a brat line cannot hold one): discontinuous fragments, none empty."""
    out = []
    for s, e in spans:
        start = s
        for m in _LINE_BREAK.finditer(text, s, e):
            if m.start() > start:
                out.append((start, m.start()))
            start = m.end()
        if e > start:
            out.append((start, e))
    return out


def ann_text(doc: BratDocument, text: str) -> str:
    """brat lines of a predicted document: ``T`` lines with the sliced text, then ``R`` lines.

    A component that crosses a line break is written as discontinuous fragments (``s1 e1;s2 e2``,
    text joined by one space), the form the Sci-Arg loader reads back.
    """
    lines = []
    for comp in doc.components.values():
        parts = fragments(text, comp.spans) or list(comp.spans)
        spans = ";".join(f"{s} {e}" for s, e in parts)
        lines.append(f"{comp.id}\t{comp.label} {spans}\t{' '.join(text[s:e] for s, e in parts)}")
    for k, rel in enumerate(doc.relations, start=1):
        lines.append(f"R{k}\t{rel.label} Arg1:{rel.source} Arg2:{rel.target}\t")
    return "".join(line + "\n" for line in lines)


def component_lines(txt: Path, tagger: ComponentTagger) -> list[str]:
    """Predicted ``T`` lines for one Sci-Arg text (for ``predict sciarg --components``).

    Sentences come from the Sci-Arg loader's splitter, so the tagger sees what it was trained on.
    """
    from ontology.formats.common import decode_utf8, read_bytes
    from ontology.formats.sciarg import _text_start, split_sentences

    text = decode_utf8(txt, read_bytes(txt), keep_bom=True)
    spans = split_sentences(text, _text_start(text))
    doc = BratDocument(txt.stem, spans, [text[s:e] for s, e in spans])
    return [line for line in ann_text(predicted_document(tagger, doc, text), text).split("\n") if line]


def component_of_line(line: str) -> Component:
    """The component of a brat ``T`` line."""
    key, rest, _ = line.split("\t", 2)
    label, _, raw = rest.partition(" ")
    spans = tuple((int(a), int(b)) for a, b in (f.split() for f in raw.split(";")))
    return Component(key, label, spans)


def pooled(by_label: Mapping[str, PRF]) -> Pooled:
    """A fold's predicted against gold counts from BAM's scores per label."""
    tally = Pooled()
    for label, prf in sorted(by_label.items()):
        tally.add(label, int(prf.gold), int(prf.predicted), int(prf.tp))
    return tally


@dataclass(frozen=True)
class PaperScores:
    """A tagger's BAM figures on whole papers.

    Attributes:
        figures: C exact-span F1, precision and recall (labelled), S and B.
        labels: BAM's components per label, predicted against gold.
        documents: The predicted documents by paper.
    """

    figures: dict[str, float]
    labels: Pooled
    documents: dict[str, BratDocument]


def paper_scores(tagger: Any, papers: Mapping[str, Paper]) -> PaperScores:
    """BAM figures of ``tagger`` on whole ``papers``."""
    gold = {name: doc for name, (doc, _) in papers.items()}
    predicted = {name: predicted_document(tagger, doc, text) for name, (doc, text) in papers.items()}
    scores = evaluate_bam(predicted, gold)
    figures = {"C.f1": scores.c.f1, "C.precision": scores.c.precision, "C.recall": scores.c.recall}
    figures |= {"S": scores.s.f1, "B": scores.b_mean}
    return PaperScores(figures, pooled(scores.c_by_label), predicted)


# -- the task -----------------------------------------------------------------------------------------

TASK_NAME = "components"
MODEL_NAME = "sciarg-component-tagger"
TRAIN = tuple(f"A{i:02d}" for i in range(1, 21))
TUNE = tuple(f"A{i:02d}" for i in range(21, 25))
HELDOUT = tuple(f"A{i:02d}" for i in range(25, 33))
SHIPPED_PAPERS = TRAIN + TUNE + HELDOUT
"""The papers the cross-validation cuts into folds (A33-A40 are the official test papers)."""
TUNE_SHARE = len(TUNE) / (len(TRAIN) + len(TUNE))
"""Share of a fold's training papers that choose the epoch: the shipped split's (4 of 24)."""
NONE = "none"
"""What :meth:`ComponentsTask.predict` answers for a text in which the tagger finds no component."""


@dataclass(frozen=True, eq=False)
class ComponentExample:
    """One gold component of a Sci-Arg paper: the item the task is scored on.

    Attributes:
        paper: The paper's name (its group).
        id: The component's brat id (``T3``).
        label: Its gold type.
        text: Its text (fragments joined by a space).
        spans: Its character spans in the paper.
        source: The paper it comes from (shared by the paper's examples): what the tagger trains on.
    """

    paper: str
    id: str
    label: str
    text: str
    spans: tuple[tuple[int, int], ...]
    source: Paper = field(repr=False)


def _papers_of(examples: Sequence[ComponentExample], names: Sequence[str] | None = None) -> dict[str, Paper]:
    """The papers of ``examples`` by name (those named, when given), sorted."""
    found = {e.paper: e.source for e in examples}
    return {n: found[n] for n in sorted(found) if names is None or n in names}


def _tally(examples: Sequence[ComponentExample], predicted: Mapping[str, BratDocument]) -> Pooled:
    """Predicted against gold per example: the type of the predicted component with its exact spans (else none)."""
    gold, found = [], []
    for k, e in enumerate(examples):
        doc = predicted.get(e.paper)
        hits = [c.label for c in doc.components.values() if c.spans == e.spans] if doc else []
        gold.append((k, e.label))
        found.append((k, hits[0] if hits else NONE))
    tally = Pooled()
    tally.add_pairs(gold, found)
    return tally


class ComponentsTask(Task[TaggerConfig, ComponentExample, ComponentTagger]):
    """The Sci-Arg argument component tagger (BiLSTM-CRF over frozen encoder word vectors).

    The examples are the gold components of each paper, grouped by paper; the tagger trains on
    whole papers (A01-A20, the epoch chosen on A21-A24, A25-A32 scored with BAM in the card) and
    is scored on whole papers: BAM components exact-span F1 (C), argumentative sentences (S) and
    boundary similarity (B). Asked about a text alone, it answers the type of the component it
    finds there (``none``: none).
    """

    name = TASK_NAME
    model_name = MODEL_NAME
    version = 1
    reads = "sciarg"
    default_data = ("sciarg", "compiled_corpus")
    recipes = Recipes(
        {profile: TaggerConfig(**values) for profile, values in PROFILES.items()}, "full", lambda c: schedule(c)
    )

    def examples(self, records: CorpusBundle, config: TaggerConfig) -> list[ComponentExample]:
        """The gold components of every paper in ``records``, in paper and span order.

        Raises:
            LoaderError: No component in the records.
        """
        out = []
        for name, paper in papers_from_records(records.nodes, records.edges).items():
            doc, text = paper
            for comp in sorted(doc.components.values(), key=lambda c: c.spans):
                said = " ".join(text[s:e] for s, e in comp.spans)
                out.append(ComponentExample(name, comp.id, comp.label, said, comp.spans, paper))
        if not out:
            raise LoaderError(f"no Sci-Arg components in {records.origin or 'the records'}")
        return out

    def group(self, example: ComponentExample) -> str:
        """The paper."""
        return example.paper

    def gold(self, example: ComponentExample) -> str:
        """The component's gold type."""
        return example.label

    def inputs(self, example: ComponentExample) -> TextPair:
        """The component's text (no target)."""
        return TextPair(example.text, "")

    def _vectors(self, config: TaggerConfig, resources: Resources, encoder: TextEncoder) -> TokenVectors:
        """The word vectors of ``config``, cached per paper under the embeddings cache."""
        cache = resources.cache_dir / "embeddings" / "sciarg-tokens"
        return TokenVectors(encoder, config.layers, config.max_length, cache)

    def fit(
        self,
        train: Sequence[ComponentExample],
        tune: Sequence[ComponentExample],
        config: TaggerConfig,
        resources: Resources,
    ) -> Fitted[ComponentTagger]:
        """The tagger trained on the papers of ``train``, its epoch chosen on the papers of ``tune``."""
        encoder = TextEncoder(resources.encoder_dir)
        if resources.encoder_dir is not None:
            config = replace(config, layers=encoder.middle_and_last())
        vectors = self._vectors(config, resources, encoder)
        tagger, result = train_tagger(_papers_of(train), _papers_of(tune), replace(config), vectors=vectors)
        return Fitted(tagger, {"epoch": result.best_epoch})

    def train(
        self,
        examples: Sequence[ComponentExample],
        out: Path,
        config: TaggerConfig,
        profile: str,
        resources: Resources,
    ) -> TrainReport:
        """Train the tagger on A01-A20 (epoch chosen on A21-A24) and score A25-A32 with BAM in the card.

        Raises:
            LoaderError: None of the papers A01-A20 among the examples.
        """
        encoder = TextEncoder(resources.encoder_dir)
        if resources.encoder_dir is not None:
            config = replace(config, layers=encoder.middle_and_last())
        train_papers, tune_papers = _papers_of(examples, TRAIN), _papers_of(examples, TUNE)
        if not train_papers:
            raise LoaderError("no Sci-Arg training papers (A01-A20) in the data")
        vectors = self._vectors(config, resources, encoder)

        def progress(stage: str, done: int, total: int) -> None:
            if done == total:
                resources.log(f"components: {stage} {done}/{total}")

        tagger, result = train_tagger(train_papers, tune_papers, config, progress=progress, vectors=vectors)
        metrics: dict[str, Any] = {
            "tune_exact_f1": result.best_score,
            "best_epoch": result.best_epoch,
            "weights_averaged": result.averaged,
        }
        held = _papers_of(examples, HELDOUT) if set(HELDOUT) <= {e.paper for e in examples} else {}
        if held:
            gold = {name: doc for name, (doc, _) in held.items()}
            pred = {
                name: predicted_document(tagger, doc, text, nearest_claim_relations)
                for name, (doc, text) in held.items()
            }
            metrics["heldout_bam_nearest_claim_linker"] = evaluate_bam(pred, gold).as_dict()
        corpus = resources.data_files[0] if resources.data_files else Path()
        card = ModelCard(
            task=TASK_NAME,
            model=MODEL_NAME,
            version=str(self.version),
            encoder=encoder.name,
            encoder_fingerprint=encoder.fingerprint(),
            encoder_dir=str(encoder.model_dir.resolve()) if resources.encoder_dir is not None else None,
            weights=[WEIGHTS, CONFIG],
            data={"corpus": str(corpus), "train": list(TRAIN), "tune": list(TUNE), "heldout": sorted(held)},
            notes=f"BIO tagger per sentence: frozen encoder word vectors (layers {list(config.layers)}) + position "
            "features -> BiLSTM -> CRF; "
            "held-out R here uses the nearest-claim linker (the relation classifier runs in predict sciarg "
            "--components).",
        )
        card = finish_card(out, card, config, profile, result.history, result.seconds, metrics, tagger.save(out))
        scores = metrics.get("heldout_bam_nearest_claim_linker")
        figures = f"; held-out S {scores['S']:.3f} B {scores['B']:.3f} C {scores['C']:.3f}" if scores else ""
        summary = f"component tagger -> {out} in {card.training_seconds}s (best epoch {result.best_epoch}){figures}"
        return TrainReport(TASK_NAME, out, card, CardVersion.of(card), summary)

    def load(self, model_dir: Path, *, encoder: TextEncoder | None, device: str | None) -> ComponentTagger:
        """The tagger in ``model_dir`` on ``encoder`` (the one its card names).

        Raises:
            ModelError: Not a component tagger's directory.
        """
        try:
            return ComponentTagger.load(model_dir, encoder)
        except FileNotFoundError as e:
            raise ModelError(str(e)) from e

    def predict(self, loaded: ComponentTagger, records: Sequence[TextPair]) -> list[PredictedRelation]:
        """The component type the tagger gives each source text read as one sentence (``none``: no component).

        The probability of a type is the share of the text's tokens inside components of that type.
        """
        out = []
        for record in records:
            text = record.source
            doc = BratDocument("text", [(0, len(text))], [text])
            tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
            counts = dict.fromkeys((*LABELS, NONE), 0)
            for comp in loaded.predict(doc, text) if tokens else []:
                (s, e), *_ = comp.spans
                counts[comp.label] += sum(s <= a and b <= e for a, b in tokens)
            counts[NONE] = max(len(tokens) - sum(counts[lab] for lab in LABELS), 0)
            total = sum(counts.values())
            probabilities = {k: v / total if total else float(k == NONE) for k, v in counts.items()}
            label = max(probabilities, key=lambda k: (probabilities[k], k != NONE))
            out.append(PredictedRelation(record.source, record.target, label, probabilities[label], probabilities))
        return out

    def evaluate(
        self, loaded: ComponentTagger, examples: Sequence[ComponentExample], resources: Resources
    ) -> EvalReport:
        """BAM figures of the tagger on the whole papers of ``examples``; per label, each gold component
        against the type of the predicted component with its exact spans (``none``: no such component)."""
        scored = paper_scores(loaded, _papers_of(examples))
        tally = LabelTally.table(_tally(examples, scored.documents))
        return EvalReport(self.name, self.describe(loaded), scored.figures, tally, {"papers": len(scored.documents)})

    def protocol(self, examples: Sequence[ComponentExample]) -> str:
        """How the papers are cut and scored."""
        papers = len({e.paper for e in examples})
        return (
            f"Sci-Arg components grouped by paper over {papers} papers; in each fold about a sixth of the training "
            "papers choose the epoch; BAM C (labelled exact-span F1), S and B of the held-out fold"
        )

    def encoder_name(self, config: TaggerConfig, resources: Resources) -> str | None:
        """The encoder the word vectors come from."""
        return TextEncoder(resources.encoder_dir).name

    def cross_validate(
        self,
        examples: Sequence[ComponentExample],
        config: TaggerConfig,
        resources: Resources,
        *,
        folds: int = 5,
        seed: int = 13,
        profile: str = "",
    ) -> CVReport:
        """Out-of-fold BAM figures of the recipe, folds by paper over the papers of the shipped split (A01-A32).

        Each fold trains a tagger on its training papers, whole papers of the training folds (the
        shipped split's share, 4 of 24) choosing the epoch, and scores its held-out papers with
        BAM; the tally per label is BAM's components per label. No model is written.

        Raises:
            ApiError: Fewer of those papers than folds.
        """
        kept = [e for e in examples if e.paper in SHIPPED_PAPERS]
        papers = _papers_of(kept)
        names = sorted(papers)
        if len(names) < folds:
            raise ApiError(f"{len(names)} of the papers A01-A32 found, fewer than the {folds} folds")

        def run_fold(fold: Fold) -> FoldOutcome:
            train, tune, test = (
                {names[i]: papers[names[i]] for i in getattr(fold, part)} for part in ("train", "tune", "test")
            )
            fitted = self.fit(
                [e for e in kept if e.paper in train], [e for e in kept if e.paper in tune], config, resources
            )
            scored = paper_scores(fitted.model, test)
            return FoldOutcome(scored.figures, {"": scored.labels}, dict(fitted.chosen), {"papers": sorted(test)})

        # One item per paper, as the folds were always cut (the tuning share counts papers).
        summary = cross_validate(
            names,
            run_fold,
            folds,
            seed,
            self.protocol(kept),
            tune_share=TUNE_SHARE,
            log=resources.log,
            what="components cross-validation",
        )
        report = CVReport.of(self.name, profile, self.encoder_name(config, resources), summary)
        return replace(report, items=len(kept))


TASK = ComponentsTask()
"""The component task (registered as ``components`` in :mod:`gnn.task`)."""
