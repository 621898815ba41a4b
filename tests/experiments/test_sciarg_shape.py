"""experiments/sciarg_shape.py: the token shape and citation features, and the tagger that reads them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from experiments.sciarg_shape import BOUNDARY_WORDS, N_SHAPE, ShapeFit, citation_tokens, shape_features, shaped_rows
from gnn.components import TaggerConfig
from gnn.components import _Sentence as Sentence
from gnn.components.net import TokenVectors, input_width, paper_rows
from tests.gnn.fakes import HashEncoder

TEXT = "Following Desbrun and Gascuel , 1996 ) , we use that of Foster et al . [ 2001 ] in 2003 ."
WORDS = TEXT.split(" ")


def _on(features: np.ndarray, column: int) -> list[str]:
    return [w for w, row in zip(WORDS, features, strict=True) if row[column]]


def test_shape_features_mark_citations_brackets_and_boundary_words() -> None:
    f = shape_features(WORDS)
    assert f.shape == (len(WORDS), N_SHAPE) and set(np.unique(f)) <= {0.0, 1.0}
    at = {w: i for i, w in reversed(list(enumerate(WORDS)))}  # first place of each word
    assert _on(f, 0) == ["Following", "Desbrun", "Gascuel", "Foster"]  # capitalised
    assert _on(f, 4) == ["1996", "2001", "2003"]  # years
    assert _on(f, 6) == ["2001", "]"]  # inside brackets: after "[" up to its "]" (the ")" closes none)
    assert _on(f, 7) == ["et", "al"]
    # A year with names (or a bracket) before it is a citation with its names, commas, brackets
    # and what closes it; "in 2003" is not.
    cited = set(_on(f, 8))
    assert {"Desbrun", "Gascuel", "1996", ")", "Foster", "al", "[", "2001", "]"} <= cited
    assert "2003" not in cited and "in" not in cited and "we" not in cited
    assert list(citation_tokens(WORDS)) == list(f[:, 8].astype(bool))
    assert _on(f, 9) == ["Following"] and _on(f, 10) == ["."]
    assert f[at["["], 14] == f[at[")"], 15] == f[at[","], 16] == f[at["."], 17] == 1.0
    for word in ("we", "that", "of", "in"):  # one column per boundary word, whatever its case
        assert _on(f, 20 + BOUNDARY_WORDS.index(word)) == [word]
    assert shape_features(["In"])[0, 20 + BOUNDARY_WORDS.index("in")] == 1.0


def test_the_shaped_rows_widen_the_shipped_ones(tmp_path: Path) -> None:
    sentences = [Sentence([(0, 2), (3, 4)], ["In", "("], 0.0)]
    vectors = [np.ones((2, 2), np.float32)]
    shaped, plain = shaped_rows(sentences, vectors)[0], paper_rows(sentences, vectors)[0]
    assert shaped.shape == (2, input_width(2) + N_SHAPE)
    assert np.array_equal(shaped[:, : input_width(2)], plain)
    assert np.array_equal(shaped[:, input_width(2) :], shape_features(["In", "("]))
    fit = ShapeFit(TaggerConfig(widths=(8, 4)), TokenVectors(HashEncoder(tmp_path / "encoder", dim=1)), [shaped], [])
    assert fit.module.project.in_features == input_width(2) + N_SHAPE
