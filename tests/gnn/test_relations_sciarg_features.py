"""Sci-Arg pair features: context words, nearest-claim features, one-target decoding."""

from __future__ import annotations

import numpy as np

from gnn.relations.sciarg_features import (
    LABELS,
    N_BASE_PAIR_FEATURES,
    N_BASE_PROP_FEATURES,
    Comp,
    Paper,
    component_edges,
    edge_width,
    fit_edge_vocab,
    fit_vocab,
    gap_tokens,
    left_tokens,
    paper_tensors,
    slice_text,
)
from gnn.relations.sciarg_task import decode_paper

TEXT = "Results vary. Therefore, the method is robust, since errors stay small <b>in</b> practice."


def _paper() -> Paper:
    def span(s: str) -> tuple[int, int]:
        start = TEXT.index(s)
        return start, start + len(s)

    comps = []
    for k, (label, s) in enumerate(
        [("data", "Results vary"), ("own_claim", "the method is robust"), ("data", "errors stay small")]
    ):
        start, end = span(s)
        comps.append(Comp(f"T{k + 1}", label, s, start, end, 0 if k == 0 else 1))
    # Two sentences, as the loader's Sentence records give them.
    pieces = [(0, 13, TEXT[0:13]), (14, len(TEXT), TEXT[14:])]
    return Paper("A01", comps, {(2, 1): "supports", (0, 1): "supports"}, pieces)


def test_context_words_are_sliced_from_the_sentences() -> None:
    paper = _paper()
    a, b, c = paper.comps
    assert slice_text(paper, a.end, b.start) == ". Therefore, "
    assert {"therefore", ",", "."} <= gap_tokens(paper, a, b)
    assert "since" in gap_tokens(paper, b, c)
    assert "since" in left_tokens(paper, c)
    assert "<tag>" not in gap_tokens(paper, a, b)


def test_vocab_widens_node_and_pair_features() -> None:
    paper = _paper()
    vocab = fit_vocab([paper] * 3, window=8)
    assert "therefore" in vocab and "since" in vocab
    plain = paper_tensors(paper, 8)
    rich = paper_tensors(paper, 8, vocab)
    assert plain.pair_feats.shape[1] == N_BASE_PAIR_FEATURES
    assert rich.pair_feats.shape[1] == N_BASE_PAIR_FEATURES + len(vocab)
    assert rich.prop_feats.shape[1] == N_BASE_PROP_FEATURES + len(vocab)
    k = [tuple(p) for p in rich.pairs.tolist()].index((2, 1))
    assert rich.pair_feats[k, N_BASE_PAIR_FEATURES + vocab.index("since")] == 1.0
    assert rich.pair_feats[k, N_BASE_PAIR_FEATURES + vocab.index("therefore")] == 0.0
    assert rich.labels[k] == LABELS.index("supports")
    assert np.isfinite(rich.pair_feats).all()


def test_component_edges_read_first_last_tokens_and_punctuation() -> None:
    paper = _paper()
    edge_vocab = fit_edge_vocab([paper] * 3)
    assert edge_vocab == {
        "first": ["results", "the", "errors"],
        "second": ["vary", "method", "stay"],
        "last": ["vary", "robust", "small"],
    }
    index = {key: {t: k for k, t in enumerate(v)} for key, v in edge_vocab.items()}
    rows = [component_edges(paper, c, index) for c in paper.comps]
    assert all(len(r) == edge_width(edge_vocab) == 9 + 4 for r in rows)
    # "the method is robust": first "the", second "method", last "robust".
    assert rows[1][[1, 3 + 1, 6 + 1]].tolist() == [1.0, 1.0, 1.0] and rows[1][:9].sum() == 3
    # Boundaries: starts the text / after ", " / after ", since "; "." / "," / none follows.
    assert rows[0][9:].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert rows[1][9:].tolist() == [0.0, 0.0, 1.0, 1.0]
    assert rows[2][9:].tolist() == [0.0, 0.0, 0.0, 0.0]
    vocab = fit_vocab([paper] * 3, window=8)
    rich = paper_tensors(paper, 8, vocab, edge_vocab)
    assert rich.prop_feats.shape[1] == N_BASE_PROP_FEATURES + len(vocab) + 13
    assert np.array_equal(rich.prop_feats[:, -13:], np.stack(rows))
    # Without an edge vocabulary (models trained before it) the node features keep their old width.
    assert paper_tensors(paper, 8, vocab).prop_feats.shape[1] == N_BASE_PROP_FEATURES + len(vocab)


def test_one_target_keeps_the_most_confident_support() -> None:
    pairs = np.array([[0, 1], [0, 2], [1, 2]])
    probs = np.array(
        [
            [0.2, 0.8, 0.0, 0.0, 0.0],  # 0 supports 1, confident
            [0.4, 0.6, 0.0, 0.0, 0.0],  # 0 supports 2, less so
            [0.1, 0.0, 0.0, 0.9, 0.0],  # 1 parts_of_same 2 (symmetric: not restricted)
        ]
    )
    bias = [0.0] * len(LABELS)
    both = decode_paper(pairs, probs, bias, one_target=False)
    assert {k: v[0] for k, v in both.items()} == {(0, 1): "supports", (0, 2): "supports", (1, 2): "parts_of_same"}
    one = decode_paper(pairs, probs, bias)
    assert {k: v[0] for k, v in one.items()} == {(0, 1): "supports", (1, 2): "parts_of_same"}


def test_one_parts_of_same_partner_on_each_side() -> None:
    pairs = np.array([[0, 1], [0, 2], [1, 2]])
    probs = np.array(
        [
            [0.1, 0.0, 0.0, 0.9, 0.0],  # 0 ~ 1, confident
            [0.3, 0.0, 0.0, 0.7, 0.0],  # 0 ~ 2: 0 already has a later partner
            [0.2, 0.0, 0.0, 0.8, 0.0],  # 1 ~ 2: a chain 0 ~ 1 ~ 2 is allowed
        ]
    )
    one = decode_paper(pairs, probs, [0.0] * len(LABELS))
    assert {k: v[0] for k, v in one.items()} == {(0, 1): "parts_of_same", (1, 2): "parts_of_same"}


_VOCAB_SCRIPT = """
import json
from ontology.formats.registry import SAMPLES
from ontology.formats.sciarg import load_sciarg
from gnn.relations.sciarg_task import papers_from_records
from gnn.relations.sciarg_features import fit_vocab
bundle = load_sciarg(sorted((SAMPLES / "sciarg" / "compiled_corpus").glob("*.ann")))
print(json.dumps(fit_vocab(papers_from_records(bundle.nodes, bundle.edges), 8)))
"""


def test_the_context_vocabulary_does_not_depend_on_string_hashing() -> None:
    # Equal counts used to follow a set's iteration order, which changes with PYTHONHASHSEED: the
    # feature columns of a retrained model came out permuted on the shipped sample.
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    vocabs = []
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        out = subprocess.run([sys.executable, "-c", _VOCAB_SCRIPT], env=env, capture_output=True, text=True, check=True)
        vocabs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert len(vocabs[0]) > 20 and vocabs[0] == vocabs[1] == vocabs[2]


def test_lsa_terms_tied_at_the_cut_are_kept_in_word_order() -> None:
    from gnn.relations.text import Lsa

    # Four terms in two texts each, two kept: which two used to follow a set's iteration order.
    texts = ["gamma alpha delta beta", "beta delta alpha gamma", "epsilon zeta"]
    assert set(Lsa.fit(texts, dim=1, max_terms=2).vocab) == {"alpha", "beta"}
