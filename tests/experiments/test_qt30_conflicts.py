"""experiments/qt30_conflicts.py: decodings of the same fold networks, tuned on tuning maps, scored on held-out ones."""

from __future__ import annotations

import itertools
import json
import pickle
from pathlib import Path

import numpy as np

from experiments.qt30_conflicts import main
from gnn.relations.qt30 import LABELS, MapTensors


def _map(name: str, attacked: bool) -> tuple[MapTensors, np.ndarray]:
    """Six I-nodes, three supports; an attacked map also has two attacks, one the model ranks first
    and one below none, and every unrelated pair of a map without attacks looks more like an attack
    than that one (as in tests/gnn/test_relations_decoding.py)."""
    gold = {(0, 1): "RA", (2, 3): "RA", (4, 5): "RA"} | ({(1, 4): "CA", (3, 5): "CA"} if attacked else {})
    pairs = np.array(list(itertools.permutations(range(6), 2)), dtype=np.int64)
    rows = {k: [0.3, 0.6, 0.05, 0.05] for k in gold if gold[k] == "RA"}
    if attacked:
        rows |= {(1, 4): [0.4, 0.05, 0.5, 0.05], (3, 5): [0.75, 0.05, 0.15, 0.05]}
    rest = [0.85, 0.1, 0.03, 0.02] if attacked else [0.7, 0.05, 0.2, 0.05]
    probs = np.array([rows.get((int(i), int(j)), rest) for i, j in pairs])
    labels = np.array([LABELS.index(gold.get((int(i), int(j)), "none")) for i, j in pairs])
    empty = np.zeros((0, 0), dtype=np.float32)
    t = MapTensors(name, [], empty, np.zeros((3, 0), np.int64), pairs, empty, labels, gold, 6, 0, empty)
    return t, probs


def _fold(k: int) -> dict[str, object]:
    dev = [_map(f"dev{k}-{m}", m < 3) for m in range(10)]
    test = [_map(f"test{k}-{m}", m < 2) for m in range(6)]
    return {
        "dev": [t for t, _ in dev],
        "dev_p": [p for _, p in dev],
        "test": [t for t, _ in test],
        "test_p": [p for _, p in test],
        "epochs": [1],
        "hp": {"weight_power": 0.5},
        "seconds": 0.0,
    }


def test_the_gated_conflict_decoding_finds_the_attacks_the_earlier_shares_rule_misses(tmp_path: Path) -> None:
    for k in range(2):
        (tmp_path / f"fold{k}.pkl").write_bytes(pickle.dumps(_fold(k)))
    decoders = ["general", "shares_before", "conflict_shares", "conflict_shares_nogate"]
    for k in range(2):
        out = tmp_path / f"d{k}.json"
        main(
            ["decode", "--save", str(tmp_path), "--files", f"fold{k}.pkl", "--decoders", *decoders, "--json", str(out)]
        )
    main(["combine", str(tmp_path / "d0.json"), str(tmp_path / "d1.json"), "--json", str(tmp_path / "all.json")])
    report = json.loads((tmp_path / "all.json").read_text())
    assert report["folds"] == 2 and set(report["decodings"]) == set(decoders)
    figures = {name: d["figures"] for name, d in report["decodings"].items()}
    assert figures["conflict_shares"]["ca_recall"]["folds"] == [1.0, 1.0]
    assert figures["shares_before"]["ca_recall"]["mean"] == 0.5
    assert figures["conflict_shares_nogate"]["ca_recall"]["mean"] == 0.5
    assert figures["conflict_shares"]["general_f1"]["mean"] > figures["shares_before"]["general_f1"]["mean"]
    pooled = report["decodings"]["conflict_shares"]["pooled"]["CA"]
    assert pooled == {"gold": 8, "predicted": 8, "right": 8}
    chosen = report["decodings"]["conflict_shares"]["chosen"]
    assert all(c["gate"] is not None and c["directions"] == "one" for c in chosen)


def test_mix_decodes_the_mean_of_two_runs_probabilities(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for d in (one, two):
        d.mkdir()
    fold = _fold(0)
    (one / "fold0.pkl").write_bytes(pickle.dumps(fold))
    # The second run ranks nothing: all its probabilities are none's, so the mean halves every relation's.
    flat = {**fold, "dev_p": [np.tile([1.0, 0, 0, 0], (len(p), 1)) for p in fold["dev_p"]]}  # type: ignore[arg-type]
    flat["test_p"] = [np.tile([1.0, 0, 0, 0], (len(p), 1)) for p in fold["test_p"]]  # type: ignore[arg-type]
    (two / "fold0.pkl").write_bytes(pickle.dumps(flat))
    alone, mixed = tmp_path / "alone.json", tmp_path / "mixed.json"
    main(["decode", "--save", str(one), "--decoders", "general", "--json", str(alone)])
    main(["decode", "--save", str(one), "--mix", str(two), "--decoders", "general", "--json", str(mixed)])
    a, m = (json.loads(p.read_text())["decodings"]["general"] for p in (alone, mixed))
    assert a["pooled"]["RA"]["right"] > 0
    # The biases tuned on the mixed tuning maps are higher, to make up for the halved relations.
    assert m["chosen"][0]["bias"][1] > a["chosen"][0]["bias"][1]
