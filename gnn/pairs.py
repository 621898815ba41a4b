"""Out-of-context pairs: how one thing said relates to another (support, attack, rephrase or none).

The task behind ``POST /predict`` with ``task: pair``: two texts, no map around them. The QT30
relation network reads a proposition through its place in a map (turns, speakers, anchoring), so
out of context it answers ``none`` to nearly everything; this model reads the two texts alone.

Data: the QT30 / DialAM-2024 maps (:class:`gnn.relations.argmap.ArgMap`, read by the AIF loader).
Every gold RA (support), CA (attack) and MA (rephrase) between I-nodes is a pair; ``none`` pairs
are sampled between unrelated I-nodes of the same map (:func:`examples_from_maps`: at random,
among the most word-sharing ones, and with a question on one side). A proposition is read as what
was said: its anchored locution's wording without the speaker, unless both propositions of the
pair are anchored in the same locution (then the locution does not tell them apart and the
I-node texts are used).

Model: the frozen sentence encoder (:class:`gnn.encoder.TextEncoder`, vectors cached) gives
``u``, ``v``; the head is an MLP over ``[u, v, u*v, |u-v|, u.v]``, a few cue-word flags of each
side (negations, contrast, reasons, questions: what a reply that disagrees or gives a reason
starts with) and the pair's word overlap (a restatement repeats the words, a denial negates
them). The label is of the pair's direction (the source supports, attacks or rephrases the
target). Decision: per-label log-biases added to the log-probabilities, chosen with the epoch on the
tuning part of the training data (macro-F1).

torch is imported inside the functions: the CLI imports this module eagerly.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from gnn.modelcard import ModelCard
from gnn.protocol import tuning_part
from gnn.relations.argmap import ArgMap, anchor_propositions, maps_from_records, words
from gnn.relations.metrics import macro_f1
from gnn.relations.qt30_task import coordinate_biases, episodes
from gnn.task import (
    CardVersion,
    CVReport,
    EvalReport,
    Fitted,
    PredictedRelation,
    Recipes,
    Resources,
    Task,
    TextPair,
    TrainReport,
    finish_card,
)
from ontology.aiftext import split_speaker
from ontology.errors import LoaderError, ModelError
from ontology.labels import RelationLabel, scheme_label

if TYPE_CHECKING:
    import torch
    from torch.optim.optimizer import ParamsT

    from gnn.encoder import TextEncoder
    from gnn.relations.marg_task import Pair
    from gnn.trainer import FitResult, Schedule, Selection
    from ontology.records import CorpusBundle

LABELS: tuple[str, ...] = (
    RelationLabel.NONE.value,
    *(scheme_label("qt30", t).value for t in ("RA", "CA", "MA")),
)
"""The labels in the head's output order: none, support, attack, rephrase."""
WEIGHTS = "pairs_head.safetensors"
CONFIG = "pairs_config.json"
# Words whose presence says how a reply stands to what it answers: denial, contrast, reasons,
# consequence, agreement. Flags of the whole text, and of its first three words (where a reply
# that disagrees says so: "No, ...", "But ...").
CUES = ("no", "not", "n't", "never", "but", "however", "disagree", "wrong", "nonsense", "rubbish", "untrue",
        "true", "because", "since", "so", "therefore", "why", "means", "evidence", "fact", "actually", "yes",
        "agree", "?")  # fmt: skip
OPENERS = ("no", "but", "yes", "well", "because", "so")
N_CUES = len(CUES) + len(OPENERS)
NEGATIONS = frozenset(("no", "not", "never", "nothing", "none", "nobody", "neither", "nor"))
N_OVERLAP = 5
BIAS_GRID = (-2.0, -1.5, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0)
_TOKEN = re.compile(r"[a-z']+|\?")


@dataclass(frozen=True)
class PairExample:
    """A labelled pair: what was said first (``source``), what it relates to (``target``), the label
    (:data:`LABELS`), the group that keeps it on one side of a fold (the QT30 episode) and its map."""

    source: str
    target: str
    label: str
    group: str
    map_name: str = ""


@dataclass(frozen=True)
class PairConfig:
    """The recipe of the pair model.

    Attributes:
        hidden: Width of the MLP's hidden layer.
        dropout: Dropout after it.
        epochs: Training epochs (the length of the cosine schedule; the epoch is chosen on tune).
        lr: Learning rate (AdamW).
        weight_decay: AdamW weight decay.
        batch: Pairs per batch.
        class_power: Class weights of the loss are ``(n / n_c) ** class_power`` (0: unweighted).
        cues: Add the cue-word flags of each side.
        overlap: Add the word-overlap features of the pair (:func:`overlap_features`).
        none_share: Sampled ``none`` pairs per gold relation of a map.
        encoder: The packaged sentence encoder the texts are read with (:data:`gnn.encoder.PACKAGED`;
            ``train pairs --encoder DIR`` reads them with a local one instead).
        seed: Seed of the network, the batches and the ``none`` sampling.
    """

    hidden: int = 256
    dropout: float = 0.2
    epochs: int = 8
    lr: float = 1e-3
    weight_decay: float = 1e-4
    batch: int = 256
    class_power: float = 0.5
    cues: bool = True
    overlap: bool = True
    none_share: float = 1.0
    encoder: str = "all-MiniLM-L6-v2"
    seed: int = 13


PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"hidden": 64, "epochs": 3},
    # all-mpnet-base-v2 beat MiniLM on every fold (docs/models/pairs.md); 224 hidden units keep all
    # shipped weights under 20 MB (256 would pass it by 35 kB).
    "full": {"hidden": 224, "encoder": "all-mpnet-base-v2"},
}
"""Training profiles: ``full`` is the shipped recipe; ``quick`` a small, fast one for tests (on MiniLM)."""
TASK_NAME = "pairs"
MODEL_NAME = "pair-mlp"
VERSION = 2
"""Bumped whenever the shipped weights change (predictions carry it as ``model_version``)."""
CHALLENGE = Path(__file__).resolve().parents[1] / "tests" / "data" / "challenge" / "relations.jsonl"
"""The hand-written clear cases (never trained or tuned on)."""
CHALLENGE_SECOND = CHALLENGE.with_name("relations-2.jsonl")
"""A second set, written after version 2 was shipped and scored once: how far the first set's figure
carries over to pairs nobody had seen the model answer."""


# -- data --------------------------------------------------------------------------------------


def said_texts(amap: ArgMap) -> tuple[list[str], list[int]]:
    """Each I-node's locution wording (speaker removed; the I-node text when it has no locution) and
    the locution's index (-1: none).

    The gold anchoring (YA) is used where the map has it, else :func:`anchor_propositions`.
    """
    recovered = anchor_propositions(amap)
    texts, anchors = [], []
    for i, prop in enumerate(amap.props):
        gold = amap.gold_anchor.get(i)
        k = min(gold) if gold else recovered[i]
        wording = split_speaker(amap.locutions[k].text)[1] if k >= 0 else ""
        texts.append(wording or prop.text)
        anchors.append(k if wording else -1)
    return texts, anchors


def _question(text: str) -> bool:
    return "?" in text


def examples_from_maps(maps: Sequence[ArgMap], none_share: float = 1.0, seed: int = 13) -> list[PairExample]:
    """Every gold relation of ``maps`` and sampled ``none`` pairs, grouped by QT30 episode.

    Per map, ``round(none_share * relations)`` (at least 2) unrelated ordered pairs of I-nodes
    (neither direction related in gold) become ``none``: a third among those sharing the most
    words (the same topic), a third with a question on one side, the rest at random. The
    sampling depends on the seed and the map's content only.
    """
    groups = episodes([m.name for m in maps])
    return [e for amap, group in zip(maps, groups, strict=True) for e in _map_examples(amap, group, none_share, seed)]


def _map_examples(amap: ArgMap, group: str, none_share: float, seed: int) -> list[PairExample]:
    """The examples of one map (see :func:`examples_from_maps`)."""
    said, anchors = said_texts(amap)
    props = [p.text for p in amap.props]

    def pair(i: int, j: int, label: str) -> PairExample:
        written = (props[i], props[j])
        spoken = written if anchors[i] >= 0 and anchors[i] == anchors[j] else (said[i], said[j])
        return PairExample(*spoken, label, group, amap.name)

    related = set(amap.gold) | {(t, s) for s, t in amap.gold}
    out = [pair(s, t, scheme_label("qt30", raw).value) for (s, t), raw in sorted(amap.gold.items())]
    n = len(amap.props)
    free = [(i, j) for i in range(n) for j in range(n) if i != j and (i, j) not in related]
    if not free:
        return out
    rng = random.Random(f"{seed}:{amap.name}")
    want = min(len(free), max(2, round(none_share * len(amap.gold))))
    bags = [set(words(t)) for t in props]

    def overlap(p: tuple[int, int]) -> float:
        a, b = bags[p[0]], bags[p[1]]
        return len(a & b) / max(len(a | b), 1)

    rng.shuffle(free)
    chosen: list[tuple[int, int]] = sorted(free, key=lambda p: -overlap(p))[: want // 3]
    asks = [p for p in free if (_question(said[p[0]]) or _question(said[p[1]])) and p not in chosen]
    chosen += asks[: want // 3]
    taken = set(chosen)
    chosen += [p for p in free if p not in taken][: want - len(chosen)]
    return out + [pair(i, j, RelationLabel.NONE.value) for i, j in chosen]


# -- features ----------------------------------------------------------------------------------


def cue_flags(text: str) -> list[float]:
    """The cue-word flags of a text (:data:`CUES` anywhere, :data:`OPENERS` in its first three words)."""
    low = text.lower()
    toks = _TOKEN.findall(low)
    present = set(toks)
    flags = [float(c in present or (c == "n't" and "n't" in low)) for c in CUES]
    first = toks[:3]
    return flags + [float(c in first) for c in OPENERS]


def overlap_features(source: str, target: str) -> list[float]:
    """What the two texts share in words: Jaccard of their longer words, the share of each side's
    longer words the other says, whether one side negates and the other not, and the log ratio of
    their lengths (a restatement says the same words; a denial or a reason says new ones)."""
    a, b = words(source), words(target)
    ca, cb = {w for w in a if len(w) > 3}, {w for w in b if len(w) > 3}
    inter = len(ca & cb)
    neg_a = bool(NEGATIONS & set(a)) or any(w.endswith("n't") for w in a)
    neg_b = bool(NEGATIONS & set(b)) or any(w.endswith("n't") for w in b)
    ratio = float(np.clip(np.log((len(a) + 1) / (len(b) + 1)), -3, 3)) / 3
    return [
        inter / max(len(ca | cb), 1),
        inter / max(len(ca), 1),
        inter / max(len(cb), 1),
        float(neg_a != neg_b),
        ratio,
    ]


def pair_features(
    u: np.ndarray,
    v: np.ndarray,
    cu: np.ndarray | None,
    cv: np.ndarray | None,
    lex: np.ndarray | None = None,
) -> np.ndarray:
    """``(n, d)`` rows ``[u, v, u*v, |u-v|, u.v, cues(u), cues(v), overlap]`` (the last two only when
    given)."""
    cols = [u, v, u * v, np.abs(u - v), np.sum(u * v, axis=1, keepdims=True)]
    if cu is not None and cv is not None:
        cols += [cu, cv]
    if lex is not None:
        cols.append(lex)
    return np.concatenate(cols, axis=1).astype(np.float32)


def feature_width(dim: int, cues: bool, overlap: bool = False) -> int:
    """Width of :func:`pair_features` rows for vectors of width ``dim``."""
    return 4 * dim + 1 + (2 * N_CUES if cues else 0) + (N_OVERLAP if overlap else 0)


class PairVectors:
    """Texts -> cached encoder vectors and cue flags, for building features of many pairs."""

    def __init__(self, encoder: TextEncoder, progress: bool = False) -> None:
        self.encoder = encoder
        self.progress = progress
        self._vec: dict[str, np.ndarray] = {}

    def add(self, texts: Sequence[str]) -> None:
        """Encode the texts not yet seen (the encoder's disk cache answers those encoded before)."""
        new = sorted({t for t in texts if t not in self._vec})
        if new:
            self._vec.update(zip(new, self.encoder.encode(new, progress=self.progress), strict=True))

    def features(
        self,
        pairs: Sequence[tuple[str, str]],
        cues: bool,
        overlap: bool = False,
    ) -> np.ndarray:
        """:func:`pair_features` of ``(source, target)`` pairs."""
        if not pairs:
            return np.zeros((0, 0), dtype=np.float32)
        self.add([t for p in pairs for t in p])
        firsts = [p[0] for p in pairs]
        seconds = [p[1] for p in pairs]
        u = np.stack([self._vec[t] for t in firsts]).astype(np.float32)
        v = np.stack([self._vec[t] for t in seconds]).astype(np.float32)
        cu = np.array([cue_flags(t) for t in firsts], dtype=np.float32) if cues else None
        cv = np.array([cue_flags(t) for t in seconds], dtype=np.float32) if cues else None
        lex = np.array([overlap_features(a, b) for a, b in pairs], dtype=np.float32) if overlap else None
        return pair_features(u, v, cu, cv, lex)


# -- decision ----------------------------------------------------------------------------------


def decide(probs: np.ndarray, bias: Sequence[float]) -> np.ndarray:
    """Label index per row: the largest log-probability plus the label's bias."""
    return np.asarray((np.log(np.clip(probs, 1e-9, 1.0)) + np.asarray(bias)).argmax(axis=1))


def decided(probs: np.ndarray, bias: Sequence[float]) -> list[tuple[str, float, dict[str, float]]]:
    """Per row of ``probs``: the label :func:`decide` picks, its probability, and every label's."""
    picked = decide(probs, bias) if len(probs) else np.zeros(0, dtype=np.int64)
    return [
        (LABELS[int(k)], float(p[int(k)]), {lab: float(x) for lab, x in zip(LABELS, p, strict=True)})
        for k, p in zip(picked, probs, strict=True)
    ]


def bias_selection(probs: np.ndarray, gold: np.ndarray) -> Selection:
    """The trainer's selection of an epoch of any pair recipe: the tuning macro-F1 with the biases
    chosen on the tuning pairs (they go with the epoch), and the macro-F1 without them."""
    from gnn.trainer import Selection

    bias, score = tune_bias(probs, gold)
    plain = macro_f1(gold.tolist(), decide(probs, [0.0] * len(LABELS)).tolist(), range(len(LABELS)))
    return Selection(score, {"bias": bias}, {"tune_f1": round(score, 4), "tune_f1_unbiased": round(plain, 4)})


def tune_bias(probs: np.ndarray, gold: np.ndarray, rounds: int = 2) -> tuple[list[float], float]:
    """Per-label log-biases maximising macro-F1 on ``(probs, gold)`` (coordinate search, none fixed at 0).

    Returns:
        The biases and their macro-F1.
    """
    labels = range(len(LABELS))

    def value(b: Sequence[float]) -> float:
        return macro_f1(gold.tolist(), decide(probs, b).tolist(), labels)

    return coordinate_biases(value, len(LABELS), range(1, len(LABELS)), BIAS_GRID, rounds)


# -- the model ---------------------------------------------------------------------------------


def _head(width: int, config: PairConfig) -> torch.nn.Module:
    from torch import nn

    return nn.Sequential(
        nn.Linear(width, config.hidden), nn.ReLU(), nn.Dropout(config.dropout), nn.Linear(config.hidden, len(LABELS))
    )


@dataclass
class PairModel:
    """A trained pair head with its recipe, decision biases and the encoder it reads vectors of.

    Attributes:
        head: The MLP (float32, evaluation mode).
        config: Its recipe.
        bias: Log-bias per label of :data:`LABELS`, chosen on tuning pairs.
        vectors: Text vectors (the frozen encoder with its cache).
        dim: Width of the encoder's vectors.
    """

    head: Any
    config: PairConfig
    bias: list[float]
    vectors: PairVectors
    dim: int

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """``(len(pairs), 4)`` probabilities over :data:`LABELS`."""
        import torch

        if not pairs:
            return np.zeros((0, len(LABELS)), dtype=np.float32)
        self.head.eval()
        with torch.inference_mode():
            x = torch.from_numpy(self.vectors.features(pairs, self.config.cues, overlap=self.config.overlap))
            return np.asarray(torch.softmax(self.head(x), dim=1).double().numpy())

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, float, dict[str, float]]]:
        """Per pair: the decided label, its probability, and the probability of every label."""
        return decided(self.probabilities(pairs), self.bias)

    def save(self, model_dir: Path) -> int:
        """Write the head (float16 safetensors) and its config; returns the bytes written."""
        from safetensors.torch import save_file

        from gnn.modelcard import atomic_write_bytes
        from gnn.weights import half_state

        model_dir.mkdir(parents=True, exist_ok=True)
        save_file(half_state(self.head.state_dict()), str(model_dir / WEIGHTS))
        meta = {"config": asdict(self.config), "bias": self.bias, "dim": self.dim, "labels": list(LABELS)}
        atomic_write_bytes(model_dir / CONFIG, (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode())
        return sum((model_dir / f).stat().st_size for f in (WEIGHTS, CONFIG))

    @classmethod
    def load(cls, model_dir: Path, encoder: TextEncoder) -> PairModel:
        """Read a model directory written by :meth:`save`, reading texts with ``encoder``.

        Raises:
            ModelError: Missing or malformed files, labels other than :data:`LABELS`, or a recipe
                variant that argweb no longer has (``symmetric``, ``joint``, ``written_copies`` on).
        """
        from safetensors.torch import load_file

        from gnn.weights import float_state

        try:
            meta = json.loads((model_dir / CONFIG).read_text(encoding="utf-8"))
            recipe = dict(meta["config"])
            # Directories written before the unadopted variants were removed name them, switched off.
            gone = [k for k in ("symmetric", "joint", "written_copies") if recipe.pop(k, False)]
            if gone:
                raise ModelError(f"{model_dir / CONFIG}: written by a recipe argweb no longer has ({', '.join(gone)})")
            config = PairConfig(**recipe)
            if tuple(meta["labels"]) != LABELS:
                raise ModelError(f"{model_dir / CONFIG}: labels {meta['labels']}, expected {list(LABELS)}")
            head = _head(feature_width(int(meta["dim"]), config.cues, config.overlap), config)
            head.load_state_dict(float_state(load_file(str(model_dir / WEIGHTS))))
        except (OSError, KeyError, TypeError, ValueError, RuntimeError) as e:
            raise ModelError(f"{model_dir}: not a pair model ({e})") from e
        head.eval()
        return cls(head, config, [float(b) for b in meta["bias"]], PairVectors(encoder), int(meta["dim"]))


@dataclass
class _Matrix:
    """Features and label indices of a set of pairs."""

    x: Any
    y: Any


class PairFit:
    """The :class:`gnn.trainer.Fittable` of the pair head: weighted cross-entropy, tuning macro-F1."""

    def __init__(self, width: int, config: PairConfig, train: _Matrix, tune: _Matrix | None) -> None:
        import torch

        self.config = config
        self.net = _head(width, config)
        self.train = train
        self.tune = tune
        counts = torch.bincount(train.y, minlength=len(LABELS)).float().clamp(min=1)
        weight = (counts.sum() / counts) ** config.class_power
        self.criterion = torch.nn.CrossEntropyLoss(weight=weight / weight.mean())

    @property
    def module(self) -> torch.nn.Module:
        """The head."""
        return self.net

    def param_groups(self) -> ParamsT:
        """Every parameter of the head."""
        return self.net.parameters()

    def batches(self, rng: np.random.Generator) -> list[np.ndarray]:
        """Shuffled index batches of the training pairs."""
        order = rng.permutation(len(self.train.y))
        return [order[k : k + self.config.batch] for k in range(0, len(order), self.config.batch)]

    def loss(self, batch: Any) -> torch.Tensor:
        """Weighted cross-entropy of one batch."""
        device = next(self.net.parameters()).device
        idx = np.asarray(batch)
        return self.criterion.to(device)(self.net(self.train.x[idx].to(device)), self.train.y[idx].to(device))

    def tune_probs(self) -> np.ndarray:
        """Probabilities of the tuning pairs."""
        import torch

        assert self.tune is not None
        device = next(self.net.parameters()).device
        return np.asarray(torch.softmax(self.net(self.tune.x.to(device)).float(), dim=1).cpu().double().numpy())

    def select(self) -> Selection | None:
        """Macro-F1 on the tuning pairs with biases chosen there (:func:`bias_selection`)."""
        if self.tune is None or len(self.tune.y) == 0:
            return None
        return bias_selection(self.tune_probs(), self.tune.y.numpy())


def _matrix(vectors: PairVectors, examples: Sequence[PairExample], config: PairConfig) -> _Matrix:
    import torch

    x = vectors.features([(e.source, e.target) for e in examples], config.cues, overlap=config.overlap)
    y = np.array([LABELS.index(e.label) for e in examples], dtype=np.int64)
    return _Matrix(torch.from_numpy(x), torch.from_numpy(y))


@dataclass
class PairTraining:
    """What :func:`train_pairs` did: the trainer's result, the chosen epoch and biases, and its time."""

    fit: FitResult
    refit_epoch: int | None
    seconds: float
    history: list[dict[str, Any]] = field(default_factory=list)


def train_pairs(
    train: Sequence[PairExample],
    tune: Sequence[PairExample],
    config: PairConfig,
    vectors: PairVectors,
    *,
    refit: bool = False,
    device: str | None = "cpu",
    log: Callable[[str], None] | None = None,
) -> tuple[PairModel, PairTraining]:
    """Train the head on ``train``, choosing the epoch and the biases on ``tune``.

    With ``refit`` a second head is trained from the same seed on ``train`` and ``tune`` together,
    stopping at the chosen epoch; it keeps the biases chosen on ``tune`` by the first.

    Raises:
        ModelError: No training pairs.
    """
    from gnn.trainer import Schedule, Trainer

    if not train:
        raise ModelError("no training pairs")
    started = time.perf_counter()
    vectors.add([t for e in [*train, *tune] for t in (e.source, e.target)])
    dim = int(vectors.encoder.dim)
    width = feature_width(dim, config.cues, config.overlap)
    schedule = Schedule(
        epochs=config.epochs, lr=config.lr, weight_decay=config.weight_decay, seed=config.seed, autocast=False
    )
    trainer = Trainer(schedule, device, log=log, label="pairs: ")
    tuning = _matrix(vectors, tune, config) if tune else None
    job = PairFit(width, config, _matrix(vectors, train, config), tuning)
    result = trainer.fit(job)
    bias = list(result.chosen.get("bias", [0.0] * len(LABELS)))
    net = job.net
    refit_epoch = None
    if refit and tune:
        refit_epoch = result.best_epoch
        again = PairFit(width, config, _matrix(vectors, [*train, *tune], config), None)
        Trainer(schedule, device, log=log, label="pairs refit: ").fit(again, stop_after=refit_epoch)
        net = again.net
    from gnn.weights import round_to_half

    net = net.cpu().eval()
    round_to_half(net)
    model = PairModel(net, config, bias, vectors, dim)
    return model, PairTraining(result, refit_epoch, time.perf_counter() - started, result.history)


# -- evaluation --------------------------------------------------------------------------------


def scores(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, float]:
    """Macro-F1 over :data:`LABELS`, macro-F1 over support and attack, and the F1 of each label."""
    return {
        "macro_f1": macro_f1(gold, predicted, LABELS),
        "support_attack_f1": macro_f1(gold, predicted, LABELS[1:3]),
        **{f"f1_{lab}": macro_f1(gold, predicted, (lab,)) for lab in LABELS},
    }


# -- the challenge set and M-Arg ---------------------------------------------------------------


@dataclass(frozen=True)
class ChallengePair:
    """A hand-written clear case: two texts, the gold label (of :data:`LABELS`), and why."""

    id: str
    source: str
    target: str
    label: str
    reason: str


def read_challenge(path: Path) -> list[ChallengePair]:
    """The pairs of a challenge file (JSON lines: ``id``, ``source``, ``target``, ``label``, ``reason``).

    Raises:
        ModelError: A line that is not such an object (file and line named).
    """
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            pair = ChallengePair(row["id"], row["source"], row["target"], row["label"], row["reason"])
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ModelError(f"{path}:{n}: not a challenge pair ({e})") from e
        if pair.label not in LABELS:
            raise ModelError(f"{path}:{n}: label {pair.label!r} is not one of {list(LABELS)}")
        out.append(pair)
    return out


@dataclass(frozen=True)
class ChallengeAnswer:
    """What a model answered to one challenge pair."""

    id: str
    gold: str
    predicted: str


@dataclass(frozen=True)
class ChallengeScore:
    """How many challenge pairs a model labels right.

    Attributes:
        pairs: Pairs asked.
        right: Pairs labelled right.
        share: ``right / pairs``, rounded (0 without pairs).
        per_label: Per gold label, its ``pairs`` and how many are ``right``.
        answers: What each pair got, in file order.
    """

    pairs: int
    right: int
    share: float
    per_label: dict[str, dict[str, int]]
    answers: list[ChallengeAnswer]

    def as_dict(self, answers: bool = True) -> dict[str, object]:
        """JSON-ready figures (for a card or a report); ``answers=False`` leaves the answers out."""
        out = asdict(self)
        if not answers:
            del out["answers"]
        return out


def challenge_score(pairs: Sequence[ChallengePair], predicted: Sequence[str]) -> ChallengeScore:
    """How many ``predicted`` labels are right, in all and per gold label, and what each pair got."""
    per: dict[str, dict[str, int]] = {}
    for p, lab in zip(pairs, predicted, strict=True):
        row = per.setdefault(p.label, {"pairs": 0, "right": 0})
        row["pairs"] += 1
        row["right"] += lab == p.label
    right = sum(r["right"] for r in per.values())
    return ChallengeScore(
        pairs=len(pairs),
        right=right,
        share=round(right / len(pairs), 4) if pairs else 0.0,
        per_label=per,
        answers=[ChallengeAnswer(p.id, p.label, lab) for p, lab in zip(pairs, predicted, strict=True)],
    )


@dataclass(frozen=True)
class TransferScore:
    """Figures of a model on M-Arg's gold pairs (:func:`gnn.relations.marg_task.score_transfer`).

    Attributes:
        pairs: Gold pairs scored.
        macro_f1: Macro-F1 over support, attack and neither.
        support_attack_f1: Macro-F1 over support and attack (neither excluded, as MAMKit reports).
        predicted: Pairs predicted per M-Arg label.
    """

    pairs: int
    macro_f1: float
    support_attack_f1: float
    predicted: dict[str, int]

    def as_dict(self) -> dict[str, object]:
        """JSON-ready figures (for a card or a report)."""
        return asdict(self)


def score_marg(model: PairPredictor, pairs: Sequence[Pair]) -> TransferScore:
    """Support / attack on M-Arg's gold pairs, out of domain (:func:`gnn.relations.marg_task.score_transfer`).

    Each pair is labelled source -> target; support and attack become M-Arg's ``Support`` and
    ``Attack``, rephrase and none ``Neither``.
    """
    from gnn.relations.marg_task import score_transfer
    from ontology.labels import scheme_raw

    marg_of = {lab.value: scheme_raw("m-arg", lab) for lab in (RelationLabel.SUPPORT, RelationLabel.ATTACK)}
    predicted = model.predict([(p.source, p.target) for p in pairs])
    rows = [
        (p.source_id, p.target_id, marg_of[lab], score)
        for p, (lab, score, _) in zip(pairs, predicted, strict=True)
        if lab in marg_of
    ]
    found = score_transfer(pairs, [rows])
    return TransferScore(found["pairs"], found["macro_f1"], found["support_attack_f1"], dict(found["predicted"]))


# -- recipes -------------------------------------------------------------------------------------


class PairPredictor(Protocol):
    """A trained pair model of any recipe: probabilities over :data:`LABELS`, decided with biases."""

    bias: list[float]

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """``(len(pairs), 4)`` probabilities over :data:`LABELS`."""
        ...

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, float, dict[str, float]]]:
        """Per pair: the decided label, its probability, and the probability of every label."""
        ...

    def save(self, model_dir: Path) -> int:
        """Write the model's files into ``model_dir``; returns the bytes written."""
        ...


@dataclass(frozen=True)
class RecipeCard:
    """What a recipe puts into the model card: the model's name, files, encoder and description."""

    model: str
    weights: list[str]
    encoder: str | None
    encoder_fingerprint: str | None
    encoder_dir: str | None
    notes: str


class PairRecipe(Protocol):
    """One way to train the pair model (:data:`RECIPE_MODULES`: one module each)."""

    name: str
    config_type: type
    files: tuple[str, ...]

    def fit(
        self, train: Sequence[PairExample], tune: Sequence[PairExample], config: Any, resources: Resources, refit: bool
    ) -> tuple[PairPredictor, PairTraining]:
        """A model trained on ``train`` (epoch and biases chosen on ``tune``; ``refit``: then on both)."""
        ...

    def card(self, config: Any, resources: Resources) -> RecipeCard:
        """The card fields of a model trained with ``config``."""
        ...

    def load(self, model_dir: Path, encoder: TextEncoder | None, device: str | None) -> PairPredictor:
        """The model in ``model_dir``."""
        ...


class MlpRecipe:
    """The shipped recipe: an MLP over the frozen sentence encoder's vectors (CPU, minutes)."""

    name: str = "mlp"
    config_type: type = PairConfig
    files: tuple[str, ...] = (WEIGHTS, CONFIG)

    def __init__(self) -> None:
        """No vectors yet: they are kept per encoder once one is read."""
        self._vectors: dict[tuple[str | None, str | None, str], PairVectors] = {}

    def forget(self) -> None:
        """Drop the kept vectors (a new run may read another encoder from the same place)."""
        self._vectors.clear()

    def vectors(self, config: PairConfig, resources: Resources) -> PairVectors:
        """The cached vectors of the encoder ``config`` reads (or the one the caller chose)."""
        key = (config.encoder, str(resources.encoder_dir) if resources.encoder_dir else None, str(resources.cache_dir))
        if key not in self._vectors:
            self._vectors[key] = PairVectors(resources.encoder(config.encoder))
        return self._vectors[key]

    def fit(
        self, train: Sequence[PairExample], tune: Sequence[PairExample], config: Any, resources: Resources, refit: bool
    ) -> tuple[PairPredictor, PairTraining]:
        """:func:`train_pairs` on the encoder's vectors."""
        vectors = self.vectors(config, resources)
        return train_pairs(train, tune, config, vectors, refit=refit, device=resources.device, log=resources.log)

    def card(self, config: Any, resources: Resources) -> RecipeCard:
        """An MLP over the frozen encoder's vectors."""
        encoder = self.vectors(config, resources).encoder
        return RecipeCard(
            MODEL_NAME,
            list(self.files),
            encoder.name,
            encoder.fingerprint(),
            str(resources.encoder_dir.resolve()) if resources.encoder_dir else None,
            f"MLP over frozen {encoder.name} sentence vectors of the two texts ([u, v, u*v, |u-v|, u.v], "
            "cue-word flags and word overlap), source -> target; per-label log-biases chosen on the tuning "
            "episodes. Out of context: two texts, no map.",
        )

    def load(self, model_dir: Path, encoder: TextEncoder | None, device: str | None) -> PairPredictor:
        """:meth:`PairModel.load` (it needs the encoder its card names).

        Raises:
            ModelError: No encoder given, or not a pair model.
        """
        if encoder is None:
            raise ModelError(f"{model_dir}: the pair MLP reads texts with an encoder; none was given")
        return PairModel.load(model_dir, encoder)


RECIPE_MODULES: tuple[str, ...] = ("gnn.pairs_cross",)
"""The pair recipes beyond the MLP, one module of :mod:`gnn` each, imported on first use: each has
``RECIPE`` (a :class:`PairRecipe`) and ``PROFILES`` (name -> its frozen config). A recipe measured
and not adopted is no profile: it lives in ``experiments/`` and hands its recipe to a
:class:`PairTask` of its own."""


def schedule_of(config: Any) -> Schedule:
    """The optimiser schedule of a pair recipe's config (each config says its own)."""
    from gnn.trainer import Schedule

    if isinstance(config, PairConfig):
        return Schedule(
            epochs=config.epochs, lr=config.lr, weight_decay=config.weight_decay, seed=config.seed, autocast=False
        )
    schedule: Schedule = config.schedule()
    return schedule


# -- the task ------------------------------------------------------------------------------------


class PairTask(Task[Any, PairExample, PairPredictor]):
    """The out-of-context pair task on the task contract (:mod:`gnn.task`)."""

    name = TASK_NAME
    model_name = MODEL_NAME
    version = VERSION
    reads = "aif"
    default_data = ("dialam-2024", "my_train")
    references: ClassVar[Mapping[str, tuple[str, ...]]] = {"marg": ("m-arg",)}

    def __init__(self) -> None:
        """The MLP recipe; the others are imported when :attr:`recipes` is first asked for."""
        self._mlp = MlpRecipe()
        self._recipes: Recipes[Any] | None = None
        self._by_config: dict[type, PairRecipe] = {PairConfig: self._mlp}

    @property
    def recipes(self) -> Recipes[Any]:  # type: ignore[override]
        """The profiles of every recipe: ``full`` (shipped), ``quick``, and those of :data:`RECIPE_MODULES`."""
        if self._recipes is None:
            import importlib

            profiles: dict[str, Any] = {k: PairConfig(**v) for k, v in PROFILES.items()}
            for module_name in RECIPE_MODULES:
                module = importlib.import_module(module_name)
                self._by_config[module.RECIPE.config_type] = module.RECIPE
                profiles |= module.PROFILES
            self._recipes = Recipes(profiles, "full", schedule_of)
        return self._recipes

    def recipe(self, config: Any) -> PairRecipe:
        """The recipe that trains ``config``."""
        _ = self.recipes  # the plug-in recipes are known once their profiles are
        return self._by_config[type(config)]

    def examples(self, records: CorpusBundle, config: Any) -> list[PairExample]:
        """The labelled pairs of the QT30 maps in ``records`` (:func:`examples_from_maps`).

        Raises:
            LoaderError: No QT30 / DialAM maps there.
        """
        maps = maps_from_records(records.nodes, records.edges)
        if not maps:
            raise LoaderError(f"no QT30 / DialAM AIF maps in {records.origin}")
        return examples_from_maps(maps, config.none_share, config.seed)

    def group(self, example: PairExample) -> str:
        """The QT30 episode."""
        return example.group

    def gold(self, example: PairExample) -> str:
        """The pair's label."""
        return example.label

    def inputs(self, example: PairExample) -> TextPair:
        """The two texts."""
        return TextPair(example.source, example.target)

    def scores(self, gold: Sequence[str], predicted: Sequence[str]) -> dict[str, float]:
        """:func:`scores`."""
        return scores(gold, predicted)

    def encoder_name(self, config: Any, resources: Resources) -> str | None:
        """The encoder the recipe reads texts with."""
        return self.recipe(config).card(config, resources).encoder

    def protocol(self, examples: Sequence[PairExample]) -> str:
        """QT30 pairs grouped by episode, epoch and biases chosen inside the training folds."""
        return (
            f"{len(examples)} QT30 pairs (gold RA/CA/MA and sampled none) grouped by episode; in each fold about "
            "1/10 of the training pairs (whole episodes) choose the epoch and the per-label biases"
        )

    def cross_validate(
        self,
        examples: Sequence[PairExample],
        config: Any,
        resources: Resources,
        *,
        folds: int = 5,
        seed: int = 13,
        profile: str = "",
    ) -> CVReport:
        """:meth:`gnn.task.Task.cross_validate`, the encoder read afresh for the run."""
        self._mlp.forget()
        return super().cross_validate(examples, config, resources, folds=folds, seed=seed, profile=profile)

    def fit(
        self, train: Sequence[PairExample], tune: Sequence[PairExample], config: Any, resources: Resources
    ) -> Fitted[PairPredictor]:
        """One model of the recipe, the epoch and biases chosen on ``tune``."""
        model, training = self.recipe(config).fit(train, tune, config, resources, False)
        return Fitted(model, {"epoch": training.fit.best_epoch, "bias": [round(b, 2) for b in model.bias]})

    def train(
        self, examples: Sequence[PairExample], out: Path, config: Any, profile: str, resources: Resources
    ) -> TrainReport:
        """Train into ``out`` and write the card (with the challenge and M-Arg figures).

        About a tenth of the episodes (:func:`gnn.protocol.tuning_part`) choose the epoch and the
        decision biases; with them chosen, the model is trained again on every pair, stopping at
        that epoch.
        """
        self._mlp.forget()
        tune_mask = tuning_part([e.group for e in examples], config.seed)
        train_part = [e for e, t in zip(examples, tune_mask, strict=True) if not t]
        tune_part = [e for e, t in zip(examples, tune_mask, strict=True) if t]
        recipe = self.recipe(config)
        model, run = recipe.fit(train_part, tune_part, config, resources, True)
        metrics: dict[str, Any] = {
            "best_epoch": run.fit.best_epoch,
            "tune_macro_f1": run.fit.best_score,
            "bias": dict(zip(LABELS, model.bias, strict=True)),
        }
        if CHALLENGE.is_file():
            metrics["challenge"] = self.challenge(model).as_dict(answers=False)
        marg = self.marg_pairs(resources)
        if marg:
            metrics["marg"] = score_marg(model, marg).as_dict()
        parts = recipe.card(config, resources)
        card = ModelCard(
            task=self.name,
            model=parts.model,
            version=str(self.version),
            weights=parts.weights,
            encoder=parts.encoder,
            encoder_fingerprint=parts.encoder_fingerprint,
            encoder_dir=parts.encoder_dir,
            data={
                "files": [str(p) for p in resources.data_files],
                "pairs": len(examples),
                "labels": {lab: sum(e.label == lab for e in examples) for lab in sorted({e.label for e in examples})},
                "split": "about 1/10 of the episodes (whole) choose the epoch and the biases; the head is then "
                "trained again on every pair up to that epoch",
                "tune_pairs": len(tune_part),
            },
            notes=parts.notes,
        )
        written = finish_card(out, card, config, profile, run.history, run.seconds, metrics, model.save(out))
        ch = metrics.get("challenge")
        extra = f"; challenge set {ch['right']} of {ch['pairs']} right" if ch else ""
        extra += f"; M-Arg support/attack macro-F1 {metrics['marg']['support_attack_f1']:.3f}" if marg else ""
        summary = (
            f"pair model -> {out} in {written.training_seconds}s; epoch {metrics['best_epoch']}, "
            f"tune macro-F1 {metrics['tune_macro_f1']:.3f}{extra}"
        )
        return TrainReport(self.name, out, written, CardVersion.of(written), summary)

    def load(self, model_dir: Path, *, encoder: TextEncoder | None, device: str | None) -> PairPredictor:
        """The pair model in ``model_dir``, of whichever recipe wrote it.

        Raises:
            ModelError: Not a pair model.
        """
        _ = self.recipes
        for recipe in self._by_config.values():
            if recipe is not self._mlp and all((model_dir / f).is_file() for f in recipe.files):
                return recipe.load(model_dir, encoder, device)
        return self._mlp.load(model_dir, encoder, device)

    def predict(self, loaded: PairPredictor, records: Sequence[TextPair]) -> list[PredictedRelation]:
        """The label of each pair, source -> target, with its probability and every label's."""
        answers = loaded.predict([(r.source, r.target) for r in records])
        return [
            PredictedRelation(r.source, r.target, lab, p, probs)
            for r, (lab, p, probs) in zip(records, answers, strict=True)
        ]

    def challenge(self, model: PairPredictor, path: Path = CHALLENGE) -> ChallengeScore:
        """How many pairs of the challenge file ``model`` labels right (:func:`challenge_score`)."""
        rows = read_challenge(path)
        return challenge_score(rows, [lab for lab, _, _ in model.predict([(r.source, r.target) for r in rows])])

    def evaluation_examples(self) -> list[PairExample]:
        """The challenge pairs as labelled examples (one group)."""
        return [PairExample(r.source, r.target, r.label, "challenge", r.id) for r in read_challenge(CHALLENGE)]

    def marg_pairs(self, resources: Resources) -> list[Pair]:
        """M-Arg's gold pairs, when the caller read them (:attr:`references`)."""
        from gnn.relations.marg_task import pairs_from_records

        bundle = resources.references.get("marg")
        return pairs_from_records(bundle.nodes, bundle.edges) if bundle is not None else []

    def evaluate(self, loaded: PairPredictor, examples: Sequence[PairExample], resources: Resources) -> EvalReport:
        """Scores on ``examples``; on the challenge set its counts per label, and M-Arg's figures when read."""
        report = super().evaluate(loaded, examples, resources)
        details: dict[str, Any] = {}
        if examples and all(e.group == "challenge" for e in examples):
            rows = [ChallengePair(e.map_name, e.source, e.target, e.label, "") for e in examples]
            details["challenge"] = challenge_score(rows, [lab for lab, _, _ in loaded.predict(
                [(e.source, e.target) for e in examples])]).as_dict()  # fmt: skip
        marg = self.marg_pairs(resources)
        if marg:
            details["marg"] = score_marg(loaded, marg).as_dict()
        return replace(report, details=details)


TASK = PairTask()
"""The pair task (registered in :mod:`gnn.task` as ``pairs``)."""
