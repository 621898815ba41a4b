"""experiments/paraphrase_decision.py: the rules compared on saved scores (no model trained)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from experiments.paraphrase_decision import figures, lowest, main, top_down
from gnn.paraphrase import NEVER

pytestmark = pytest.mark.unit


def test_top_down_stops_at_the_first_dip_where_lowest_goes_past_it() -> None:
    # From the top: 10 right, then a dip of 6 wrong, then 11 right and 1 wrong.
    gold = [True] * 10 + [False] * 6 + [True] * 11 + [False]
    scores = [1.0 - i / 100 for i in range(len(gold))]
    assert top_down(scores, gold) == scores[14]  # 10 of 15 right; one more pair and the calls fall under 2/3
    assert lowest(scores, gold) < top_down(scores, gold)  # the precision over all 28 is 21/28 = 0.75
    assert top_down(scores, [False] * len(gold)) == NEVER


def test_saved_scores_are_scored_per_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inner = [i / 40 for i in range(40)]
    fold: dict[str, list[Any]] = {
        "inner": inner,
        "inner_gold": [s >= 0.5 for s in inner],
        "inner_groups": [f"I{i}" for i in range(40)],
        "inner_features": [[s, 1 - s] for s in inner],
        "test": [0.1, 0.6, 0.9, 0.3],
        "test_features": [[0.1, 0.9], [0.6, 0.4], [0.9, 0.1], [0.3, 0.7]],
        "test_gold": [False, True, True, True],
    }
    row = figures(lowest, fold)
    # The lowest inner cut right 2/3 of the time: 0.25 (20 of the 30 pairs at or above it).
    assert row["cut"] == 0.25 and (row["precision"], row["recall"]) == (1.0, 1.0)
    assert row["floor_f1"] == pytest.approx(6 / 7)
    saved = tmp_path / "scores.json"
    saved.write_text(json.dumps([fold, fold]))
    main(["--from", str(saved)])
    out = capsys.readouterr().out
    assert [line.split(":")[0] for line in out.splitlines()] == ["lowest", "top-down", "margin", "pair-head"]
