"""experiments/paraphrase_finetune.py: the fine-tuned paraphrase highlighter on the ContextDeP sample (training,
saving, loading), and the product refusing to serve one."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from experiments.paraphrase_finetune import (
    PROFILES,
    FineTuneConfig,
    FineTunedHighlighter,
    load_finetuned,
    main,
    train_finetuned,
)
from gnn.contextdep import pairs_from_records
from gnn.encoder import TextEncoder
from gnn.paraphrase import ParaphraseHighlighter, load_highlighter
from gnn.paraphrase_eval import ParaphrasePair, split_by_interview
from gnn.registry import shipped_model
from ontology.errors import ModelError
from ontology.formats.contextdep import load_contextdep
from ontology.formats.registry import SAMPLES

pytestmark = pytest.mark.model  # trains models
SAMPLE = SAMPLES / "contextdep"
TRAIN, DEV = SAMPLE / "ANON_TRAIN_TOKEN-annotations.tsv", SAMPLE / "ANON_DEV_TOKEN-annotations.tsv"


@pytest.fixture(scope="module")
def parts() -> dict[str, list[ParaphrasePair]]:
    # The train file trains; the dev file is split by interview into tuning and held-out pairs.
    tune, heldout = split_by_interview(pairs_from_records(load_contextdep([DEV]).nodes))
    return {"train": pairs_from_records(load_contextdep([TRAIN]).nodes), "tune": tune, "heldout": heldout}


@pytest.fixture(scope="module")
def trained(parts: dict[str, list[ParaphrasePair]]) -> tuple[FineTunedHighlighter, list[float]]:
    config = replace(FineTuneConfig(**PROFILES["finetune"]), finetune_layers=2, epochs=4, seed=5)
    model, result, _ = train_finetuned(parts["train"], parts["tune"], config)
    assert isinstance(model, FineTunedHighlighter)
    return model, [row["loss"] for row in result.history]


def test_training_lowers_the_loss_and_changes_only_the_top_layers(
    trained: tuple[FineTunedHighlighter, list[float]],
) -> None:
    model, losses = trained
    assert len(losses) == 4 and losses[-1] < losses[0]
    assert model.frozen == 4 and len(model.layers) == 2
    # The trained copies moved away from the encoder's top layers, which stay as packaged.
    _, fresh = TextEncoder(None).load_transformer()
    for k, layer in enumerate(model.layers):
        own = model.base.encoder.layer[model.frozen + k].state_dict()
        packaged = fresh.encoder.layer[model.frozen + k].state_dict()
        assert all(torch.equal(own[name], packaged[name]) for name in own)
        assert any(not torch.equal(v, own[name]) for name, v in layer.state_dict().items())


def test_predictions_give_one_probability_per_token(
    trained: tuple[FineTunedHighlighter, list[float]], parts: dict[str, list[ParaphrasePair]]
) -> None:
    model, _ = trained
    pairs = parts["heldout"]
    for pair, pred in zip(pairs, model.predict(pairs), strict=True):
        assert pred.qid == pair.qid
        assert len(pred.guest_probs) == len(pair.guest) and len(pred.host_probs) == len(pair.host)
        assert all(0.0 < p < 1.0 for p in pred.guest_probs + pred.host_probs)
        assert pred.paraphrase == (min(max(pred.guest_probs), max(pred.host_probs)) >= 0.5)


def test_save_and_load_give_the_same_predictions(
    trained: tuple[FineTunedHighlighter, list[float]], parts: dict[str, list[ParaphrasePair]], tmp_path: Path
) -> None:
    model, _ = trained
    size = model.save(tmp_path)
    weights = tmp_path / FineTunedHighlighter.WEIGHTS
    assert size == weights.stat().st_size + (tmp_path / "paraphrase_config.json").stat().st_size
    loaded = load_finetuned(tmp_path)
    assert isinstance(loaded, FineTunedHighlighter) and loaded.config.bias == model.config.bias
    pairs = parts["heldout"]
    for a, b in zip(model.predict(pairs), loaded.predict(pairs), strict=True):
        np.testing.assert_allclose(a.guest_probs + a.host_probs, b.guest_probs + b.host_probs, atol=1e-6)


def test_the_product_serves_the_frozen_model_and_refuses_a_fine_tuned_one(
    trained: tuple[FineTunedHighlighter, list[float]], tmp_path: Path
) -> None:
    # The shipped configuration still names the fine-tuning keys (all 0): it loads as before.
    assert isinstance(load_highlighter(shipped_model("paraphrase")), ParaphraseHighlighter)
    trained[0].save(tmp_path)
    with pytest.raises(ModelError, match=re.escape("experiments/paraphrase_finetune.py")):
        load_highlighter(tmp_path)


def test_load_refuses_a_directory_without_weights(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=re.escape("paraphrase_config.json")):
        load_finetuned(tmp_path)
    (tmp_path / "paraphrase_config.json").write_text(
        '{"finetune_layers": 1, "layers": [3, 6], "bias": 0.0}', encoding="utf-8"
    )
    with pytest.raises(FileNotFoundError, match=re.escape(FineTunedHighlighter.WEIGHTS)):
        load_finetuned(tmp_path)


def test_lora_trains_only_adapters_and_stores_only_them(parts: dict[str, list[ParaphrasePair]], tmp_path: Path) -> None:
    config = replace(FineTuneConfig(**PROFILES["finetune"]), lora_rank=4, epochs=2, seed=7, encoder_lr=1e-3)
    model, result, _ = train_finetuned(parts["train"], parts["tune"], config)
    assert isinstance(model, FineTunedHighlighter) and len(result.history) == 2
    _, fresh = TextEncoder(None).load_transformer()
    query = model.layers[0].attention.self.query
    packaged = fresh.encoder.layer[model.frozen].attention.self.query
    # The wrapped linear keeps the encoder's weight; the adapter's second factor moved from zero.
    assert torch.equal(query.base.weight, packaged.weight)
    assert query.lora_b.abs().sum() > 0
    stored = model.stored_layer_state()
    assert stored and all("lora_" in name or "LayerNorm" in name for name in stored)
    size = model.save(tmp_path)
    assert size < 2_000_000  # adapters and head only: the whole six layers weigh about 43 MB
    loaded = load_finetuned(tmp_path)
    pairs = parts["heldout"]
    for a, b in zip(model.predict(pairs), loaded.predict(pairs), strict=True):
        np.testing.assert_allclose(a.guest_probs + a.host_probs, b.guest_probs + b.host_probs, atol=1e-6)


def test_a_pair_with_an_empty_side_gets_probabilities_for_the_other_side_only(
    trained: tuple[FineTunedHighlighter, list[float]],
) -> None:
    model, _ = trained
    pairs = [ParaphrasePair("no-guest", [], ["so", "what", "now"]), ParaphrasePair("no-host", ["we", "said"], [])]
    no_guest, no_host = model.predict(pairs)
    assert (len(no_guest.guest_probs), len(no_guest.host_probs)) == (0, 3)
    assert (len(no_host.guest_probs), len(no_host.host_probs)) == (2, 0)
    assert not no_guest.paraphrase and not no_host.paraphrase


def test_the_script_runs_on_the_sample_and_saves_what_it_selected(tmp_path: Path) -> None:
    # The smoke run the benchmark list used to make: one layer, one epoch, a few pairs.
    args = ["--data-dir", str(SAMPLE), "--epochs", "1", "--train-layers", "1", "--limit", "6"]
    assert main([*args, "--save", str(tmp_path / "m"), "--json", str(tmp_path / "out.json")]) == 0
    out = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert out["train_layers"] == 1 and out["selected"]["epoch"] == 1 and len(out["history"]) == 1
    assert set(out["frozen"]) == {"tune", "held_out"}
    assert load_finetuned(tmp_path / "m").config.finetune_layers == 1


def test_the_script_cross_validates_the_recipe_by_interview(tmp_path: Path) -> None:
    args = ["--data-dir", str(SAMPLE), "--epochs", "1", "--train-layers", "1", "--cv", "2"]
    assert main([*args, "--json", str(tmp_path / "cv.json")]) == 0
    out = json.loads((tmp_path / "cv.json").read_text(encoding="utf-8"))
    assert len(out["figures"]["f1"]["folds"]) == 2 and out["pairs"] > 0 and out["interviews"] >= 2
    assert all(fold["chosen"]["epoch"] == 1 for fold in out["folds"])
