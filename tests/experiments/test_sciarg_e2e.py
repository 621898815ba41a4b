"""experiments/sciarg_e2e.py: each gold relation's fate and each predicted relation's fault, on hand-made papers."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from experiments.sciarg_e2e import decompose, refold, triples
from gnn.relations.sciarg_features import LABELS, Comp, Paper


def _paper(comps: list[tuple[str, int, int]], gold: dict[tuple[int, int], str] | None = None) -> Paper:
    return Paper(
        "A99",
        [Comp(f"T{k + 1}", label, "", start, end, 0) for k, (label, start, end) in enumerate(comps)],
        dict(gold or {}),
    )


GOLD = _paper(
    [("data", 0, 10), ("own_claim", 20, 30), ("data", 40, 50), ("own_claim", 60, 70), ("data", 80, 90)],
    {(0, 1): "supports", (2, 3): "supports", (4, 3): "contradicts", (2, 0): "parts_of_same"},
)


def test_each_gold_relation_is_lost_to_its_first_cause_and_each_wrong_prediction_has_its_fault() -> None:
    # T1 exact; T2 exact but typed background_claim; T3 and T4 exact; T5 cut short (80, 85).
    pred = _paper(
        [("data", 0, 10), ("background_claim", 20, 30), ("data", 40, 50), ("own_claim", 60, 70), ("data", 80, 85)]
    )
    rels = {
        (0, 1): "supports",  # found, though T2's type is wrong
        (3, 2): "supports",  # the gold pair in the other direction
        (4, 3): "contradicts",  # an end that is no gold span
        (0, 3): "supports",  # gold spans, no gold relation
    }
    out = decompose(GOLD, pred, rels)
    assert out["gold_relations"] == {
        "supports: found (a component type wrong)": 1,
        "supports: relation given another type or direction": 1,
        "contradicts: segmentation (1 end missed)": 1,
        "parts_of_same: relation missed (right components)": 1,
    }
    assert out["wrong_predictions"] == {
        "supports: gold pair, another type or direction": 1,
        "contradicts: an end is no gold span": 1,
        "supports: gold spans, no gold relation": 1,
    }


def test_symmetric_relations_match_in_either_direction() -> None:
    pred = _paper([("data", 0, 10), ("data", 40, 50)])
    assert triples(pred, {(1, 0): "parts_of_same"}) == triples(GOLD, {(2, 0): "parts_of_same"})
    out = decompose(GOLD, pred, {(0, 1): "parts_of_same"})
    assert out["gold_relations"]["parts_of_same: found"] == 1
    assert not out["wrong_predictions"]


def test_refold_chooses_the_biases_on_the_other_folds_and_scores_the_held_papers(tmp_path: Path) -> None:
    # Four papers, one candidate pair each: the model gives its gold supports 0.4 against 0.6 for
    # no relation, so zero biases predict nothing and any fold's tuning must learn to say supports.
    papers = [
        Paper(f"A{k}", [Comp("T1", "data", "", 0, 5, 0), Comp("T2", "own_claim", "", 10, 20, 0)]) for k in range(4)
    ]
    for p in papers:
        p.gold[(0, 1)] = "supports"
    probs = np.zeros((1, len(LABELS)), dtype=np.float32)
    probs[0, 0], probs[0, LABELS.index("supports")] = 0.6, 0.4
    outputs = [(SimpleNamespace(pairs=np.array([[0, 1]])), probs) for _ in papers]
    saved = {"names": {}, "parts": {"test": {"gold": papers, "pred": papers, "outputs": outputs}}}
    (tmp_path / "heldout.pkl").write_bytes(pickle.dumps(saved))
    shipped = dict.fromkeys(LABELS, 0.0)
    (tmp_path / "heldout.json").write_text(json.dumps({"biases": {"shipped": shipped}}), encoding="utf-8")
    out = refold(tmp_path, 2)
    assert sorted(n for fold in out["folds"] for n in fold["papers"]) == ["A0", "A1", "A2", "A3"]
    assert out["shipped"]["folds"] == [0.0, 0.0]
    assert out["predicted_bias"]["folds"] == [1.0, 1.0]
    assert all(fold["bias"]["supports"] > 0 for fold in out["folds"])


def test_the_experiments_folds_are_those_of_the_product_end_to_end_command(monkeypatch: Any) -> None:
    import gnn.relations.sciarg_cv as sciarg_cv
    from experiments.sciarg_e2e import fold_names, fold_plan_of
    from gnn.protocol import FoldOutcome
    from gnn.relations.family import TrainOptions

    # Papers in a shuffled file order: both sides map fold indices back to names through it.
    names = [f"A{i:02d}" for i in (7, 3, 30, 1, 12, 25, 9, 18, 32, 2, 21, 15, 28, 5, 11, 24)]
    names += [f"A{i:02d}" for i in range(1, 33) if f"A{i:02d}" not in names]
    kept = [Paper(n, [], {}) for n in names]
    seen: dict[int, dict[str, list[str]]] = {}

    def capture(papers: Any, fold: Any, options: Any, end_to_end: Any) -> FoldOutcome:
        parts = ("train", "tune", "test")
        seen[fold.index] = {part: sorted(papers[i].name for i in getattr(fold, part)) for part in parts}
        return FoldOutcome(figures={"R_micro.f1": 0.0})

    monkeypatch.setattr(sciarg_cv, "run_fold", capture)
    options = TrainOptions("full", 0, "cpu", None, log=lambda line: None)
    sciarg_cv.cross_validate_sciarg(kept, options, 5)
    plan = fold_plan_of(kept)
    assert [fold_names(plan, k, kept) for k in range(5)] == [seen[k] for k in range(5)]
    assert all(len(seen[k]["tune"]) > 0 for k in range(5))
