"""The out-of-context pair task: examples from QT30 maps, features, bias tuning, a trained model's
directory, and the grouped cross-validation on the shipped samples."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gnn.encoder import TextEncoder
from gnn.pairs import (
    LABELS,
    TASK,
    PairConfig,
    PairModel,
    PairVectors,
    _matrix,
    challenge_score,
    cue_flags,
    decide,
    examples_from_maps,
    feature_width,
    overlap_features,
    read_challenge,
    said_texts,
    train_pairs,
    tune_bias,
)
from gnn.relations.argmap import ArgMap, maps_from_records
from gnn.task import Resources
from ontology.aiftext import split_speaker
from ontology.errors import ModelError
from ontology.formats.aif import load_aif
from ontology.formats.registry import SAMPLES

CHALLENGE = Path(__file__).resolve().parents[1] / "data" / "challenge" / "relations.jsonl"


@pytest.fixture(scope="module")
def maps() -> list[ArgMap]:
    bundle = load_aif(sorted((SAMPLES / "dialam-2024" / "my_train").glob("*.json")))
    return maps_from_records(bundle.nodes, bundle.edges)


@pytest.fixture(scope="module")
def vectors() -> PairVectors:
    return PairVectors(TextEncoder())


def test_examples_are_every_gold_relation_and_unrelated_pairs_of_the_same_map(maps: list[ArgMap]) -> None:
    found = examples_from_maps(maps, none_share=1.0, seed=3)
    gold = sum(len(m.gold) for m in maps)
    labels = [e.label for e in found]
    assert len(found) - labels.count("none") == gold
    assert set(labels) <= set(LABELS) and labels.count("none") >= 2 * len(maps)
    assert {e.map_name for e in found} == {m.name for m in maps}
    # The same seed draws the same pairs; texts are what was said, never empty.
    assert found == examples_from_maps(maps, none_share=1.0, seed=3)
    assert all(e.source and e.target for e in found)
    amap = maps[0]
    said, anchors = said_texts(amap)
    assert any(k >= 0 for k in anchors)
    for i, k in enumerate(anchors):
        wording = split_speaker(amap.locutions[k].text)[1] if k >= 0 else amap.props[i].text
        assert said[i] == wording
    # A none pair is never a gold relation in either direction.
    related = {(e.source, e.target) for e in found if e.label != "none" and e.map_name == amap.name}
    assert related
    nones = {(e.source, e.target) for e in found if e.label == "none" and e.map_name == amap.name}
    assert not nones & (related | {(b, a) for a, b in related})


def test_cue_flags_read_replies_that_disagree() -> None:
    flags = cue_flags("No, that's wrong because it isn't true?")
    assert len(flags) == feature_width(0, True) // 2
    assert flags[0] == 1.0 and flags[2] == 1.0  # "no", "n't"
    assert sum(cue_flags("The weather is lovely today.")) == 0.0


def test_overlap_features_tell_a_restatement_from_a_denial() -> None:
    same = overlap_features("Taxes on petrol should rise.", "Petrol taxes should rise.")
    denial = overlap_features("Petrol taxes should not rise at all.", "Petrol taxes should rise.")
    other = overlap_features("The train was late again.", "Petrol taxes should rise.")
    assert same[0] == 1.0 and same[3] == 0.0
    assert denial[3] == 1.0 and denial[4] > 0
    assert other[:3] == [0.0, 0.0, 0.0]


def test_tuned_biases_never_lower_the_macro_f1() -> None:
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 4, size=200)
    probs = rng.dirichlet(np.ones(4), size=200)
    probs[np.arange(200), gold] += 0.3 * (gold == 2)  # attack separable, but never the argmax alone
    probs[:, 0] += 0.5
    probs /= probs.sum(axis=1, keepdims=True)
    bias, score = tune_bias(probs, gold)
    from gnn.relations.metrics import macro_f1

    plain = macro_f1(gold.tolist(), decide(probs, [0.0] * 4).tolist(), range(4))
    assert score >= plain and bias[0] == 0.0


def test_a_trained_model_saves_loads_and_predicts_the_same(
    maps: list[ArgMap], vectors: PairVectors, tmp_path: Path
) -> None:
    found = examples_from_maps(maps)
    config = PairConfig(hidden=16, epochs=2, seed=1)
    model, run = train_pairs(found[::2], found[1::2], config, vectors)
    assert len(_matrix(vectors, found, config).y) == len(found)
    assert 1 <= run.fit.best_epoch <= 2 and len(model.bias) == len(LABELS)
    size = model.save(tmp_path)
    assert 0 < size < 2_000_000
    again = PairModel.load(tmp_path, vectors.encoder)
    pairs = [("We must act now.", "No, that is simply wrong."), ("Prices rose.", "Prices went up.")]
    assert np.allclose(model.probabilities(pairs), again.probabilities(pairs), atol=1e-6)
    for label, p, probs in again.predict(pairs):
        assert label in LABELS and probs[label] == p and abs(sum(probs.values()) - 1) < 1e-6
    # Directories that name a removed variant load when it is off (as the shipped one does) and are
    # refused when it is on: their head was trained on other features.
    meta = json.loads((tmp_path / "pairs_config.json").read_text())
    meta["config"]["symmetric"] = False
    (tmp_path / "pairs_config.json").write_text(json.dumps(meta))
    assert np.allclose(PairModel.load(tmp_path, vectors.encoder).probabilities(pairs), again.probabilities(pairs))
    meta["config"]["joint"] = True
    (tmp_path / "pairs_config.json").write_text(json.dumps(meta))
    with pytest.raises(ModelError, match=r"no longer has \(joint\)"):
        PairModel.load(tmp_path, vectors.encoder)
    (tmp_path / "pairs_config.json").write_text("{}")
    with pytest.raises(ModelError, match="not a pair model"):
        PairModel.load(tmp_path, vectors.encoder)


def test_cross_validation_folds_by_episode(maps: list[ArgMap], tmp_path: Path) -> None:
    found = examples_from_maps(maps)
    out = TASK.cross_validate(found, PairConfig(hidden=8, epochs=1), Resources(tmp_path), folds=2, seed=0)
    assert out.items == len(found) and out.groups == len({e.group for e in found}) >= 2
    assert {"macro_f1", "support_attack_f1", "f1_attack"} <= set(out.figures)
    assert sum(row.gold for row in out.labels.values()) == len(found)
    for row in out.folds:
        assert "epoch" in row["chosen"] and len(row["chosen"]["bias"]) == len(LABELS)


def test_challenge_file_is_read_and_scored(tmp_path: Path) -> None:
    for path in (CHALLENGE, CHALLENGE.with_name("relations-2.jsonl")):
        written = read_challenge(path)
        assert len(written) >= 30 and {r.label for r in written} == {"support", "attack", "none"}, path
        assert len({r.id for r in written}) == len(written) and all(r.reason for r in written), path
    rows = read_challenge(CHALLENGE)
    result = challenge_score(rows, [r.label if r.label != "attack" else "none" for r in rows])
    attacks = sum(r.label == "attack" for r in rows)
    assert result.right == len(rows) - attacks and result.per_label["attack"]["right"] == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "source": "a", "target": "b", "label": "agree", "reason": "r"}\n')
    with pytest.raises(ModelError, match=r"bad\.jsonl:1"):
        read_challenge(bad)
