"""Argument component tagger for Sci-Arg: BIO tags over the words of each sentence.

Each token (a word or a punctuation mark, :meth:`gnn.bam.BratDocument.tokens`) is described by
sparse lexical features in the style of classic sequence taggers: the word, its affixes and shape,
the words and bigrams around it (two on each side), its position in the sentence, the sentence's
length and position in the paper, and a few cue words of the sentence. Features are hashed
(scikit-learn's ``FeatureHasher``, murmurhash: stable across runs) into 2^17 columns and a linear
model trained with SGD on the logistic loss gives one of seven tags (``O`` and ``B-``/``I-`` for
``background_claim``, ``own_claim``, ``data``). A component is a maximal run of non-``O`` tokens
cut before every ``B``, labelled by the majority of its tokens; its span runs from its first
token's start to its last token's end.

Why not the encoder: on this shared 2-core CPU a contextual pass over the 200,000 tokens of the
training papers takes tens of minutes, and a neural tagger over frozen word-piece vectors trained
slower and no better in a first trial. The model weighs about 1.8 MB (float16).
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gnn.bam import BratDocument, Component

LABELS = ("background_claim", "own_claim", "data")
TAGS = ("O", *(f"{p}-{lab}" for lab in LABELS for p in ("B", "I")))
WEIGHTS = "components_tagger.safetensors"
CONFIG = "components_config.json"
N_FEATURES = 2**17
_TOKEN = re.compile(r"\w+|[^\w\s]")
_CUES = ("we", "our", "that", "because", "however", "thus", "therefore", "since", "show", "propose", "[", "(", "et")


@dataclass
class TaggerConfig:
    """Hyper-parameters of the component tagger (stored in the model directory)."""

    epochs: int = 6
    alpha: float = 2e-6
    b_weight: float = 1.5
    min_tokens: int = 3
    seed: int = 13
    extra: dict[str, Any] = field(default_factory=dict)


PROFILES: dict[str, dict[str, Any]] = {"quick": {"epochs": 3}, "full": {"epochs": 6}}


def _shape(word: str) -> str:
    out = re.sub(r"[A-Z]+", "A", re.sub(r"[a-z]+", "a", re.sub(r"[0-9]+", "0", word)))
    return out[:4]


def token_features(words: Sequence[str], sentence: int, sentences: int) -> list[list[str]]:
    """Feature strings of every word of one sentence."""
    low = [w.lower() for w in words]
    n = len(words)
    cues = [f"cue={c}" for c in _CUES if c in low]
    common = [f"len={min(n // 5, 12)}", f"sent={10 * sentence // max(sentences, 1)}", *cues]
    out = []
    for i, w in enumerate(low):
        prev1 = low[i - 1] if i else "<s>"
        prev2 = low[i - 2] if i > 1 else "<s>"
        next1 = low[i + 1] if i + 1 < n else "</s>"
        next2 = low[i + 2] if i + 2 < n else "</s>"
        out.append(
            [
                "bias",
                f"w={w}",
                f"p3={w[:3]}",
                f"s3={w[-3:]}",
                f"shape={_shape(words[i])}",
                f"w-1={prev1}",
                f"w-2={prev2}",
                f"w+1={next1}",
                f"w+2={next2}",
                f"b-={prev1}|{w}",
                f"b+={w}|{next1}",
                f"pos={min(i, 6)}",
                f"rpos={10 * i // max(n, 1)}",
                f"end={min(n - 1 - i, 6)}",
                *common,
            ]
        )
    return out


@dataclass
class _Sentence:
    spans: list[tuple[int, int]]
    features: list[list[str]]
    tags: np.ndarray | None = None


def sentences_of(doc: BratDocument, text_of: Callable[[int, int], str]) -> list[_Sentence]:
    """Token spans and feature strings of every sentence of ``doc`` (``text_of(start, end)`` slices the text)."""
    out = []
    for k, ((start, _), text) in enumerate(zip(doc.sentences, doc.sentence_texts, strict=True)):
        spans = [(start + m.start(), start + m.end()) for m in _TOKEN.finditer(text)]
        if spans:
            words = [text_of(s, e) for s, e in spans]
            out.append(_Sentence(spans, token_features(words, k, len(doc.sentences))))
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
    a run does not break one component into several.
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


def _hasher() -> Any:
    from sklearn.feature_extraction import FeatureHasher

    return FeatureHasher(n_features=N_FEATURES, input_type="string", alternate_sign=False)


class ComponentTagger:
    """Hashed lexical features + a linear model. Build one with :func:`train_tagger` or :meth:`load`."""

    def __init__(self, coef: np.ndarray, intercept: np.ndarray, config: TaggerConfig) -> None:
        self.coef = coef  # tags x features
        self.intercept = intercept
        self.config = config

    @classmethod
    def load(cls, model_dir: Path) -> ComponentTagger:
        """Rebuild a saved tagger.

        Raises:
            FileNotFoundError: ``model_dir`` lacks the weights or the configuration.
        """
        from safetensors.numpy import load_file

        for needed in (model_dir / WEIGHTS, model_dir / CONFIG):
            if not needed.is_file():
                raise FileNotFoundError(f"{needed}: not a component tagger directory (no {needed.name})")
        config = TaggerConfig(**json.loads((model_dir / CONFIG).read_text(encoding="utf-8")))
        state = load_file(str(model_dir / WEIGHTS))
        return cls(state["coef"].astype(np.float32), state["intercept"].astype(np.float32), config)

    def save(self, model_dir: Path) -> int:
        """Write the weights (float16) and the configuration; returns the bytes written."""
        from safetensors.numpy import save_file

        model_dir.mkdir(parents=True, exist_ok=True)
        save_file(
            {"coef": self.coef.astype(np.float16), "intercept": self.intercept.astype(np.float16)},
            str(model_dir / WEIGHTS),
        )
        (model_dir / CONFIG).write_text(json.dumps(asdict(self.config), indent=2) + "\n", encoding="utf-8")
        return (model_dir / WEIGHTS).stat().st_size + (model_dir / CONFIG).stat().st_size

    def tag(self, sentences: Sequence[_Sentence]) -> list[np.ndarray]:
        """Tag ids per sentence."""
        if not sentences:
            return []
        x = _hasher().transform([f for s in sentences for f in s.features])
        best = np.asarray((x @ self.coef.T) + self.intercept).argmax(axis=1)
        out, start = [], 0
        for s in sentences:
            out.append(best[start : start + len(s.spans)])
            start += len(s.spans)
        return out

    def predict(self, doc: BratDocument, text: str) -> list[Component]:
        """Components of ``doc`` (its sentences are used, its components ignored), ids ``T1``, ``T2``..."""
        sentences = sentences_of(doc, lambda s, e: text[s:e])
        found: list[tuple[str, int, int]] = []
        for sentence, tags in zip(sentences, self.tag(sentences), strict=True):
            # Runs of one or two tokens are mostly markup and formula debris, rarely components.
            found.extend(c for c in decode(sentence.spans, tags) if _tokens_in(sentence, c) >= self.config.min_tokens)
        ordered = sorted(found, key=lambda c: c[1])
        return [Component(f"T{i}", label, ((s, e),)) for i, (label, s, e) in enumerate(ordered, 1)]


@dataclass
class TaggerResult:
    """What :func:`train_tagger` returns besides the tagger."""

    best_epoch: int
    tune_f1: float
    history: list[dict[str, float]]
    seconds: float


def _exact_f1(pred: list[set[tuple[str, int, int]]], gold: list[set[tuple[str, int, int]]]) -> float:
    tp = sum(len(p & g) for p, g in zip(pred, gold, strict=True))
    n_pred, n_gold = sum(map(len, pred)), sum(map(len, gold))
    return 2 * tp / (n_pred + n_gold) if n_pred + n_gold else 0.0


def train_tagger(
    train: Mapping[str, tuple[BratDocument, str]],
    tune: Mapping[str, tuple[BratDocument, str]],
    config: TaggerConfig,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[ComponentTagger, TaggerResult]:
    """Train on ``train`` papers (document, text); keep the epoch with the best exact-span F1 on ``tune``."""
    from sklearn.linear_model import SGDClassifier

    started = time.perf_counter()
    random.seed(config.seed)

    def prepared(papers: Mapping[str, tuple[BratDocument, str]]) -> list[_Sentence]:
        out = []
        for doc, text in papers.values():
            for s in sentences_of(doc, lambda a, b, t=text: t[a:b]):  # type: ignore[misc]
                s.tags = gold_tags(s, list(doc.components.values()))
                out.append(s)
        return out

    train_s, tune_s = prepared(train), prepared(tune)
    x = _hasher().transform([f for s in train_s for f in s.features])
    y = np.concatenate([s.tags for s in train_s if s.tags is not None])
    # Component starts are rare but decide every exact span: weigh B tags up.
    weight = np.where(np.isin(y, [TAGS.index(f"B-{lab}") for lab in LABELS]), config.b_weight, 1.0)
    model = SGDClassifier(loss="log_loss", alpha=config.alpha, random_state=config.seed)
    classes = np.arange(len(TAGS))
    gold_tune = [set(decode(s.spans, s.tags)) for s in tune_s if s.tags is not None]
    best: tuple[float, int, np.ndarray, np.ndarray] = (-1.0, 0, np.zeros(0), np.zeros(0))
    history: list[dict[str, float]] = []
    rng = np.random.default_rng(config.seed)
    for epoch in range(1, config.epochs + 1):
        order = rng.permutation(x.shape[0])
        model.partial_fit(x[order], y[order], classes=classes, sample_weight=weight[order])
        tagger = ComponentTagger(model.coef_.astype(np.float32), model.intercept_.astype(np.float32), config)
        pred_tune = [
            {c for c in decode(s.spans, t) if _tokens_in(s, c) >= config.min_tokens}
            for s, t in zip(tune_s, tagger.tag(tune_s), strict=True)
        ]
        f1 = _exact_f1(pred_tune, gold_tune) if tune_s else float(epoch)
        history.append({"epoch": epoch, "tune_exact_f1": f1})
        if f1 > best[0]:
            best = (f1, epoch, tagger.coef.copy(), tagger.intercept.copy())
        if progress:
            progress("train", epoch, config.epochs)
    tagger = ComponentTagger(best[2], best[3], config)
    return tagger, TaggerResult(best[1], best[0], history, time.perf_counter() - started)


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
