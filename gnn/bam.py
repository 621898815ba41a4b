"""BAM-style evaluation of argument mining on scientific documents (Ruosch, Sarasua & Bernstein 2022).

Four measures compare predicted Sci-Arg annotations with gold ones on the same texts:

* **S** -- argumentative sentence classification: every gold sentence (the loader's deterministic
  sentence splitter) is *argumentative* when some component overlaps it, else *none*; micro-F1
  over all sentences of all documents (= accuracy over the two labels). The F1 of the
  argumentative class alone is reported too.
* **B** -- boundary similarity (:mod:`gnn.segmentation`, Fournier 2013, ``n_t = 2``) between the
  predicted and gold segmentations of a document's tokens (words and punctuation marks inside its
  sentences; each component, or fragment of a discontinuous one, is a segment, and so is each
  stretch between components); the mean over documents, and the pooled value.
* **C** -- component classification, exact spans as in NER: a predicted component is right when a
  gold component has the same label and exactly the same character spans; micro P/R/F1.
* **R** -- relation prediction: (source spans, label, target spans) triples, micro P/R/F1;
  symmetric labels (``semantically_same``, ``parts_of_same``) are compared unordered.

The most-frequent-label baseline predicts, for every gold sentence, one component with the most
frequent gold component label (when *argumentative* is the majority sentence label), each
supporting the next with the most frequent gold relation label, and is scored like any system.

Inputs are the records the Sci-Arg loader produces (Document, Sentence, Proposition, relation
nodes and AIF edges), so the brat parsing and its checks live in one place.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gnn.metrics import PRF
from gnn.segmentation import BoundaryCounts, boundary_counts, masses_from_labels
from ontology.errors import ClientError, LoaderError
from ontology.formats.sciarg import load_paper
from ontology.records import (
    DiscourseRecord,
    EdgeRecord,
    NodeRecord,
    PropositionRecord,
    RelationRecord,
    SentenceRecord,
)

SYMMETRIC = frozenset({"semantically_same", "parts_of_same"})
ARGUMENTATIVE, NONE = "argumentative", "none"
_TOKEN = re.compile(r"\w+|[^\w\s]")

Spans = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Component:
    """An argument component: brat id, label and character spans (several when discontinuous)."""

    id: str
    label: str
    spans: Spans


@dataclass(frozen=True)
class Relation:
    """A relation between two components of the same document (brat ``Arg1`` -> ``Arg2``)."""

    label: str
    source: str
    target: str


@dataclass
class BratDocument:
    """One paper's annotation: its sentences (character spans), components and relations."""

    name: str
    sentences: list[tuple[int, int]] = field(default_factory=list)
    sentence_texts: list[str] = field(default_factory=list)
    components: dict[str, Component] = field(default_factory=dict)
    relations: list[Relation] = field(default_factory=list)

    def tokens(self) -> list[tuple[int, int]]:
        """Character spans of the words and punctuation marks inside the sentences, in order."""
        out: list[tuple[int, int]] = []
        for (start, _), text in zip(self.sentences, self.sentence_texts, strict=True):
            out.extend((start + m.start(), start + m.end()) for m in _TOKEN.finditer(text))
        return out


def parse_spans(raw: str) -> Spans:
    """``"12 30;35 40"`` -> ``((12, 30), (35, 40))``."""
    return tuple((int(s), int(e)) for s, e in (fragment.split() for fragment in raw.split(";")))


def documents_from_records(nodes: Iterable[NodeRecord], edges: Iterable[EdgeRecord]) -> dict[str, BratDocument]:
    """Group Sci-Arg loader records into documents keyed by the paper's name (``A01``)."""
    docs: dict[str, BratDocument] = {}
    by_id: dict[str, str] = {}
    node_list = list(nodes)
    for node in node_list:
        if isinstance(node, DiscourseRecord) and node.kind == "Document":
            docs[node.local_id] = BratDocument(node.local_id)
            by_id[node.id] = node.local_id
    sentences: dict[str, list[SentenceRecord]] = {}
    relations: dict[str, RelationRecord] = {}
    local: dict[str, tuple[str, str]] = {}
    for node in node_list:
        doc = by_id.get(getattr(node, "discourse", None) or "")
        if doc is None:
            continue
        if isinstance(node, SentenceRecord):
            sentences.setdefault(doc, []).append(node)
        elif isinstance(node, PropositionRecord) and node.spans and node.local_id:
            docs[doc].components[node.local_id] = Component(
                node.local_id, node.scheme_label or "", parse_spans(node.spans)
            )
            local[node.id] = (doc, node.local_id)
        elif isinstance(node, RelationRecord):
            relations[node.id] = node
    for doc, rows in sentences.items():
        rows.sort(key=lambda s: s.position or 0)
        docs[doc].sentences = [(s.char_start or 0, s.char_end or 0) for s in rows]
        docs[doc].sentence_texts = [s.text or "" for s in rows]
    ends: dict[str, dict[str, str]] = {rid: {} for rid in relations}
    for edge in edges:
        if edge.target in relations and edge.source in local:
            ends[edge.target]["source"] = edge.source
        elif edge.source in relations and edge.target in local:
            ends[edge.source]["target"] = edge.target
    for rid, rel in relations.items():
        if "source" in ends[rid] and "target" in ends[rid]:
            doc, source = local[ends[rid]["source"]]
            docs[doc].relations.append(Relation(rel.scheme_label or "", source, local[ends[rid]["target"]][1]))
    return docs


def sentence_labels(doc: BratDocument, components: Iterable[Component]) -> list[str]:
    """For each sentence of ``doc``: argumentative when a component span overlaps it."""
    spans = sorted(span for c in components for span in c.spans)
    return [ARGUMENTATIVE if any(s < end and e > start for s, e in spans) else NONE for start, end in doc.sentences]


def token_segments(tokens: Sequence[tuple[int, int]], components: Iterable[Component]) -> list[object]:
    """Segment key of every token: ``(component id, fragment)`` inside a component, else the gap it follows."""
    owner: list[object] = [None] * len(tokens)
    starts = [s for s, _ in tokens]
    for comp in sorted(components, key=lambda c: c.spans):
        for k, (s, e) in enumerate(comp.spans):
            i = bisect.bisect_left(starts, s)
            if i > 0 and tokens[i - 1][1] > s:
                i -= 1  # a span starting inside a token takes that token
            while i < len(tokens) and tokens[i][0] < e:
                if owner[i] is None:
                    owner[i] = (comp.id, k)
                i += 1
    # Stretches between components are segments of their own; number them so that two
    # components separated by nothing still differ from the gap labels.
    out: list[object] = []
    gap = 0
    for i, key in enumerate(owner):
        if key is None:
            if i and owner[i - 1] is not None:
                gap += 1
            out.append(("", gap))
        else:
            out.append(key)
    return out


def relation_triples(
    doc: BratDocument, components: Mapping[str, Component], relations: Iterable[Relation]
) -> set[tuple[object, ...]]:
    """(source spans, label, target spans) per relation; symmetric labels as an unordered pair."""
    out: set[tuple[object, ...]] = set()
    for rel in relations:
        src, tgt = components.get(rel.source), components.get(rel.target)
        if src is None or tgt is None:
            raise LoaderError(f"{doc.name}: relation {rel} refers to a component it does not define")
        if rel.label in SYMMETRIC:
            out.add((frozenset({src.spans, tgt.spans}), rel.label))
        else:
            out.add((src.spans, rel.label, tgt.spans))
    return out


@dataclass
class BamScores:
    """The four measures of one system over a set of documents."""

    documents: int
    s: PRF  # micro over both sentence labels (precision = recall = F1 = accuracy)
    s_argumentative: PRF
    b_mean: float
    b_pooled: BoundaryCounts
    c: PRF
    c_by_label: dict[str, PRF]
    r: PRF
    r_by_label: dict[str, PRF]

    def as_dict(self) -> dict[str, object]:
        """Headline figures (S, B, C, R) and the details, JSON-ready."""
        return {
            "S": self.s.f1,
            "B": self.b_mean,
            "C": self.c.f1,
            "R": self.r.f1,
            "documents": self.documents,
            "sentences": self.s.as_dict(),
            "sentences_argumentative": self.s_argumentative.as_dict(),
            "boundary": {
                "mean": self.b_mean,
                "pooled": self.b_pooled.similarity,
                "matches": self.b_pooled.matches,
                "additions": self.b_pooled.additions,
                "transpositions": self.b_pooled.transpositions,
            },
            "components": self.c.as_dict(),
            "components_by_label": {k: v.as_dict() for k, v in sorted(self.c_by_label.items())},
            "relations": self.r.as_dict(),
            "relations_by_label": {k: v.as_dict() for k, v in sorted(self.r_by_label.items())},
        }


def _by_label(gold: Iterable[tuple], pred: Iterable[tuple], label_of: int) -> dict[str, PRF]:
    g, p = set(gold), set(pred)
    labels = {x[label_of] for x in g | p}
    return {
        lab: PRF.from_counts(
            len({x for x in g & p if x[label_of] == lab}),
            len({x for x in p if x[label_of] == lab}),
            len({x for x in g if x[label_of] == lab}),
        )
        for lab in labels
    }


def evaluate(pred: Mapping[str, BratDocument], gold: Mapping[str, BratDocument]) -> BamScores:
    """Score predicted documents against gold ones (documents are matched by name).

    Sentences and tokens come from the gold documents, so a prediction only needs its
    components and relations. A gold document without a prediction counts as predicting nothing.

    Raises:
        ClientError: A predicted document that is not in the gold set.
        LoaderError: A relation whose argument is not a component of its document (names both).
    """
    extra = sorted(set(pred) - set(gold))
    if extra:
        raise ClientError(f"predicted documents without gold: {extra[:5]}")
    s_tp = s_n = a_tp = a_pred = a_gold = 0
    b_values: list[float] = []
    pooled = BoundaryCounts()
    c_gold: set[tuple] = set()
    c_pred: set[tuple] = set()
    r_gold: set[tuple] = set()
    r_pred: set[tuple] = set()
    for name in sorted(gold):
        g = gold[name]
        p = pred.get(name, BratDocument(name))
        gl = sentence_labels(g, g.components.values())
        pl = sentence_labels(g, p.components.values())
        s_n += len(gl)
        s_tp += sum(x == y for x, y in zip(gl, pl, strict=True))
        a_gold += gl.count(ARGUMENTATIVE)
        a_pred += pl.count(ARGUMENTATIVE)
        a_tp += sum(x == y == ARGUMENTATIVE for x, y in zip(gl, pl, strict=True))
        tokens = g.tokens()
        if tokens:
            counts = boundary_counts(
                masses_from_labels(token_segments(tokens, p.components.values())),
                masses_from_labels(token_segments(tokens, g.components.values())),
            )
            b_values.append(counts.similarity)
            pooled = pooled + counts
        c_gold |= {(name, c.label, c.spans) for c in g.components.values()}
        c_pred |= {(name, c.label, c.spans) for c in p.components.values()}
        r_gold |= {(name, *t) for t in relation_triples(g, g.components, g.relations)}
        r_pred |= {(name, *t) for t in relation_triples(p, p.components, p.relations)}
    return BamScores(
        documents=len(gold),
        s=PRF.from_counts(s_tp, s_n, s_n),
        s_argumentative=PRF.from_counts(a_tp, a_pred, a_gold),
        b_mean=sum(b_values) / len(b_values) if b_values else 1.0,
        b_pooled=pooled,
        c=PRF.from_counts(len(c_gold & c_pred), len(c_pred), len(c_gold)),
        c_by_label=_by_label(c_gold, c_pred, 1),
        r=PRF.from_counts(len(r_gold & r_pred), len(r_pred), len(r_gold)),
        r_by_label=_by_label(r_gold, r_pred, 2),
    )


def majority_baseline(gold: Mapping[str, BratDocument]) -> dict[str, BratDocument]:
    """The most-frequent-label system: see the module docstring."""
    sentence_counts: Counter[str] = Counter()
    component_counts: Counter[str] = Counter()
    relation_counts: Counter[str] = Counter()
    for doc in gold.values():
        sentence_counts.update(sentence_labels(doc, doc.components.values()))
        component_counts.update(c.label for c in doc.components.values())
        relation_counts.update(r.label for r in doc.relations)
    out: dict[str, BratDocument] = {}
    argumentative = bool(sentence_counts) and sentence_counts.most_common(1)[0][0] == ARGUMENTATIVE
    comp_label = component_counts.most_common(1)[0][0] if component_counts else "own_claim"
    rel_label = relation_counts.most_common(1)[0][0] if relation_counts else "supports"
    for name, doc in gold.items():
        pred = BratDocument(name, list(doc.sentences), list(doc.sentence_texts))
        if argumentative:
            for i, span in enumerate(doc.sentences, start=1):
                pred.components[f"T{i}"] = Component(f"T{i}", comp_label, (span,))
            pred.relations = [Relation(rel_label, f"T{i}", f"T{i + 1}") for i in range(1, len(doc.sentences))]
        out[name] = pred
    return out


# -- brat directories --------------------------------------------------------------------------------


def read_brat_dir(directory: Path, texts: Path | None = None) -> dict[str, BratDocument]:
    """Documents of the ``.ann`` files of ``directory``, keyed by file stem.

    Both gold and predicted directories are read with the Sci-Arg reader (one parser, one set of
    checks). A predicted ``.ann`` is read against the text next to it when there is one, else
    against the gold text of the same name, so a prediction directory may hold ``.ann`` files only.

    Args:
        directory: A brat directory (``.ann`` files, usually each with its ``.txt``).
        texts: Where to find a ``.txt`` that ``directory`` lacks (the gold directory).

    Raises:
        LoaderError: Not a directory, no ``.ann`` file, a missing text, or an annotation the
            Sci-Arg reader rejects (the message names the file and line).
    """
    if not directory.is_dir():
        raise LoaderError(f"{directory}: not a directory")
    anns = sorted(directory.glob("*.ann"))
    if not anns:
        raise LoaderError(f"{directory}: no brat .ann files")
    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    for ann in anns:
        txt = ann.with_suffix(".txt")
        if not txt.is_file() and texts is not None:
            txt = texts / txt.name
        if not txt.is_file():
            raise LoaderError(f"{ann}: no text {ann.with_suffix('.txt').name} next to it or in the gold directory")
        load_paper(ann.stem, ann, txt, nodes, edges)
    return documents_from_records(nodes, edges)


@dataclass(frozen=True)
class BamEvaluation:
    """S/B/C/R of a prediction directory and of the most-frequent-label baseline, against gold.

    Attributes:
        pred: The prediction directory.
        gold: The gold directory.
        documents: Gold documents scored.
        missing_predictions: Gold documents without a predicted ``.ann`` (scored as predicting nothing).
        system: The scores of the predictions.
        baseline: The scores of the most-frequent-label baseline.
    """

    pred: Path
    gold: Path
    documents: int
    missing_predictions: list[str]
    system: BamScores
    baseline: BamScores

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (``argweb evaluate bam --json``)."""
        return {
            "pred": str(self.pred),
            "gold": str(self.gold),
            "documents": self.documents,
            "missing_predictions": self.missing_predictions,
            "system": self.system.as_dict(),
            "baseline": self.baseline.as_dict(),
        }


def evaluate_dirs(pred: Path, gold: Path) -> BamEvaluation:
    """S/B/C/R of the predictions in ``pred`` and of the most-frequent-label baseline, against ``gold``.

    Every gold document is scored; a gold document without a predicted ``.ann`` counts as a
    prediction of nothing.

    Raises:
        LoaderError: Unreadable input, or a predicted document with no gold counterpart.
    """
    gold_docs = read_brat_dir(gold)
    pred_docs = read_brat_dir(pred, texts=gold)
    extra = sorted(set(pred_docs) - set(gold_docs))
    if extra:
        raise LoaderError(f"{pred}: predicted document(s) {extra[:5]} have no gold .ann in {gold}")
    return BamEvaluation(
        pred=pred,
        gold=gold,
        documents=len(gold_docs),
        missing_predictions=sorted(set(gold_docs) - set(pred_docs)),
        system=evaluate(pred_docs, gold_docs),
        baseline=evaluate(majority_baseline(gold_docs), gold_docs),
    )
