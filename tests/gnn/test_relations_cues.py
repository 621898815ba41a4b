"""Conflict cues of QT30 candidate pairs (negation, contrast openers, disagreement, polarity flip, replies)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gnn.relations.argmap import ArgMap, Loc, Prop, maps_from_records
from gnn.relations.pipeline import RelationData, train_relations
from gnn.relations.qt30 import N_CUE_FEATURES, N_PAIR_FEATURES, map_tensors
from gnn.relations.qt30_run import PROFILES, classify_pairs, load_qt30, widths
from ontology.formats.aif import load_aif
from ontology.formats.registry import SAMPLES

# Column order of gnn.relations.qt30.conflict_cues.
COLUMNS = (
    "neg_source",
    "opens_source",
    "disagrees_source",
    "neg_target",
    "opens_target",
    "disagrees_target",
    "flip_overlap",
    "other_speaker",
    "answers",
)


def _exchange() -> ArgMap:
    """Anna claims, Anna goes on, Ben contradicts her ("But that's not true, taxes did not rise"), Anna agrees."""
    locs = [
        Loc("L0", "L0", 0, "Anna : Taxes rose last year", "Anna", False),
        Loc("L1", "L1", 1, "Anna : and people noticed it", "Anna", False),
        Loc("L2", "L2", 2, "Ben : But that\u2019s not true, taxes did not rise last year", "Ben", False),
        Loc("L3", "L3", 3, "Anna : fine", "Anna", False),
    ]
    props = [
        Prop("I0", "I0", 10, "Taxes rose last year"),
        Prop("I1", "I1", 11, "people noticed taxes rising"),
        Prop("I2", "I2", 12, "taxes did not rise last year"),
        Prop("I3", "I3", 13, "Anna accepts it"),
    ]
    return ArgMap("m", "m", locs, props, [(0, 1), (1, 2), (2, 3)], {(2, 0): "CA"}, anchors=[0, 1, 2, 3])


def _cues(cues: bool = True) -> tuple[dict[tuple[int, int], dict[str, float]], np.ndarray]:
    t = map_tensors(_exchange(), cues=cues)
    rows = {
        (int(i), int(j)): dict(zip(COLUMNS, t.pair_feats[k, N_PAIR_FEATURES:].tolist(), strict=True))
        for k, (i, j) in enumerate(t.pairs)
    }
    return rows, t.pair_feats


def test_cues_are_appended_only_when_asked() -> None:
    assert map_tensors(_exchange()).pair_feats.shape[1] == N_PAIR_FEATURES
    _, feats = _cues()
    assert feats.shape[1] == N_PAIR_FEATURES + N_CUE_FEATURES
    # The structural columns are the same with and without the cues.
    np.testing.assert_array_equal(feats[:, :N_PAIR_FEATURES], map_tensors(_exchange()).pair_feats)


def test_a_contradicting_reply_carries_its_cues() -> None:
    rows, _ = _cues()
    attack = rows[(2, 0)]
    assert attack["neg_source"] == 1.0  # "not", and the typographic "that's not"
    assert attack["opens_source"] == 1.0  # "But ..."
    assert attack["disagrees_source"] == 1.0  # "not true"
    assert attack["neg_target"] == 0.0
    assert attack["opens_target"] == 0.0
    # One side negated, the same words otherwise: overlap {taxes, rise?, last, year} of the union.
    assert 0.3 < attack["flip_overlap"] < 1.0
    assert attack["other_speaker"] == 1.0
    # Ben answers Anna's last turn (L0 and L1 are one turn of hers).
    assert attack["answers"] == 1.0


def test_replies_are_read_by_turn_and_direction() -> None:
    rows, _ = _cues()
    # Anna's own propositions: same speaker, no reply, no flip.
    assert rows[(1, 0)]["other_speaker"] == 0.0
    assert rows[(1, 0)]["answers"] == 0.0
    assert rows[(1, 0)]["flip_overlap"] == 0.0
    # Anna's earlier turn does not answer Ben's later one; her last locution does.
    assert rows[(0, 2)]["other_speaker"] == 1.0
    assert rows[(0, 2)]["answers"] == 0.0
    assert rows[(3, 2)]["answers"] == 1.0
    # The target side of the attack is read as such when the pair is turned round.
    assert rows[(0, 2)]["neg_target"] == 1.0
    assert rows[(0, 2)]["opens_target"] == 1.0


def test_a_recipe_with_cues_trains_stores_and_predicts_with_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = load_aif(sorted((SAMPLES / "dialam-2024" / "my_train").glob("*.json")))
    maps = maps_from_records(bundle.nodes, bundle.edges)
    # The quick profile (LSA vectors, no encoder) with the full profile's cues.
    monkeypatch.setitem(PROFILES, "quick", {**PROFILES["quick"], "cues": True})
    card = train_relations(RelationData(qt30=maps), tmp_path, epochs=1, seed=1)
    assert card.hyperparameters["qt30"]["cues"] is True
    assert card.hyperparameters["qt30"]["pair_dim"] == N_PAIR_FEATURES + N_CUE_FEATURES
    model = load_qt30(tmp_path)
    assert model.cues
    preds = model.predict(maps, "shares")
    assert len(preds) == len(maps)
    # Text pairs are read with the same columns.
    assert len(classify_pairs(model, [("Taxes rose.", "No, taxes did not rise.")])) == 1


def test_the_full_profile_reads_the_cues_and_older_models_load_without() -> None:
    assert PROFILES["full"]["cues"] is True and not PROFILES["quick"].get("cues")
    assert widths(PROFILES["full"]) == {"pair_dim": N_PAIR_FEATURES + N_CUE_FEATURES}
    assert widths(PROFILES["quick"]) == {}
