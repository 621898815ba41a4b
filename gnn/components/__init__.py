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

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gnn.bam import BratDocument, Component, Relation, documents_from_records
from gnn.bam import evaluate as evaluate_bam
from gnn.encoder import TextEncoder
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
from ontology.errors import ApiError, LoaderError, ModelError
from ontology.records import CorpusBundle, EdgeRecord, NodeRecord

if TYPE_CHECKING:
    from gnn.components.net import ComponentTagger, TokenVectors
    from gnn.trainer import Schedule

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
        join_citations: Join an author-year citation that the tagger cut at its comma
            (:func:`join_citations`).
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
    join_citations: bool = False


PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"epochs": 2},
    "full": {"epochs": 12, "join_citations": True},
}


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


_YEAR = re.compile(r"(?:1[89]|20)\d\d[a-z]?")


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


def join_citations(sentence: _Sentence, found: Sequence[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """``found`` with every author-year citation cut at its comma joined again: a component ending in a
    word (not a number), then one ``,`` token, then a component of the same label that is one year
    token ("Desbrun and Gascuel" + "1995" -> "Desbrun and Gascuel, 1995").

    The gold components of A01-A32 never hold such a pair (92 of them hold the whole citation), while
    the tagger cuts it in two, most often in the author-year papers; a citation of several years
    ("2002, 2004") is left as it is.
    """
    index = {start: i for i, (start, _) in enumerate(sentence.spans)}
    ends = {end: i for i, (_, end) in enumerate(sentence.spans)}
    out: list[tuple[str, int, int]] = []
    for comp in sorted(found, key=lambda c: (c[1], c[2])):
        if out:
            label, start, end = out[-1]
            last, first = ends.get(end), index.get(comp[1])
            if (
                comp[0] == label
                and last is not None
                and first == last + 2
                and sentence.words[last + 1] == ","
                and first == ends.get(comp[2])  # the second component is one token
                and _YEAR.fullmatch(sentence.words[first])
                and not any(ch.isdigit() for ch in sentence.words[last])
            ):
                out[-1] = (label, start, comp[2])
                continue
        out.append(comp)
    return out


def _tokens_in(sentence: _Sentence, component: tuple[str, int, int]) -> int:
    return sum(component[1] <= s and e <= component[2] for s, e in sentence.spans)


def schedule(c: TaggerConfig) -> Schedule:
    """The tagger's recipe: Adam, gradients clipped at norm 5, averaged weights competing from ``average_from``.

    Exact-span F1 on the tune papers swings by several points from one epoch (and one seed) to the
    next; the average of the later epochs' weights is steadier, so after each epoch both compete.
    """
    from gnn.trainer import Schedule

    return Schedule(c.epochs, c.lr, optimizer="adam", decay="none", clip=5.0, average_from=c.average_from, seed=c.seed)


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


class ComponentsTask(Task[TaggerConfig, ComponentExample, "ComponentTagger"]):
    """The Sci-Arg argument component tagger (BiLSTM-CRF over frozen encoder word vectors).

    The examples are the gold components of each paper, grouped by paper; the tagger trains on
    whole papers (A01-A20, the epoch chosen on A21-A24, A25-A32 scored with BAM in the card) and
    is scored on whole papers: BAM components exact-span F1 (C), argumentative sentences (S) and
    boundary similarity (B). Asked about a text alone, it answers the type of the component it
    finds there (``none``: none).
    """

    name = TASK_NAME
    model_name = MODEL_NAME
    version = 2
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
        from gnn.components.net import TokenVectors

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
        from gnn.components.net import train_tagger

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

        from gnn.components.net import train_tagger

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
        from gnn.components.net import ComponentTagger

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
