"""PyG datasets: one graph per dialogue, built from plain dialogues and encoder embeddings.

Nodes are EDUs. Node features: the encoder embedding (``emb``), speaker and position features
(``feat``), and word ids for a trainable lexical bag (``token_ids`` with ``token_index`` saying
which node each word belongs to). Edges carry a type from :data:`EDGE_TYPES`: the dialogue's
surface structure (sequence, turns of one speaker as implied by ``SPOKEN_BY``, one speaker naming
another) and discourse links typed by the ontology's :class:`~ontology.terms.Sense` (gold ones in
the dataset, predicted ones inside the model's second pass).

Each node also carries its parent candidates: slot 0 is "no parent" (a root), slot ``k`` the EDU
``k`` positions earlier (``k <= K``), with pair features, the gold parents and their senses. (In
STAC 1.2% of the links come from the next EDU, "X" <- "if Y"; a slot for it scored lower on the
tuning part, docs/experiments/discourse.md, so those links are unreachable.)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import torch
from torch_geometric.data import Data, Dataset

from gnn.discourse.data import DOMAINS, Dialogue
from ontology.terms import RelType, Sense

SENSES: tuple[Sense, ...] = tuple(Sense)
SENSE_INDEX = {s: i for i, s in enumerate(SENSES)}
# Structural edge types, then one type per discourse sense (parent -> child).
STRUCTURE_TYPES = (
    "next",
    "previous",
    f"{RelType.SPOKEN_BY}:next",
    f"{RelType.SPOKEN_BY}:previous",
    "names",
    "named_by",
)
EDGE_TYPES: tuple[str, ...] = STRUCTURE_TYPES + tuple(f"sense:{s.value}" for s in SENSES)
NODE_FEATURES = 12
_TOKEN = re.compile(r"[a-z0-9']+|[?!.,:;()]")
UNK = 1  # 0 pads


def tokenize(text: str) -> list[str]:
    """Lower-cased words and punctuation."""
    return _TOKEN.findall(text.lower())


def build_vocab(dialogues: Iterable[Dialogue], size: int = 5000, min_count: int = 2) -> list[str]:
    """The ``size`` most frequent words (count >= ``min_count``) plus first-word markers."""
    counts: Counter[str] = Counter()
    for d in dialogues:
        for t in d.texts:
            toks = tokenize(t)
            counts.update(toks)
            if toks:
                counts[f"^{toks[0]}"] += 1
    return [w for w, c in counts.most_common(size) if c >= min_count]


def candidate_slots(k: int) -> int:
    """Candidate slots per EDU: the root and ``k`` earlier EDUs."""
    return k + 1


def pair_feature_count(k: int) -> int:
    """Width of the pair features for ``k`` earlier candidates."""
    return candidate_slots(k) + 11 + len(DOMAINS)


def _mentions(text_tokens: set[str], name: str) -> bool:
    return bool(name) and name.lower() in text_tokens


def dialogue_graph(d: Dialogue, emb: np.ndarray, vocab: dict[str, int], k: int) -> Data:
    """The PyG graph of one dialogue.

    Args:
        d: The dialogue.
        emb: ``(len(d), dim)`` encoder embeddings of its EDUs.
        vocab: Word -> id (ids from 2; 0 pads, 1 is unknown).
        k: Number of earlier EDUs considered as parents.
    """
    n = len(d)
    toks = [tokenize(t) for t in d.texts]
    tokset = [set(t) for t in toks]
    spk = d.speakers
    dom = [1.0 if d.domain == x else 0.0 for x in DOMAINS]
    # Latest EDU of each speaker strictly before i, first turn flags.
    feat = np.zeros((n, NODE_FEATURES), dtype=np.float32)
    seen: set[str] = set()
    names = {s.lower() for s in spk if s}
    for i in range(n):
        feat[i, 0] = i / max(n - 1, 1)
        feat[i, 1] = np.log1p(i) / 4
        feat[i, 2] = float(i == 0)
        feat[i, 3] = float("?" in d.texts[i])
        feat[i, 4] = float(i > 0 and spk[i] != spk[i - 1])
        feat[i, 5] = float(spk[i] not in seen)
        feat[i, 6] = np.log1p(len(toks[i])) / 4
        feat[i, 7] = float(any(nm in tokset[i] for nm in names if nm != spk[i].lower()))
        feat[i, 8] = float(i + 1 < n and spk[i + 1] == spk[i])
        feat[i, 9] = np.log1p(n) / 5
        feat[i, 10:12] = dom
        seen.add(spk[i])
    # Structural edges.
    src: list[int] = []
    dst: list[int] = []
    typ: list[int] = []

    def add(a: int, b: int, t: str) -> None:
        src.append(a)
        dst.append(b)
        typ.append(EDGE_TYPES.index(t))

    last_of: dict[str, int] = {}
    for i in range(n):
        if i > 0:
            add(i - 1, i, "next")
            add(i, i - 1, "previous")
        if spk[i] in last_of:
            add(last_of[spk[i]], i, STRUCTURE_TYPES[2])
            add(i, last_of[spk[i]], STRUCTURE_TYPES[3])
        for s, j in last_of.items():
            if s != spk[i] and _mentions(tokset[i], s):
                add(i, j, "names")
                add(j, i, "named_by")
        last_of[spk[i]] = i
    # Parent candidates and pair features.
    c = candidate_slots(k)
    p = pair_feature_count(k)
    b = c  # first pair feature after the one-hot slot
    pair = np.zeros((n, c, p), dtype=np.float32)
    mask = np.zeros((n, c), dtype=bool)
    gold = np.zeros((n, c), dtype=np.float32)
    sense = np.full((n, c), -100, dtype=np.int64)
    reachable = np.zeros(n, dtype=bool)
    parents: dict[int, list[tuple[int, Sense]]] = {}
    for x, y, s in d.relations:
        parents.setdefault(y, []).append((x, s))

    def shared(f: np.ndarray, i: int, j: int, adjacent: bool) -> None:
        """The features of candidate ``i`` for child ``j`` that do not depend on the EDUs between them."""
        f[b] = float(spk[i] == spk[j])
        f[b + 3] = float(_mentions(tokset[j], spk[i]))
        f[b + 4] = float(_mentions(tokset[i], spk[j]))
        f[b + 5] = float("?" in d.texts[i])
        f[b + 6] = float("?" in d.texts[j])
        f[b + 9] = len(tokset[i] & tokset[j]) / max(1, min(len(tokset[i]), len(tokset[j])))
        f[b + 10] = float(adjacent and spk[i] != spk[j])
        f[-len(DOMAINS) :] = dom

    for j in range(n):
        # "No parent" is an option for the first EDU only: every later EDU gets a parent (Molweni:
        # all do; STAC: 99%, the rest mostly to the next EDU, which is no candidate).
        mask[j, 0] = j == 0
        pair[j, 0, 0] = 1.0
        pair[j, 0, -len(DOMAINS) :] = dom
        between_speakers: set[str] = set()
        turns = 0
        for dist in range(1, min(k, j) + 1):
            i = j - dist
            f = pair[j, dist]
            f[dist] = 1.0
            shared(f, i, j, dist == 1)
            f[b + 1] = float(spk[i] not in between_speakers)  # i is its speaker's latest EDU before j
            f[b + 2] = float(spk[j] in between_speakers)  # j's speaker spoke in between
            f[b + 7] = len(between_speakers) / 5
            f[b + 8] = turns / max(k, 1)
            mask[j, dist] = True
            if i + 1 < j and spk[i + 1] != spk[i]:
                turns += 1
            between_speakers.add(spk[i])
        if j in parents:
            for x, s in parents[j]:
                dist = j - x
                if 1 <= dist <= k:
                    gold[j, dist] = 1.0
                    sense[j, dist] = SENSE_INDEX[s]
                    reachable[j] = True
        elif j == 0:
            gold[j, 0] = 1.0
            reachable[j] = True
    ids: list[int] = []
    index: list[int] = []
    for i, words in enumerate(toks):
        ws = [*words, f"^{words[0]}"] if words else []
        for w in ws:
            ids.append(vocab.get(w, UNK))
            index.append(i)
    gold_edges = [(x, y, EDGE_TYPES.index(f"sense:{s.value}")) for x, y, s in d.relations]
    return Data(
        emb=torch.from_numpy(np.ascontiguousarray(emb, dtype=np.float32)),
        feat=torch.from_numpy(feat),
        token_ids=torch.tensor(ids, dtype=torch.long),
        token_index=torch.tensor(index, dtype=torch.long),
        edge_index=torch.tensor([src, dst], dtype=torch.long).reshape(2, -1),
        edge_type=torch.tensor(typ, dtype=torch.long),
        gold_edge_index=torch.tensor(
            [[a for a, _, _ in gold_edges], [b for _, b, _ in gold_edges]], dtype=torch.long
        ).reshape(2, -1),
        gold_edge_type=torch.tensor([t for _, _, t in gold_edges], dtype=torch.long),
        pair=torch.from_numpy(pair),
        cand_mask=torch.from_numpy(mask),
        gold=torch.from_numpy(gold),
        gold_sense=torch.from_numpy(sense),
        reachable=torch.from_numpy(reachable),
        position=torch.arange(n, dtype=torch.long),
        num_nodes=n,
    )


class DialogueGraphs(Dataset):
    """An in-memory PyG dataset of dialogue graphs (one per dialogue, in the given order).

    Args:
        dialogues: The dialogues.
        embeddings: One ``(len(d), dim)`` array per dialogue.
        vocab: Word list (ids start at 2).
        k: Earlier EDUs considered as parents.
    """

    def __init__(self, dialogues: Sequence[Dialogue], embeddings: Sequence[np.ndarray], vocab: Sequence[str], k: int):
        super().__init__()
        index = {w: i + 2 for i, w in enumerate(vocab)}
        self.dialogues = list(dialogues)
        self.graphs = [dialogue_graph(d, e, index, k) for d, e in zip(dialogues, embeddings, strict=True)]

    def len(self) -> int:
        return len(self.graphs)

    def get(self, idx: int) -> Data:
        return self.graphs[idx]
