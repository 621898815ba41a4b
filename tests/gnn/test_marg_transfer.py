"""M-Arg debates read by the QT30 network: windows, the pair each window decides, scoring, debates."""

from __future__ import annotations

import csv
import itertools

import pytest

from gnn.relations.marg_task import (
    WINDOW,
    Pair,
    debates_from_records,
    owner,
    score_transfer,
    window_starts,
)
from ontology.formats.registry import CORPORA, SAMPLES

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier


def test_windows_by_hand() -> None:
    assert window_starts(1) == [0]
    assert window_starts(WINDOW) == [0]
    assert window_starts(WINDOW + 1) == [0, 1]
    assert window_starts(30) == [0, 8, 14]
    assert window_starts(40) == [0, 8, 16, 24]
    # Window middles 7.5, 15.5, 23.5, 31.5: sentences 12 and 13 sit nearest the second.
    assert owner(12, 13, [0, 8, 16, 24]) == 1
    assert owner(0, 8, [0, 8, 16, 24]) == 0
    assert owner(30, 39, [0, 8, 16, 24]) == 3


@pytest.mark.parametrize("n", [2, 9, 16, 17, 23, 24, 25, 31, 57, 130])
def test_every_pair_the_network_may_relate_lies_inside_the_window_that_decides_it(n: int) -> None:
    starts = window_starts(n)
    assert starts[0] == 0 and min(n, starts[-1] + WINDOW) == n
    assert all(0 < b - a <= WINDOW // 2 for a, b in itertools.pairwise(starts))
    for i in range(n):
        # The QT30 network's candidates: I-nodes at most 8 apart (and TA-linked ones, here consecutive).
        for j in range(i + 1, min(n, i + 9)):
            s = starts[owner(i, j, starts)]
            assert s <= i and j < s + WINDOW, (n, i, j, s)


def _pair(k: int, label: str) -> Pair:
    return Pair(f"p{k}", f"a{k}", f"b{k}", "x", "y", False, label)


def test_score_transfer_by_hand() -> None:
    pairs = [_pair(0, "Support"), _pair(1, "Attack"), _pair(2, "Neither"), _pair(3, "Neither")]
    predicted = [
        [("b0", "a0", "Support", 0.6), ("a1", "b1", "Support", 0.7)],  # pair 0 in reverse: the task is undirected
        [("b1", "a1", "Attack", 0.4), ("a2", "b2", "Support", 0.9), ("a0", "b3", "Attack", 0.9)],
    ]
    got = score_transfer(pairs, predicted)
    # gold S A N N, predicted S A S N: Neither P 1 R 1/2, Support P 1/2 R 1, Attack 1.
    assert got["macro_f1"] == pytest.approx(round((2 / 3 + 2 / 3 + 1) / 3, 4))
    assert got["support_attack_f1"] == pytest.approx(round((2 / 3 + 1) / 2, 4))
    assert got["predicted"] == {"Neither": 1, "Support": 2, "Attack": 1}
    assert got["pairs"] == 4


def test_debates_keep_the_transcript_order_and_speakers() -> None:
    spec = CORPORA["m-arg"]
    bundle = spec.load(spec.find(SAMPLES))
    debates = debates_from_records(bundle.nodes)
    with (SAMPLES / "m-arg" / "dataset_context_definition.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert sum(len(d.sentences) for d in debates) == len(rows)
    for d in debates:
        part = d.id.rsplit(":", 1)[-1]
        mine = sorted((r for r in rows if r["id"][1:3] == part), key=lambda r: r["id"])
        assert list(d.sentences) == [r["id"] for r in mine]
        assert list(d.texts) == [r["text"] for r in mine]
        # The corpus marks two sentences it could not attribute with speaker "error".
        # Each gets a speaker of its own, not one shared stand-in.
        expected = [r["speaker"] if r["speaker"] != "error" else f"unknown speaker {r['id']}" for r in mine]
        assert list(d.speakers) == expected
    assert any(r["speaker"] == "error" for r in rows)
