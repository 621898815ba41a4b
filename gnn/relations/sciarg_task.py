"""Sci-Arg relations with gold components: supports, contradicts, parts_of_same, semantically_same.

Papers come from the records of the Sci-Arg loader (components are Propositions with their brat
``T`` id, component type, character span and sentence ids; relations are Relation records with
AIF edges ``Arg1 -> rel -> Arg2``). Candidate pairs are the ordered component pairs within
``window`` components of each other (99% of the gold relations at 8). Symmetric types are labelled
in both directions; decoding keeps one label per unordered pair. Scored with BAM's R: micro-F1
over (subject span, type, object span) triples, symmetric types unordered.
"""

from __future__ import annotations

import bisect
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from gnn.relations import family
from gnn.relations.argmap import edge_lists
from gnn.relations.heads import HeadChoice
from gnn.relations.metrics import relation_macro, triple_scores
from gnn.relations.qt30_task import biased_scores, coordinate_biases, decode
from gnn.relations.sciarg_features import (
    EDGE_TYPES,
    LABELS,
    N_BASE_PAIR_FEATURES,
    N_BASE_PROP_FEATURES,
    SYMMETRIC,
    TYPES,
    Comp,
    Paper,
    PaperTensors,
    edge_width,
    fit_edge_vocab,
    fit_vocab,
    paper_tensors,
    slice_text,
)
from gnn.relations.text import TextVectors
from gnn.weights import half_state, round_to_half
from ontology.errors import ModelError
from ontology.records import EdgeRecord, NodeRecord, PropositionRecord, RelationRecord, SentenceRecord

__all__ = ["LABELS", "SYMMETRIC", "TYPES", "Comp", "Paper", "PaperTensors", "paper_tensors", "papers_from_records"]

HELDOUT = tuple(f"A{k:02d}" for k in range(25, 33))
DEV = tuple(f"A{k:02d}" for k in range(21, 25))
PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"epochs": 8, "text": "lsa", "window": 8, "lr": 3e-3},
    # ``context``: a second network that also reads the components' contextual vectors (train_sciarg).
    # ``refit``: after the epochs are chosen and the biases tuned on the dev papers, the networks
    # are trained again on the train and dev papers together (train_sciarg).
    "full": {"epochs": 16, "text": "encoder", "window": 8, "lr": 3e-3, "context": True, "refit": True},
}
_SENT_NO = re.compile(r":S:(\d+)$")


def papers_from_records(nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> list[Paper]:
    """Group Sci-Arg loader records into papers (components sorted by character offset)."""
    papers: dict[str, Paper] = {}
    comp_of: dict[str, tuple[str, str]] = {}
    rels: list[RelationRecord] = []
    pieces: dict[str, list[tuple[int, int, str]]] = {}
    for node in nodes:
        if isinstance(node, SentenceRecord) and node.discourse and node.char_start is not None:
            pieces.setdefault(node.discourse, []).append((node.char_start, node.char_end or 0, node.text or ""))
        elif isinstance(node, PropositionRecord) and node.discourse:
            paper = papers.setdefault(node.discourse, Paper(node.discourse.rsplit(":", 1)[-1]))
            m = _SENT_NO.search(node.sentences[0]) if node.sentences else None
            paper.comps.append(
                Comp(
                    node.local_id or node.id,
                    node.scheme_label or "",
                    node.text or "",
                    node.char_start or 0,
                    node.char_end or 0,
                    int(m.group(1)) if m else -1,
                    node.id,
                )
            )
            comp_of[node.id] = (node.discourse, node.local_id or node.id)
        elif isinstance(node, RelationRecord) and node.discourse:
            rels.append(node)
    into, out = edge_lists(edges)
    for discourse, paper in papers.items():
        paper.comps.sort(key=lambda c: (c.start, c.end))
        paper.pieces = sorted(pieces.get(discourse, []))
    index = {(d, c.local_id): k for d, p in papers.items() for k, c in enumerate(p.comps)}
    for rel in rels:
        owner = papers.get(rel.discourse or "")
        if owner is None or rel.scheme_label not in LABELS:
            continue
        for s in into.get(rel.id, []):
            for t in out.get(rel.id, []):
                if s in comp_of and t in comp_of:
                    owner.gold[(index[comp_of[s]], index[comp_of[t]])] = rel.scheme_label
    return list(papers.values())


DIRECTED = ("supports", "contradicts")


def decode_paper(
    pairs: np.ndarray, probs: np.ndarray, bias: Sequence[float], one_target: bool = True
) -> dict[tuple[int, int], tuple[str, float]]:
    """Relations of one paper: (Arg1 index, Arg2 index) -> (label, probability).

    One label per unordered pair (see :func:`gnn.relations.qt30_task.decode`). With ``one_target``
    the annotation's shape is enforced, most confident first: a component keeps one outgoing
    supports/contradicts (96% of the components that support or contradict anything have exactly
    one target), and at most one parts_of_same partner before and one after it (99% of the
    fragments of a split component are chained that way).
    """
    rels = decode(pairs, probs, bias, LABELS)
    if not one_target or not rels:
        return rels
    scores = biased_scores(probs, bias)
    # The rows of the decoded pairs, found by search: tuning decodes each paper hundreds of times,
    # and a dictionary of every candidate pair per call cost more than the decoding itself.
    width = int(pairs.max()) + 1
    codes = pairs[:, 0].astype(np.int64) * width + pairs[:, 1]
    order = np.argsort(codes, kind="stable")
    keys = np.array(list(rels), dtype=np.int64)
    rows = order[np.searchsorted(codes[order], keys[:, 0] * width + keys[:, 1])]
    labels = np.array([LABELS.index(lab) for lab, _ in rels.values()])
    margins = (scores[rows, labels] - scores[rows, 0]).tolist()
    ranked = [kv for _, kv in sorted(zip(margins, rels.items(), strict=True), key=lambda mk: -mk[0])]
    has_target: set[int] = set()
    has_later: set[int] = set()
    has_earlier: set[int] = set()
    out = {}
    for (i, j), (lab, p) in ranked:
        if lab in DIRECTED:
            if i in has_target:
                continue
            has_target.add(i)
        elif lab == "parts_of_same":
            lo, hi = min(i, j), max(i, j)
            if lo in has_later or hi in has_earlier:
                continue
            has_later.add(lo)
            has_earlier.add(hi)
        out[(i, j)] = (lab, p)
    return out


def _item(t: PaperTensors, emb: np.ndarray) -> Any:
    """The graph the network reads of a paper: its components and candidate pairs, no locutions."""
    from gnn.relations.model import relation_graph

    prim = t.prop_feats if t.context is None else np.concatenate([t.prop_feats, t.context], axis=1)
    return relation_graph(emb, prim, t.edges, t.pairs, t.pair_feats, t.labels)


CONTEXT_LAYERS = (3, 6)
CONTEXT_MAX_LENGTH = 256
TOKEN_CACHE = "sciarg-tokens"  # beside the component tagger's vectors (its entries cover whole papers)


def _overlapped(sentences: Sequence[Any], comps: Sequence[Comp]) -> list[Any]:
    """The sentences (in text order, with token spans) that some component overlaps."""
    starts = [s.spans[0][0] for s in sentences]
    keep: set[int] = set()
    for c in comps:
        k = max(bisect.bisect_right(starts, c.start) - 1, 0)
        while k < len(sentences) and starts[k] < c.end:
            if sentences[k].spans[-1][1] > c.start:
                keep.add(k)
            k += 1
    return [sentences[k] for k in sorted(keep)]


def context_vectors(papers: Sequence[Paper], encoder: Any) -> list[np.ndarray]:
    """Each component's words read in their sentences: the mean of the encoder's word vectors over its span.

    A component's own embedding sees its text alone; a fragment such as "The skeleton-driven
    deformation" (continued two clauses later by "is") or a claim opened by "therefore" reads
    differently inside its sentence. The word vectors are those the component tagger reads (frozen
    encoder, layers :data:`CONTEXT_LAYERS`, one sentence per input), computed only for the
    sentences a component overlaps (38% of Sci-Arg's sentences, 53% of its words) and cached per
    paper next to the encoder's text embeddings when the encoder has a cache.

    Returns:
        One ``(components, dim)`` array per paper (zeros for a component outside every sentence).
    """
    from gnn.bam import BratDocument
    from gnn.components import sentences_of
    from gnn.components.net import TokenVectors

    cache = getattr(encoder, "cache_dir", None)
    vectors = TokenVectors(encoder, CONTEXT_LAYERS, CONTEXT_MAX_LENGTH, Path(cache) / TOKEN_CACHE if cache else None)
    out = []
    for paper in papers:
        doc = BratDocument(paper.name, [(s, e) for s, e, _ in paper.pieces], [t for _, _, t in paper.pieces])
        sentences = _overlapped(
            sentences_of(doc, lambda a, b, p=paper: slice_text(p, a, b)),  # type: ignore[misc]
            paper.comps,
        )
        words = vectors.of(sentences) if sentences else []
        spans = np.array([sp for s in sentences for sp in s.spans], dtype=np.int64).reshape(-1, 2)
        flat = np.concatenate(words) if words else np.zeros((0, vectors.dim), np.float32)
        ctx = np.zeros((len(paper.comps), vectors.dim), np.float32)
        for k, c in enumerate(paper.comps):
            inside = (spans[:, 0] < c.end) & (spans[:, 1] > c.start)
            if inside.any():
                ctx[k] = flat[inside].mean(axis=0)
        out.append(ctx)
    return out


def _add_context(tensors: Sequence[PaperTensors], papers: Sequence[Paper], encoder: Any) -> int:
    """Give each paper's tensors its :func:`context_vectors`; returns their width."""
    vectors = context_vectors(papers, encoder)
    for t, ctx in zip(tensors, vectors, strict=True):
        t.context = ctx
    return vectors[0].shape[1] if vectors else 0


def _triples(paper_name: str, rels: dict[tuple[int, int], str]) -> list[tuple[Any, str, Any]]:
    return [((paper_name, i), lab, (paper_name, j)) for (i, j), lab in rels.items()]


def score(tensors: Sequence[PaperTensors], probs: Sequence[np.ndarray], bias: Sequence[float]) -> dict[str, Any]:
    """BAM's R (micro over triples, per type) and the label macro-F1 of decoded predictions."""
    gold, pred, rows = [], [], []
    for t, p in zip(tensors, probs, strict=True):
        rels = {k: v[0] for k, v in decode_paper(t.pairs, p, bias).items()}
        gold += _triples(t.name, t.gold)
        pred += _triples(t.name, rels)
        sym_gold = {(min(k), max(k)) if v in SYMMETRIC else k: v for k, v in t.gold.items()}
        sym_pred = {(min(k), max(k)) if v in SYMMETRIC else k: v for k, v in rels.items()}
        rows.append((sym_gold, sym_pred))
    return {"R": triple_scores(gold, pred, SYMMETRIC), "relations": relation_macro(rows, LABELS[1:])}


def tune(tensors: Sequence[PaperTensors], probs: Sequence[np.ndarray], rounds: int = 2) -> list[float]:
    """Coordinate search of per-label log-biases maximising micro R on ``tensors``."""

    def value(bias: list[float]) -> float:
        return float(score(tensors, probs, bias)["R"]["micro"]["f1"])

    # Down to -4: a class-weighted model (the baseline) over-predicts every relation.
    grid = (-4.0, -3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
    return coordinate_biases(value, len(LABELS), range(1, len(LABELS)), grid, rounds)[0]


def _baseline(
    train: Sequence[PaperTensors], dev: Sequence[PaperTensors], test: Sequence[PaperTensors], seed: int
) -> dict[str, Any]:
    """The TF-IDF + LR baseline on the models' candidate pairs, its biases tuned on ``dev`` like theirs."""

    start = time.perf_counter()
    probs = family.tfidf_baseline([p.pair_group for p in train], len(LABELS), seed)
    bias = tune(dev, probs([p.pair_group for p in dev])) if dev else [0.0] * len(LABELS)
    return {
        **score(test, probs([p.pair_group for p in test]), bias),
        "bias": dict(zip(LABELS, bias, strict=True)),
        "seconds": round(time.perf_counter() - start, 1),
    }


def _dev_score(dev: Sequence[PaperTensors]) -> Callable[[list[np.ndarray]], float]:
    """Model selection score: micro R F1 at zero bias."""
    return lambda probs: score(dev, probs, [0.0] * len(LABELS))["R"]["micro"]["f1"]


DIMS = {
    "prim_dim": N_BASE_PROP_FEATURES,
    "sec_dim": 0,
    "pair_dim": N_BASE_PAIR_FEATURES,
    "n_edge_types": len(EDGE_TYPES),
    "n_labels": len(LABELS),
    "direct": True,
}
# A component supports or contradicts one claim (96% of those with any target) and a fragment
# continues in at most one later part (99%): the decoder keeps one of each, so training makes the
# candidates compete too. With seeds 0 / 1, held-out R went from 0.673 / 0.661 to 0.697 / 0.707
# with these terms (0.690 / 0.685 with them but without the component-edge node features).
HEAD_CHOICES = (
    HeadChoice((LABELS.index("supports"), LABELS.index("contradicts"))),
    HeadChoice((LABELS.index("parts_of_same"),), forward_only=True),
)
# Sci-Arg papers are long (about 6,000 candidate pairs each) and few: one per step, or 20 papers
# give too few optimisation steps.
FAMILY: family.Family[PaperTensors] = family.Family(
    "Sci-Arg", "papers", "sciarg", DIMS, _item, _dev_score, graphs_per_batch=1, head_choices=HEAD_CHOICES
)


def _family(vocab_size: int, edge_features: int, context_dim: int = 0) -> family.Family[PaperTensors]:
    """:data:`FAMILY` with the node and pair widths of a context vocabulary of ``vocab_size`` words,
    ``edge_features`` component-edge features and ``context_dim`` contextual vector dimensions."""
    dims = {
        **DIMS,
        "prim_dim": N_BASE_PROP_FEATURES + vocab_size + edge_features + context_dim,
        "pair_dim": N_BASE_PAIR_FEATURES + vocab_size,
    }
    return replace(FAMILY, dims=dims)


def train_sciarg(
    papers: Sequence[Paper],
    out_dir: Path,
    options: family.TrainOptions,
    *,
    dev: Sequence[str] = DEV,
    heldout: Sequence[str] = HELDOUT,
) -> dict[str, Any]:
    """Train on A01-A20, select and tune on A21-A24, report R on the held-out A25-A32.

    Papers outside A01-A32 (other inputs) are used for training. With the ``refit`` profile
    setting, the networks are then trained again on A01-A24 for the epochs chosen on A21-A24, and
    keep the biases tuned there; the held-out figures of the networks before that refit are
    reported too (``heldout_before_refit``).

    Args:
        papers: Every paper of the run.
        out_dir: Model directory.
        options: How the run trains.
        dev: Names of the papers that choose the epochs and tune the biases (experiments on other
            splits, e.g. a simulation inside A01-A24).
        heldout: Names of the papers that are only scored.
    """
    from gnn.relations.train import predict_probs

    hp = family.profile_hp(PROFILES, options.profile, options.epochs)
    start = time.perf_counter()
    train_papers = [p for p in papers if p.name not in heldout and p.name not in dev]
    if not train_papers:
        raise ModelError("Sci-Arg: no training papers (A01-A20 or papers outside A01-A32)")
    hp["vocab"] = fit_vocab(train_papers, hp["window"]) if hp.get("context_words", True) else []
    hp["edge_vocab"] = fit_edge_vocab(train_papers)
    tensors = [paper_tensors(p, hp["window"], hp["vocab"], hp["edge_vocab"]) for p in papers]
    context_dim = 0
    if hp.get("context") and hp["text"] == "encoder" and options.encoder is not None:
        options.log("Sci-Arg: contextual word vectors of the components")
        context_dim = _add_context(tensors, papers, options.encoder)
    hp["context"] = bool(context_dim)
    spec = _family(len(hp["vocab"]), edge_width(hp["edge_vocab"]), context_dim)
    # With the contextual vectors, two networks: one reads each component's own embedding and
    # features (the node features before the contextual columns), one reads the contextual vectors
    # too. Alone, the contextual network scored higher on A21-A24 (R 0.707-0.714 over seeds 0-2
    # against 0.694-0.703) but lower on the held-out A25-A32 (0.672-0.682 against 0.695-0.699); the
    # geometric mean of one of each scored 0.717-0.729 on A21-A24 and 0.706-0.716 held-out, above a
    # pair of plain (0.704-0.712 / 0.697-0.703) or of contextual networks (0.712-0.720 /
    # 0.688-0.692) and three plain ones (0.715 / 0.690).
    members = [{"prim_dim": spec.dims["prim_dim"] - context_dim}, {}] if context_dim else [{}]
    parts: dict[str, list[PaperTensors]] = {"train": [], "dev": [], "test": []}
    for t in tensors:
        parts["test" if t.name in heldout else "dev" if t.name in dev else "train"].append(t)
    trained = family.train_gnn(parts, hp, options, out_dir, spec, members=members, refit=bool(hp.get("refit")))
    model, config, items = trained.model, trained.config, trained.items
    # Stored in float16, so that the packaged models stay within 20 MB; tuned and scored as stored.
    round_to_half(model)
    if trained.selection_model is not None:
        round_to_half(trained.selection_model)
    # A refit model has trained on the dev papers: the biases are tuned on the selected networks.
    bias = tune(parts["dev"], predict_probs(trained.tuning_model, items["dev"], options.device))
    hp["refit"] = trained.refit_epochs is not None
    if trained.refit_epochs is not None:
        hp["refit_epochs"] = trained.refit_epochs
    family.save_stored(out_dir, spec, half_state(model.state_dict()), {"config": config, "bias": bias, "hp": hp})
    metrics: dict[str, Any] = {}
    if parts["test"]:
        metrics = family.heldout_metrics(trained, lambda p: score(parts["test"], p, bias), options.device)
        gold_total = sum(len(t.gold) for t in parts["test"])
        covered = sum(len(set(t.gold) & set(map(tuple, t.pairs.tolist()))) for t in parts["test"])
        metrics["candidate_recall_heldout"] = round(covered / max(gold_total, 1), 4)
        options.log("Sci-Arg: training the TF-IDF + LR baseline")
        metrics["baseline_tfidf_lr"] = _baseline(parts["train"], parts["dev"], parts["test"], options.seed)
    return {
        "files": trained.files,
        "data": {
            "papers": len(papers),
            "split": (
                "train A01-A20, dev A21-A24 (model selection, bias tuning), held-out A25-A32"
                if (tuple(dev), tuple(heldout)) == (DEV, HELDOUT)
                else "dev and held-out as listed, the other papers train"
            )
            + ("; the selected networks retrained on train + dev" if trained.refit_epochs is not None else ""),
            "train": sorted(t.name for t in parts["train"]),
            "dev": sorted(t.name for t in parts["dev"]),
            "heldout": sorted(t.name for t in parts["test"]),
        },
        "hyperparameters": {
            **{k: v for k, v in hp.items() if k not in ("vocab", "edge_vocab")},
            "context_vocab": len(hp["vocab"]),
            "edge_vocab": {k: len(v) for k, v in hp["edge_vocab"].items()},
            "head_choices": [
                {"labels": [LABELS[k] for k in h.labels], "forward_only": h.forward_only, "weight": h.weight}
                for h in HEAD_CHOICES
            ],
            **config,
            "seed": options.seed,
            "bias": dict(zip(LABELS, bias, strict=True)),
        },
        "metrics": metrics,
        "seconds": round(time.perf_counter() - start, 1),
        "train_seconds": round(trained.train_seconds, 1),
    }


@dataclass
class SciargModel:
    """A trained Sci-Arg model."""

    model: Any
    bias: list[float]
    text: TextVectors
    window: int
    device: str
    vocab: list[str]
    edge_vocab: dict[str, list[str]] | None = None
    context: bool = False

    def probabilities(self, papers: Sequence[Paper]) -> list[tuple[PaperTensors, np.ndarray]]:
        """Per paper: its candidate pairs (``tensors.pairs``) and their label probabilities, undecoded."""
        from gnn.relations.train import predict_probs

        tensors = [paper_tensors(p, self.window, self.vocab, self.edge_vocab) for p in papers]
        if self.context:
            _add_context(tensors, papers, self.text)
        probs = predict_probs(self.model, family.graphs_of(FAMILY, tensors, self.text), self.device)
        return list(zip(tensors, probs, strict=True))

    def predict(
        self, papers: Sequence[Paper], bias: Sequence[float] | None = None
    ) -> list[list[tuple[str, str, str, float]]]:
        """Per paper: (Arg1 T id, Arg2 T id, relation type, probability).

        Args:
            papers: The papers, with their components.
            bias: Per-label log-biases to decode with (default: the ones tuned when it trained).
        """
        out = []
        for paper, (t, p) in zip(papers, self.probabilities(papers), strict=True):
            rels = decode_paper(t.pairs, p, self.bias if bias is None else bias)
            out.append(
                [
                    (paper.comps[i].local_id, paper.comps[j].local_id, lab, s)
                    for (i, j), (lab, s) in sorted(rels.items())
                ]
            )
        return out


def load_sciarg(model_dir: Path, *, device: str = "cpu", encoder: TextVectors | None = None) -> SciargModel:
    """Load the Sci-Arg networks (``sciarg.safetensors``, ``sciarg_config.json``, any LSA file) from ``model_dir``.

    Raises:
        ModelError: Missing or unreadable weights, or an encoder-based model without ``encoder``.
    """
    model, stored, text = family.load_stored(model_dir, FAMILY, device, encoder)
    hp = stored["hp"]
    return SciargModel(
        model,
        list(stored["bias"]),
        text,
        int(hp["window"]),
        device,
        list(hp.get("vocab", [])),
        hp.get("edge_vocab"),
        bool(hp.get("context", False)),
    )


def score_papers(papers: Sequence[Paper], predicted: Sequence[Sequence[tuple[str, str, str, float]]]) -> dict[str, Any]:
    """BAM's R of predictions against the papers' gold relations."""
    gold, pred = [], []
    for paper, preds in zip(papers, predicted, strict=True):
        index = {c.local_id: k for k, c in enumerate(paper.comps)}
        gold += _triples(paper.name, paper.gold)
        pred += _triples(paper.name, {(index[a], index[b]): lab for a, b, lab, _ in preds})
    return {"R": triple_scores(gold, pred, SYMMETRIC)}


def baseline_on(train: Sequence[Paper], test: Sequence[Paper], seed: int = 0) -> dict[str, Any]:
    """TF-IDF + LR trained on ``train`` papers (biases tuned on those of A21-A24 among them), scored on ``test``."""
    window = PROFILES["full"]["window"]
    fit_on = [paper_tensors(p, window) for p in train if p.name not in DEV]
    dev = [paper_tensors(p, window) for p in train if p.name in DEV]
    return _baseline(fit_on or dev, dev if fit_on else [], [paper_tensors(p, window) for p in test], seed)
