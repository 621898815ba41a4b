"""M-Arg support / attack / neither pairs, text only or text + audio, by cross-validation.

Only the 102 expert gold pairs are available here, far too few for a held-out split or a graph
model: the classifier is a class-balanced logistic regression over the pair representation
``[u, v, u*v, |u-v|]`` of the two sentence vectors plus same-speaker, and, when audio features
exist for both sentences, ``[a_u, a_v, |a_u - a_v|]`` of the standardised acoustic vectors
(:mod:`gnn.audio`). Reported: stratified, seeded, repeated 5-fold cross-validated macro-F1 over
the three classes and over support/attack (neither excluded, as MAMKit reports), next to the
TF-IDF + LR baseline in the same folds.

M-Arg debates are also read by the QT30 relation network, which never saw an M-Arg label
(:func:`predict_debates`): each debate part is cut into overlapping transcript windows the size of
a QT30 map, each window given to the network in the DialAM task-A form live mining uses (an L- and
an I-node per sentence, a transition between consecutive sentences), and every pair is decided in
the one window where it sits in the middle. Its RA / CA become M-Arg ``Support`` / ``Attack``; MA
(rephrase) has no M-Arg label and is left out. :func:`score_transfer` scores that on the gold pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gnn.relations.baseline import PairTfidfLR
from gnn.relations.metrics import macro_f1
from gnn.relations.text import TextVectors
from ontology.labels import scheme_label, scheme_raw
from ontology.records import EdgeRecord, LocutionRecord, NodeRecord, PropositionRecord, RelationRecord

if TYPE_CHECKING:
    from gnn.relations.qt30_run import Qt30Model

LABELS = ("Neither", "Support", "Attack")
# QT30 supports and attacks as M-Arg writes them; rephrase has no M-Arg relation and is left out.
FROM_QT30 = {t: scheme_raw("m-arg", scheme_label("qt30", t)) for t in ("RA", "CA")}
"""QT30 relation types with an M-Arg counterpart (MA, rephrase, has none)."""
WINDOW = 16
"""Sentences per window given to the QT30 network: its training maps have 14 I-nodes at the median."""


@dataclass(frozen=True)
class Pair:
    """An annotated pair: ids and texts of the two sentences, speakers, gold label."""

    pair_id: str
    source_id: str
    target_id: str
    source: str
    target: str
    same_speaker: bool
    label: str


def pairs_from_records(nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> list[Pair]:
    """The annotated pairs of an M-Arg bundle, in input order (sentence ids are the local ids)."""
    props = {n.id: n for n in nodes if isinstance(n, PropositionRecord)}
    speakers = {n.local_id: n.speaker for n in nodes if isinstance(n, LocutionRecord)}
    into: dict[str, list[str]] = {}
    out: dict[str, list[str]] = {}
    for e in edges:
        out.setdefault(e.source, []).append(e.target)
        into.setdefault(e.target, []).append(e.source)
    pairs = []
    for node in nodes:
        if isinstance(node, RelationRecord) and node.scheme_label in LABELS:
            src = [props[s] for s in into.get(node.id, []) if s in props]
            tgt = [props[t] for t in out.get(node.id, []) if t in props]
            if len(src) == 1 and len(tgt) == 1:
                a, b = src[0], tgt[0]
                sa, sb = speakers.get(a.local_id), speakers.get(b.local_id)
                pairs.append(
                    Pair(
                        node.local_id or node.id,
                        a.local_id or a.id,
                        b.local_id or b.id,
                        a.text or "",
                        b.text or "",
                        sa is not None and sa == sb,
                        node.scheme_label,
                    )
                )
    return pairs


def pair_matrix(pairs: Sequence[Pair], text: TextVectors, audio: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
    """Pair representations (see the module docstring); audio columns only when ``audio`` is given."""
    u = text.encode([p.source for p in pairs])
    v = text.encode([p.target for p in pairs])
    cols = [u, v, u * v, np.abs(u - v), np.array([[p.same_speaker] for p in pairs], dtype=np.float32)]
    if audio is not None:
        width = len(next(iter(audio.values()))) if audio else 0
        a = np.array([audio.get(p.source_id, np.zeros(width)) for p in pairs], dtype=np.float32)
        b = np.array([audio.get(p.target_id, np.zeros(width)) for p in pairs], dtype=np.float32)
        both = np.concatenate([a, b])
        mu, sd = both.mean(axis=0), both.std(axis=0) + 1e-6
        a, b = (a - mu) / sd, (b - mu) / sd
        cols += [a, b, np.abs(a - b)]
    return np.concatenate(cols, axis=1).astype(np.float32)


def cross_validate(
    pairs: Sequence[Pair],
    text: TextVectors,
    audio: Mapping[str, np.ndarray] | None = None,
    *,
    folds: int = 5,
    repeats: int = 3,
    seed: int = 0,
) -> dict[str, Any]:
    """Repeated stratified k-fold macro-F1 of the model and of the TF-IDF + LR baseline.

    Returns:
        ``{"text": {...}, "text+audio": {...} (with audio), "baseline_tfidf_lr": {...}, "pairs": n}``
        with mean and standard deviation of macro-F1 over all classes and over support/attack.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import RepeatedStratifiedKFold

    y = np.array([LABELS.index(p.label) for p in pairs])
    k = max(2, min(folds, int(np.bincount(y, minlength=len(LABELS))[np.bincount(y, minlength=len(LABELS)) > 0].min())))
    splitter = RepeatedStratifiedKFold(n_splits=k, n_repeats=repeats, random_state=seed)
    variants: dict[str, np.ndarray] = {"text": pair_matrix(pairs, text)}
    if audio is not None:
        variants["text+audio"] = pair_matrix(pairs, text, audio)
    scores: dict[str, dict[str, list[float]]] = {
        name: {"macro_f1": [], "support_attack_f1": []} for name in [*variants, "baseline_tfidf_lr"]
    }
    for train, test in splitter.split(np.zeros(len(y)), y):
        for name, x in variants.items():
            clf = LogisticRegression(C=0.5, class_weight="balanced", max_iter=2000, random_state=seed)
            pred = clf.fit(x[train], y[train]).predict(x[test])
            scores[name]["macro_f1"].append(macro_f1(y[test].tolist(), pred.tolist(), range(len(LABELS))))
            scores[name]["support_attack_f1"].append(macro_f1(y[test].tolist(), pred.tolist(), (1, 2)))
        base = PairTfidfLR(seed=seed).fit(
            [pairs[i].source for i in train], [pairs[i].target for i in train], y[train].tolist()
        )
        probs = base.predict_proba([pairs[i].source for i in test], [pairs[i].target for i in test], len(LABELS))
        pred = probs.argmax(axis=1)
        scores["baseline_tfidf_lr"]["macro_f1"].append(macro_f1(y[test].tolist(), pred.tolist(), range(len(LABELS))))
        scores["baseline_tfidf_lr"]["support_attack_f1"].append(macro_f1(y[test].tolist(), pred.tolist(), (1, 2)))
    out: dict[str, Any] = {
        "pairs": len(pairs),
        "labels": {lab: int((y == k).sum()) for k, lab in enumerate(LABELS)},
        "protocol": f"{k}-fold stratified x {repeats} repeats, seed {seed}",
    }
    for name, s in scores.items():
        out[name] = {m: {"mean": round(float(np.mean(v)), 4), "std": round(float(np.std(v)), 4)} for m, v in s.items()}
    return out


@dataclass(frozen=True)
class Debate:
    """One M-Arg debate part in transcript order: its sentences' local ids, texts, speakers and node ids."""

    id: str
    sentences: tuple[str, ...]
    texts: tuple[str, ...]
    speakers: tuple[str, ...]
    node_ids: tuple[str, ...]


def debates_from_records(nodes: Sequence[NodeRecord]) -> list[Debate]:
    """The debate parts of M-Arg loader records (or the graph's), sentences in position order.

    A sentence is a proposition; its speaker is that of the locution with the same local id. A
    sentence without one (the corpus could not attribute two) gets a speaker of its own, so that the
    network does not read such sentences as said by one person.
    """
    speakers = {(n.discourse, n.local_id): n.speaker for n in nodes if isinstance(n, LocutionRecord)}
    parts: dict[str, list[tuple[int, str, str, str]]] = {}
    for n in nodes:
        if isinstance(n, PropositionRecord) and n.discourse is not None:
            parts.setdefault(n.discourse, []).append((n.position or 0, n.local_id or n.id, n.text or "", n.id))
    out = []
    for did, rows in parts.items():
        rows.sort()
        out.append(
            Debate(
                did,
                tuple(r[1] for r in rows),
                tuple(r[2] for r in rows),
                tuple(speakers.get((did, r[1])) or f"unknown speaker {r[1]}" for r in rows),
                tuple(r[3] for r in rows),
            )
        )
    return out


def window_starts(n: int, size: int = WINDOW) -> list[int]:
    """Start of each window of ``size`` sentences over ``n``, every ``size // 2`` (the last one ends at ``n``)."""
    stride = max(1, size // 2)
    if n <= size:
        return [0]
    starts = list(range(0, n - size, stride))
    return [*starts, n - size]


def owner(i: int, j: int, starts: Sequence[int], size: int = WINDOW) -> int:
    """Index of the window that decides the pair of sentences ``i``, ``j``: the one whose middle is nearest theirs."""
    mid = (i + j) / 2
    return min(range(len(starts)), key=lambda k: (abs(starts[k] + (size - 1) / 2 - mid), k))


def predict_debates(
    qt: Qt30Model, debates: Sequence[Debate], objective: str = "general", size: int = WINDOW
) -> list[list[tuple[str, str, str, float]]]:
    """Support / attack between the sentences of each debate, by the QT30 network.

    Returns:
        Per debate: ``(source sentence id, target sentence id, Support|Attack, probability)``,
        ordered by source then target.
    """
    from gnn.relations.live import dialogue_map

    maps, where = [], []
    for d, debate in enumerate(debates):
        starts = window_starts(len(debate.sentences), size)
        for k, s in enumerate(starts):
            e = min(len(debate.sentences), s + size)
            if e - s < 2:
                continue
            consecutive = [(t, t + 1) for t in range(e - s - 1)]
            maps.append(dialogue_map(f"{debate.id}@{s}", debate.texts[s:e], debate.speakers[s:e], consecutive))
            where.append((d, k, starts))
    out: list[list[tuple[str, str, str, float]]] = [[] for _ in debates]
    for (d, k, starts), rels in zip(where, qt.predict(maps, objective) if maps else [], strict=True):
        s, ids = starts[k], debates[d].sentences
        for a, b, lab, p in rels:
            i, j = s + int(a), s + int(b)
            if lab in FROM_QT30 and owner(i, j, starts, size) == k:
                out[d].append((ids[i], ids[j], FROM_QT30[lab], p))
    return [sorted(rows) for rows in out]


def score_transfer(pairs: Sequence[Pair], predicted: Sequence[Sequence[tuple[str, str, str, float]]]) -> dict[str, Any]:
    """Score predicted relations on the annotated pairs, the way the pairs are annotated (undirected).

    A pair is ``Attack`` when an attack is predicted between its sentences in either direction,
    else ``Support`` when a support is, else ``Neither``.

    Returns:
        ``pairs``, ``macro_f1`` (three classes), ``support_attack_f1`` (neither excluded, as
        MAMKit reports) and ``predicted`` (count per label on the pairs).
    """
    found: dict[frozenset[str], set[str]] = {}
    for rows in predicted:
        for a, b, lab, _ in rows:
            found.setdefault(frozenset((a, b)), set()).add(lab)
    gold, pred = [], []
    for p in pairs:
        labs = found.get(frozenset((p.source_id, p.target_id)), set())
        gold.append(LABELS.index(p.label))
        pred.append(2 if "Attack" in labs else 1 if "Support" in labs else 0)
    return {
        "pairs": len(pairs),
        "macro_f1": round(macro_f1(gold, pred, range(len(LABELS))), 4),
        "support_attack_f1": round(macro_f1(gold, pred, (1, 2)), 4),
        "predicted": {lab: pred.count(k) for k, lab in enumerate(LABELS)},
    }
