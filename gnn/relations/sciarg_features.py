"""Features and graphs of Sci-Arg component pairs.

A pair's label depends on more than the two spans: the words between them ("therefore", "since",
"however", a comma splitting one component into parts), the discourse marker just before each
component, how many claims lie between, and whether the target is the nearest claim in that
direction. The words come from a vocabulary of the commonest tokens of those contexts in the
training papers (stored with the model), as binary bags; everything else is fixed-width.

A fragment of a split component rarely reads like a whole one: "One approach" (a subject without
its verb) continues in "makes use of ...". A component's first, second and last tokens (bags over
their own vocabularies) and whether punctuation closes it or opens it are node features for that.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from gnn.relations.argmap import words
from gnn.relations.family import PairTensors

LABELS = ("none", "supports", "contradicts", "parts_of_same", "semantically_same")
SYMMETRIC = ("parts_of_same", "semantically_same")
TYPES = ("background_claim", "own_claim", "data")
CLAIMS = ("background_claim", "own_claim")
EDGE_TYPES = ("next", "prev", "same_sentence")
N_BASE_PAIR_FEATURES = 9 + 22
N_BASE_PROP_FEATURES = 5
VOCAB_SIZE = 256
EDGE_POSITIONS = (("first", 0), ("second", 1), ("last", -1))
EDGE_VOCAB_SIZE = 64
N_BOUNDARY_FEATURES = 4
# Context words: tokens with punctuation kept (a comma or bracket between two spans matters).
_CONTEXT_TOKEN = re.compile(r"[a-z0-9']+|[^\sa-z0-9]")
_TAG = re.compile(r"<[^<>]*>")
GAP_CHARS = 160  # words farther than this from either span are not "between" them
LEFT_CHARS = 40  # the marker window before a component


@dataclass
class Comp:
    """A component: brat id, type, text, character span, first sentence number, graph id."""

    local_id: str
    label: str
    text: str
    start: int
    end: int
    sentence: int
    id: str = ""


@dataclass
class Paper:
    """A Sci-Arg paper: components in text order, gold relations by component index, sentence texts.

    Attributes:
        pieces: ``(start, end, text)`` of the paper's sentences in text order (the context words
            between and before components are sliced from them; empty: no context words).
    """

    name: str
    comps: list[Comp] = field(default_factory=list)
    gold: dict[tuple[int, int], str] = field(default_factory=dict)
    pieces: list[tuple[int, int, str]] = field(default_factory=list)


def slice_text(paper: Paper, start: int, end: int) -> str:
    """The paper's text in ``[start, end)`` as far as its sentences cover it (markup tags kept)."""
    if end <= start or not paper.pieces:
        return ""
    k = max(bisect.bisect_right(paper.pieces, start, key=lambda p: p[0]) - 1, 0)
    out = []
    while k < len(paper.pieces) and paper.pieces[k][0] < end:
        s, e, text = paper.pieces[k]
        lo, hi = max(s, start), min(e, end)
        if hi > lo:
            out.append(text[lo - s : hi - s])
        k += 1
    return " ".join(out)


def _tokens(text: str) -> list[str]:
    return _CONTEXT_TOKEN.findall(_TAG.sub(" <tag> ", text.lower()).replace("< tag >", "<tag>"))


def gap_tokens(paper: Paper, a: Comp, b: Comp) -> set[str]:
    """Tokens between two components (near each end when the gap is long)."""
    lo, hi = min(a.end, b.end), max(a.start, b.start)
    if hi - lo > 2 * GAP_CHARS:
        text = slice_text(paper, lo, lo + GAP_CHARS) + " " + slice_text(paper, hi - GAP_CHARS, hi)
    else:
        text = slice_text(paper, lo, hi)
    return set(_tokens(text))


def left_tokens(paper: Paper, c: Comp) -> set[str]:
    """Tokens just before a component (its discourse marker, if any)."""
    return set(_tokens(slice_text(paper, max(c.start - LEFT_CHARS, 0), c.start)))


def fit_vocab(papers: Sequence[Paper], window: int, size: int = VOCAB_SIZE) -> list[str]:
    """The commonest context tokens of ``papers``: between near components and before each one."""
    counts: Counter[str] = Counter()
    for paper in papers:
        comps = paper.comps
        for i, c in enumerate(comps):
            # Sorted: equal counts keep the order of first sight, which must not depend on the
            # process's string hashing (a set's iteration order does).
            counts.update(sorted(left_tokens(paper, c)))
            for j in range(i + 1, min(len(comps), i + min(window, 3) + 1)):
                counts.update(sorted(gap_tokens(paper, c, comps[j])))
    return [t for t, n in counts.most_common(size) if n >= 3]


def _edge_tokens(text: str) -> dict[str, str | None]:
    """A component's first, second and last tokens, keyed as :data:`EDGE_POSITIONS` (``None``: too short)."""
    toks = _tokens(text)
    return {key: toks[pos] if len(toks) > max(pos, 0) else None for key, pos in EDGE_POSITIONS}


def fit_edge_vocab(papers: Sequence[Paper], size: int = EDGE_VOCAB_SIZE) -> dict[str, list[str]]:
    """The commonest first, second and last tokens of the components of ``papers`` (3+ occurrences)."""
    counts: dict[str, Counter[str]] = {key: Counter() for key, _ in EDGE_POSITIONS}
    for paper in papers:
        for c in paper.comps:
            for key, tok in _edge_tokens(c.text).items():
                if tok is not None:
                    counts[key][tok] += 1
    return {key: [t for t, n in counts[key].most_common(size) if n >= 3] for key, _ in EDGE_POSITIONS}


def edge_width(edge_vocab: dict[str, list[str]] | None) -> int:
    """Node feature width added by :func:`component_edges` (0: no edge vocabulary, an older model)."""
    return 0 if edge_vocab is None else N_BOUNDARY_FEATURES + sum(len(v) for v in edge_vocab.values())


def component_edges(paper: Paper, c: Comp, edge_index: dict[str, dict[str, int]]) -> np.ndarray:
    """Bags of a component's first, second and last tokens, and the punctuation around it.

    The four boundary features: a sentence or clause ends just before it (or nothing precedes
    it), a full stop, colon or semicolon follows it, a comma follows it, a comma precedes it.
    """
    parts = []
    for key, tok in _edge_tokens(c.text).items():
        bag = np.zeros(len(edge_index[key]), dtype=np.float32)
        k = None if tok is None else edge_index[key].get(tok)
        if k is not None:
            bag[k] = 1.0
        parts.append(bag)
    before = slice_text(paper, max(c.start - 3, 0), c.start).strip()
    after = slice_text(paper, c.end, c.end + 3).strip()
    boundary = [
        before == "" or before[-1:] in ".:;",
        after[:1] in (".", ":", ";"),
        after[:1] == ",",
        before[-1:] == ",",
    ]
    parts.append(np.array(boundary, dtype=np.float32))
    return np.concatenate(parts)


def _bag(tokens: set[str], index: dict[str, int]) -> np.ndarray:
    v = np.zeros(len(index), dtype=np.float32)
    for t in tokens:
        k = index.get(t)
        if k is not None:
            v[k] = 1.0
    return v


@dataclass
class PaperTensors(PairTensors):
    """A paper as model inputs: its components and their candidate pairs.

    Attributes:
        context: ``(components, dim)`` contextual vectors added to the node features (``None``:
            the model does not use them).
    """

    context: np.ndarray | None = None


def _nearest(kinds: Sequence[str], wanted: Sequence[str]) -> tuple[list[int], list[int]]:
    """For each index, the nearest earlier and later index whose kind is in ``wanted`` (-1: none)."""
    n = len(kinds)
    before, after = [-1] * n, [-1] * n
    last = -1
    for k in range(n):
        before[k] = last
        if kinds[k] in wanted:
            last = k
    last = -1
    for k in range(n - 1, -1, -1):
        after[k] = last
        if kinds[k] in wanted:
            last = k
    return before, after


def paper_tensors(
    paper: Paper, window: int = 8, vocab: Sequence[str] = (), edge_vocab: dict[str, list[str]] | None = None
) -> PaperTensors:
    """Candidate pairs within ``window`` components, pair features and the component graph.

    Args:
        paper: The paper.
        window: Candidate pairs are the ordered component pairs at most this far apart.
        vocab: Context-word vocabulary (:func:`fit_vocab`); its width is added to the pair features
            (words between) and to the node features (words before).
        edge_vocab: First / second / last token vocabularies (:func:`fit_edge_vocab`); ``None``
            (models trained before them) leaves out :func:`component_edges`.
    """
    n = len(paper.comps)
    index = {t: k for k, t in enumerate(vocab)}
    cw = [set(words(c.text)) for c in paper.comps]
    kinds = [c.label for c in paper.comps]
    claim_before, claim_after = _nearest(kinds, CLAIMS)
    own_before, own_after = _nearest(kinds, ("own_claim",))
    claims_upto = np.cumsum([0, *(k in CLAIMS for k in kinds)])
    between: dict[tuple[int, int], set[str]] = {}
    pairs, feats, labels = [], [], []
    for i in range(n):
        for j in range(max(0, i - window), min(n, i + window + 1)):
            if i == j:
                continue
            a, b = paper.comps[i], paper.comps[j]
            d = j - i
            type_pair = np.zeros(9, dtype=np.float32)
            if a.label in TYPES and b.label in TYPES:
                type_pair[TYPES.index(a.label) * 3 + TYPES.index(b.label)] = 1
            gap = max(b.start - a.end, a.start - b.end, 0)
            inter = cw[i] & cw[j]
            lo, hi = min(i, j), max(i, j)
            claims_between = int(claims_upto[hi] - claims_upto[lo + 1])
            near_claim = j == (claim_after[i] if d > 0 else claim_before[i])
            near_own = j == (own_after[i] if d > 0 else own_before[i])
            if index and abs(d) <= 3:
                # The words between two components do not depend on the pair's direction.
                if (lo, hi) not in between:
                    between[(lo, hi)] = gap_tokens(paper, a, b)
                gap_toks = between[(lo, hi)]
            else:
                gap_toks = set()
            base = np.array(
                [
                    d / window,
                    abs(d) == 1,
                    abs(d) == 2,
                    d > 0,
                    a.sentence == b.sentence,
                    max(-10, min(10, b.sentence - a.sentence)) / 10.0,
                    np.log1p(gap) / 10.0,
                    gap < 3,
                    len(inter) / max(len(cw[i] | cw[j]), 1),
                    len(inter) / max(len(cw[i]), 1),
                    len(inter) / max(len(cw[j]), 1),
                    i / max(n - 1, 1),
                    min(len(cw[i]), 50) / 50.0,
                    min(len(cw[j]), 50) / 50.0,
                    min(claims_between, 5) / 5.0,
                    claims_between == 0,
                    near_claim,
                    near_own,
                    (abs(d) - 1) / window,
                    "<tag>" in gap_toks,
                    len(gap_toks) == 0 and abs(d) <= 3,
                    a.sentence == b.sentence and abs(d) == 1,
                ],
                dtype=np.float32,
            )
            feats.append(np.concatenate([type_pair, base, _bag(gap_toks, index)]))
            gold = paper.gold.get((i, j))
            if gold is None and paper.gold.get((j, i)) in SYMMETRIC:
                gold = paper.gold[(j, i)]
            labels.append(LABELS.index(gold) if gold else 0)
            pairs.append((i, j))
    width = N_BASE_PAIR_FEATURES + len(index)
    edge_index = {key: {t: k for k, t in enumerate(v)} for key, v in (edge_vocab or {}).items()}
    prop_feats = np.array(
        [
            np.concatenate(
                [
                    [*(float(c.label == t) for t in TYPES), k / max(n - 1, 1), min(len(cw[k]), 50) / 50.0],
                    _bag(left_tokens(paper, c), index) if index else [],
                    component_edges(paper, c, edge_index) if edge_vocab is not None else [],
                ]
            )
            for k, c in enumerate(paper.comps)
        ],
        dtype=np.float32,
    ).reshape(n, N_BASE_PROP_FEATURES + len(index) + edge_width(edge_vocab))
    src, dst, typ = [], [], []
    for k in range(n - 1):
        src += [k, k + 1]
        dst += [k + 1, k]
        typ += [0, 1]
        if paper.comps[k].sentence == paper.comps[k + 1].sentence:
            src += [k, k + 1]
            dst += [k + 1, k]
            typ += [2, 2]
    return PaperTensors(
        name=paper.name,
        texts=[c.text for c in paper.comps],
        prop_feats=prop_feats,
        edges=np.array([src, dst, typ], dtype=np.int64).reshape(3, -1),
        pairs=np.array(pairs, dtype=np.int64).reshape(-1, 2),
        pair_feats=np.array(feats, dtype=np.float32).reshape(-1, width),
        labels=np.array(labels, dtype=np.int64),
        gold=dict(paper.gold),
    )
