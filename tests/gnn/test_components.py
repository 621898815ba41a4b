"""Component tagger: BIO encoding/decoding, features, and a tiny train -> predict -> brat round trip."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from gnn.bam import BratDocument, Component
from gnn.components import (
    TAGS,
    TaggerConfig,
    decode,
    gold_tags,
    join_citations,
    nearest_claim_relations,
    schedule,
)
from gnn.components import _Sentence as Sentence
from gnn.components.net import (
    BiLstmCrf,
    ComponentTagger,
    TaggerFit,
    TokenVectors,
    allowed_transitions,
    input_width,
    paper_rows,
    sentence_batch,
)
from gnn.trainer import FitResult, Schedule, Trainer
from tests.gnn.fakes import HashEncoder

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier

DATA = Path(__file__).resolve().parent.parent / "data" / "bam"


def _tag(name: str) -> int:
    return TAGS.index(name)


def test_decode_bio_runs() -> None:
    spans = [(0, 2), (3, 5), (6, 8), (9, 11), (12, 14)]
    tags = [_tag("B-data"), _tag("I-data"), _tag("O"), _tag("I-own_claim"), _tag("B-own_claim")]
    # An I without its B opens a component; a B always opens a new one.
    assert decode(spans, tags) == [("data", 0, 5), ("own_claim", 9, 11), ("own_claim", 12, 14)]
    # A label flip inside a run keeps one component, labelled by its majority (ties: the first token).
    assert decode(spans[:2], [_tag("B-data"), _tag("I-own_claim")]) == [("data", 0, 5)]
    flip = [_tag("B-own_claim"), _tag("I-data"), _tag("I-data")]
    assert decode(spans[:3], flip) == [("data", 0, 8)]


def test_gold_tags_round_trip() -> None:
    sentence = Sentence([(0, 2), (3, 5), (6, 8), (9, 11)], ["ab", "cd", "ef", "gh"])
    comps = [Component("T1", "data", ((3, 8),)), Component("T2", "own_claim", ((9, 11),))]
    tags = gold_tags(sentence, comps)
    assert [TAGS[t] for t in tags] == ["O", "B-data", "I-data", "B-own_claim"]
    assert decode(sentence.spans, tags) == [("data", 3, 8), ("own_claim", 9, 11)]


def test_paper_rows_are_word_vectors_then_positions() -> None:
    sentences = [Sentence([(0, 1), (2, 3)], ["a", "b"], 0.0), Sentence([(4, 5)], ["c"], 0.5)]
    vectors = [np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), np.array([[5.0, 6.0]], np.float32)]
    rows = paper_rows(sentences, vectors)
    assert [r.shape for r in rows] == [(2, input_width(2)), (1, input_width(2))]
    assert rows[0][:, :2].tolist() == [[1.0, 2.0], [3.0, 4.0]] and rows[1][0, :2].tolist() == [5.0, 6.0]
    # the sentence's place in the paper, its length, the token's place from either end
    assert rows[1][0, 2:].tolist() == pytest.approx([0.5, 1 / 80, 0.0, 0.0])
    assert np.allclose(rows[0][:, 2:], [[0.0, 2 / 80, 0.0, 0.5], [0.0, 2 / 80, 0.5, 0.0]])


def test_an_author_year_citation_cut_at_its_comma_is_joined() -> None:
    text = "as in Desbrun and Gascuel , 1995 ; Stam , 1999a and Stam 2002 , 2004 , 2005 ."
    words = text.split(" ")
    spans, at = [], 0
    for word in words:
        spans.append((at, at + len(word)))
        at += len(word) + 1
    sentence = Sentence(spans, words)

    def comp(label: str, first: int, last: int) -> tuple[str, int, int]:
        return (label, spans[first][0], spans[last][1])

    found = [
        comp("data", 2, 4),  # Desbrun and Gascuel
        comp("data", 6, 6),  # 1995
        comp("data", 8, 8),  # Stam
        comp("own_claim", 10, 10),  # 1999a: another label, left alone
        comp("data", 12, 13),  # Stam 2002: ends in a year, so ", 2004" is another citation
        comp("data", 15, 15),  # 2004
        comp("data", 17, 17),  # 2005: after a year, left alone
    ]
    joined = join_citations(sentence, list(reversed(found)))
    assert joined == [comp("data", 2, 6), found[2], found[3], found[4], found[5], found[6]]
    assert text[joined[0][1] : joined[0][2]] == "Desbrun and Gascuel , 1995"
    assert join_citations(sentence, []) == []
    # Two tokens between the parts, or a gap that is not a comma: nothing joined.
    assert join_citations(sentence, [comp("data", 2, 3), comp("data", 6, 6)]) == [
        comp("data", 2, 3),
        comp("data", 6, 6),
    ]
    assert join_citations(sentence, [comp("data", 4, 4), comp("data", 6, 6)]) == [comp("data", 4, 6)]
    assert join_citations(sentence, [comp("data", 6, 6), comp("data", 8, 8)]) == [
        comp("data", 6, 6),
        comp("data", 8, 8),
    ]


def _path_score(crf: BiLstmCrf, em: torch.Tensor, path: tuple[int, ...]) -> float:
    """Score of one tag sequence, written out from the CRF's definition (forbidden steps: -inf)."""
    allowed = allowed_transitions()
    if TAGS[path[0]].startswith("I-") or any(not allowed[a, b] for a, b in itertools.pairwise(path)):
        return float("-inf")
    score = crf.start[path[0]] + em[0, path[0]] + crf.end[path[-1]]
    for i in range(1, len(path)):
        score = score + crf.transitions[path[i - 1], path[i]] + em[i, path[i]]
    return float(score.detach())  # the CRF's parameters require gradients; the reference value does not


def test_crf_likelihood_and_viterbi_match_enumeration() -> None:
    torch.manual_seed(0)
    crf = BiLstmCrf(4, TaggerConfig(widths=(4, 4)))
    with torch.no_grad():
        for p in (crf.transitions, crf.start, crf.end):
            p.normal_()
    em = torch.randn(2, 3, len(TAGS))
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])  # the second sentence has two tokens
    gold = torch.tensor([[1, 2, 0], [3, 0, 0]])
    expected = []
    best = []
    for row, n in ((0, 3), (1, 2)):
        scores = {p: _path_score(crf, em[row], p) for p in itertools.product(range(len(TAGS)), repeat=n)}
        finite = torch.tensor([v for v in scores.values() if v > float("-inf")])
        expected.append(float(torch.logsumexp(finite, 0)) - scores[tuple(gold[row, :n].tolist())])
        best.append(list(max(scores, key=lambda p: scores[p])))
    assert float(crf.loss(em, gold, mask).detach()) == pytest.approx(sum(expected) / 2, rel=1e-4)
    assert crf.viterbi(em, mask) == best


def test_a_sentence_batch_is_padded_back_into_sequences() -> None:
    rows = [np.arange(6, dtype=np.float32).reshape(3, 2), np.array([[7.0, 8.0]], np.float32)]
    batch = sentence_batch(rows, [np.array([1, 2, 2]), np.array([5])])
    assert batch.num_graphs == 2 and batch.x.shape == (4, 2) and batch.num_edges == 0
    crf = BiLstmCrf(2, TaggerConfig(widths=(4, 4), dropout=0.0)).eval()
    em, mask = crf.emissions(batch)
    assert em.shape == (2, 3, len(TAGS)) and mask.tolist() == [[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]]
    # Padding is zero vectors after the real tokens: the same emissions as the sentences padded by hand.
    padded = torch.zeros(2, 3, 2)
    padded[0], padded[1, 0] = torch.from_numpy(rows[0]), torch.from_numpy(rows[1][0])
    with torch.no_grad():
        by_hand = crf.emit(crf.lstm(torch.relu(crf.project(padded)))[0])
    assert torch.allclose(em, by_hand)
    assert crf.viterbi(em, mask)[1] == crf.viterbi(em[1:, :1], mask[1:, :1])[0]


def _synthetic(n: int, seed: int) -> tuple[list[Sentence], list[np.ndarray]]:
    """Sentences of 2-7 words whose tag follows the first input feature: B-own_claim above 0.5, else O."""
    rng = np.random.default_rng(seed)
    sentences, rows = [], []
    for _ in range(n):
        length = int(rng.integers(2, 8))
        row = rng.standard_normal((length, input_width(8))).astype(np.float32)
        tags = np.array([_tag("B-own_claim") if v > 0.5 else _tag("O") for v in row[:, 0]])
        spans = [(3 * i, 3 * i + 2) for i in range(length)]
        sentences.append(Sentence(spans, [f"w{i}" for i in range(length)], tags=tags))
        rows.append(row)
    return sentences, rows


def _fit(config: TaggerConfig, tmp_path: Path) -> tuple[TaggerFit, FitResult]:
    sentences, rows = _synthetic(40, seed=1)
    tune_sentences, tune_rows = _synthetic(12, seed=2)
    # Word vectors of width 8 (two layers of a 4-dimensional encoder); the rows are given, nothing is encoded.
    vectors = TokenVectors(HashEncoder(tmp_path / "encoder", dim=4))
    job = TaggerFit(config, vectors, rows, [s.tags for s in sentences], tune_sentences, tune_rows)
    return job, Trainer(schedule(config), device="cpu").fit(job)


def test_the_tagger_is_fitted_by_the_trainer_from_its_seed(tmp_path: Path) -> None:
    config = TaggerConfig(widths=(16, 16), dropout=0.1, epochs=6, lr=2e-2, batch_size=8, average_from=3, seed=5)
    # The recipe: Adam, no decay, clipping at 5, averaged weights competing from average_from.
    assert schedule(config) == Schedule(6, 2e-2, 0.0, "adam", "none", clip=5.0, average_from=3, seed=5)
    (a, ra), (b, rb) = _fit(config, tmp_path), _fit(config, tmp_path)
    # The network is built inside the trainer's seeded run: the seed sets its weights and its batches.
    assert all(torch.equal(v, b.module.state_dict()[k]) for k, v in a.module.state_dict().items())
    assert [r["loss"] for r in ra.history] == [r["loss"] for r in rb.history]
    other, _ = _fit(replace(config, seed=6), tmp_path)
    assert not torch.equal(other.module.emit.weight, a.module.emit.weight)
    # Every epoch is scored on the tune sentences, the averaged weights too from epoch 3; the best is kept.
    assert all("tune_exact_f1_averaged" not in r for r in ra.history[:2])
    assert all("tune_exact_f1" in r and "tune_exact_f1_averaged" in r for r in ra.history[2:])
    scores = [(r[k], k.endswith("averaged")) for r in ra.history for k in r if k.startswith("tune_exact_f1")]
    assert ra.best_score == max(s for s, _ in scores)
    assert ra.averaged in {averaged for s, averaged in scores if s == ra.best_score}
    assert ra.history[ra.best_epoch - 1]["selected"] == ("averaged" if ra.averaged else True)
    # The kept weights are the selected ones: they score the selected F1 again on the tune sentences.
    picked = a.select()
    assert picked is not None and picked.score == pytest.approx(ra.best_score)
    assert ra.best_score > 0.8  # a pattern this plain is learnt


def test_tagger_batches_are_length_buckets_in_shuffled_order(tmp_path: Path) -> None:
    config = TaggerConfig(batch_size=8)
    sentences, rows = _synthetic(30, seed=3)
    job = TaggerFit(config, TokenVectors(HashEncoder(tmp_path / "encoder", dim=4)), rows, [s.tags for s in sentences])
    first, second = job.batches(np.random.default_rng(0)), job.batches(np.random.default_rng(1))
    assert sorted(i for b in first for i in b) == list(range(30)) and len(first) == 4
    assert sorted(map(tuple, first)) == sorted(map(tuple, second)) and first != second
    lengths = [[len(rows[i]) for i in b] for b in sorted(first, key=lambda b: len(rows[b[0]]))]
    assert all(max(x) <= min(y) for x, y in itertools.pairwise(lengths))  # no bucket overlaps the next in length
    assert job.select() is None  # no tune sentences: nothing to choose an epoch with


def test_nearest_claim_linker() -> None:
    comps = [
        Component("T1", "own_claim", ((0, 10),)),
        Component("T2", "data", ((12, 20),)),
        Component("T3", "background_claim", ((100, 120),)),
        Component("T4", "data", ((5000, 5010),)),
    ]
    # T2 supports the closest claim; T4 is too far from any claim.
    assert nearest_claim_relations(comps) == [("supports", "T2", "T1")]


def test_empty_document_predicts_nothing() -> None:
    config = TaggerConfig()
    tagger = ComponentTagger(BiLstmCrf(8, config), config, TokenVectors())
    assert tagger.predict(BratDocument("x"), "") == []
