"""experiments/pairs_lora.py: the pair task's LoRA cross-encoder on a tiny random encoder (training,
saving, loading, the card, the script's folds), and the product that no longer knows the recipe."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from safetensors.torch import load_file

from api.services import tasks as service
from api.settings import Settings
from experiments.pairs_lora import CONFIG, RECIPE, TASK, WEIGHTS, LoraConfig, _pair_rows, load, main
from gnn.encoder import TextEncoder
from gnn.pairs import LABELS, PairExample
from gnn.pairs import TASK as PAIRS
from gnn.pairs_cross import CrossConfig
from gnn.task import Resources, TextPair
from ontology.errors import ModelError
from ontology.formats.registry import SAMPLES

pytestmark = pytest.mark.model  # trains models (on a tiny random encoder)
AIF_DIR = SAMPLES / "dialam-2024" / "my_train"
PAIRS_ASKED = [
    ("Taxes must rise.", "No, they must not."),
    ("Prices rose.", "Prices went up."),
    ("We should build more homes.", "Rents are too high because there are too few homes."),
]
SMOKE = {"epochs": 1, "max_steps": 1, "batch": 4, "max_length": 32}
"""One batch of one epoch: enough to move the adapters off their start."""


def _tiny_bert(where: Path, layers: int) -> Path:
    """A random BERT of ``layers`` layers of width 16 over the sample's words (no download)."""
    import torch
    from transformers import BertConfig, BertModel

    words = sorted({w for p in AIF_DIR.glob("*.json") for w in p.read_text(encoding="utf-8").lower().split()})[:400]
    where.mkdir(parents=True, exist_ok=True)
    (where / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n", encoding="utf-8"
    )
    config = BertConfig(
        vocab_size=405, hidden_size=16, num_hidden_layers=layers, num_attention_heads=2, intermediate_size=32
    )
    torch.manual_seed(0)
    BertModel(config).save_pretrained(where)
    return where


def _examples() -> list[PairExample]:
    texts = [
        ("Taxes must rise.", "No, they must not.", "attack"),
        ("Schools need money.", "Teachers are leaving.", "support"),
        ("Prices rose.", "Prices went up.", "rephrase"),
        ("The weather is fine.", "Ministers met today.", "none"),
    ]
    return [PairExample(a, b, lab, f"episode{k % 3}") for k in range(3) for a, b, lab in texts]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_bert(tmp_path_factory.mktemp("tiny-bert-2"), layers=2)


def test_the_product_has_no_lora_profile_and_the_experiment_reuses_the_cross_encoder_schedule() -> None:
    assert "cross-lora" not in PAIRS.recipes.profiles
    assert not any(isinstance(c, LoraConfig) for c in PAIRS.recipes.profiles.values())
    config = replace(LoraConfig(seed=5), **SMOKE)
    assert TASK.recipe(config) is RECIPE
    # Every other config trains with the product's recipe of it.
    for name in ("full", "cross"):
        product = PAIRS.recipes.config(name)
        assert type(TASK.recipe(product)) is type(PAIRS.recipe(product)) and TASK.recipe(product) is not RECIPE
    # The schedule is the product cross-encoder's, read off the LoRA recipe's own settings.
    mine, product = config.schedule(), CrossConfig(epochs=1, lr=1e-3, seed=5).schedule()
    assert mine == product and mine.decay == "warmup-linear" and mine.autocast


def test_the_lora_recipe_trains_a_step_saves_only_adapters_and_loads_the_same_probabilities(
    tiny: Path, tmp_path: Path
) -> None:
    config = replace(LoraConfig(seed=5), **SMOKE)
    resources = Resources(tmp_path / "cache", encoder_dir=tiny)
    found = _examples()
    model, training = RECIPE.fit(found[:8], found[8:], config, resources, refit=False)
    assert training.fit.best_epoch == 1 and len(training.history) == 1
    before = model.probabilities(PAIRS_ASKED)
    assert before.shape == (3, len(LABELS)) and np.allclose(before.sum(axis=1), 1.0)
    model.save(tmp_path / "model")
    saved = load_file(str(tmp_path / "model" / WEIGHTS))
    # Only the adapters and the head travel; one step moved the adapters off their zero start.
    assert saved and all("lora_" in k or k.startswith("head.") for k in saved)
    assert any(float(v.abs().sum()) > 0 for k, v in saved.items() if "lora_b" in k)
    again = TASK.load(tmp_path / "model", encoder=TextEncoder(tiny), device="cpu")
    assert np.allclose(again.probabilities(PAIRS_ASKED), before, atol=1e-6)
    assert again.bias == model.bias
    # The encoder the process shares with other tasks is copied, never adapted in place.
    _, shared = resources.encoder(None).load_transformer()
    assert not any("lora" in name for name, _ in shared.named_parameters())


def test_the_lora_recipe_reads_both_orders_of_the_symmetric_labels_with_mirror() -> None:
    found = _examples()
    plain = _pair_rows(found, mirror=False)
    mirrored = _pair_rows(found, mirror=True)
    backwards = {(e.target, e.source) for e in found if e.label in ("attack", "rephrase")}
    assert len(mirrored) == len(plain) + sum(e.label in ("attack", "rephrase") for e in found)
    assert {p for p, _ in mirrored[len(plain) :]} == backwards
    assert {LABELS[k] for _, k in mirrored[len(plain) :]} == {"attack", "rephrase"}


def test_training_through_the_task_writes_a_card_that_loads_and_the_product_refuses_it(
    tiny: Path, tmp_path: Path
) -> None:
    config = replace(LoraConfig(seed=5), **SMOKE)
    resources = Resources(tmp_path / "cache", encoder_dir=tiny, data_files=(AIF_DIR,))
    found = TASK.examples(service.read_records("aif", [AIF_DIR]), config)
    report = TASK.train(found, tmp_path / "lora", config, "cross-lora", resources)
    assert report.card.model == "pair-cross-lora" and report.card.encoder == tiny.name
    assert report.card.hyperparameters["rank"] == 8 and (tmp_path / "lora" / CONFIG).is_file()
    asked = [TextPair(a, b) for a, b in PAIRS_ASKED]
    # Read back through the encoder its card names (fingerprint checked), as read directly.
    through_card = load(tmp_path / "lora", tmp_path / "cache")
    direct = TASK.load(tmp_path / "lora", encoder=TextEncoder(tiny), device="cpu")
    assert [p.label for p in TASK.predict(through_card, asked)] == [p.label for p in TASK.predict(direct, asked)]
    assert np.allclose(through_card.probabilities(PAIRS_ASKED), direct.probabilities(PAIRS_ASKED), atol=1e-6)
    # The application's task service serves the product's pair task, which has no such recipe.
    service.forget()
    with pytest.raises(ModelError, match="not a pair model"):
        service.predict(Settings(), "pairs", asked, model=tmp_path / "lora")
    service.forget()
    with pytest.raises(ModelError, match="adapts an encoder"):
        RECIPE.load(tmp_path / "lora", None, "cpu")
    with pytest.raises(ModelError, match="not a LoRA pair model"):
        load(tmp_path / "cache", tmp_path / "cache")


def test_the_script_runs_one_fold_as_the_cross_validation_runs_it(tiny: Path, tmp_path: Path) -> None:
    args = ["--data", str(AIF_DIR), "--encoder", str(tiny), "--folds", "3", "--epochs", "1", "--max-steps", "1"]
    assert main([*args, "--fold", "0", "--json", str(tmp_path / "fold.json")]) == 0
    assert main([*args, "--json", str(tmp_path / "cv.json")]) == 0
    fold = json.loads((tmp_path / "fold.json").read_text(encoding="utf-8"))
    cv = json.loads((tmp_path / "cv.json").read_text(encoding="utf-8"))
    assert fold["fold"] == 0 and fold["sizes"]["test"] == sum(t["gold"] for t in fold["labels"].values())
    assert fold["sizes"]["train"] and fold["sizes"]["tune"] and fold["config"]["trained_layers"] == 1
    assert len(cv["folds"]) == 3 and cv["profile"] == "cross-lora" and cv["encoder"] == tiny.name
    # The fold alone is the cross-validation's first fold: same pairs, same choices, same figures.
    assert fold["chosen"] == cv["folds"][0]["chosen"]
    assert fold["scores"] == pytest.approx(cv["folds"][0]["figures"], abs=1e-4)
    with pytest.raises(SystemExit):
        main([*args, "--fold", "3"])
