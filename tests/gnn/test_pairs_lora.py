"""The pair task's LoRA cross-encoder recipe (profile ``cross-lora``) on a tiny random encoder."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from safetensors.torch import load_file

from gnn.encoder import TextEncoder
from gnn.pairs import LABELS, PairExample
from gnn.pairs import TASK as PAIRS
from gnn.pairs_lora import RECIPE, WEIGHTS, LoraConfig
from gnn.task import Resources
from ontology.formats.registry import SAMPLES

AIF_DIR = SAMPLES / "dialam-2024" / "my_train"
PAIRS_ASKED = [
    ("Taxes must rise.", "No, they must not."),
    ("Prices rose.", "Prices went up."),
    ("We should build more homes.", "Rents are too high because there are too few homes."),
]


def _tiny_bert(where: Path, layers: int) -> Path:
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


def test_the_lora_recipe_trains_a_step_saves_only_adapters_and_loads_the_same_probabilities(
    tiny: Path, tmp_path: Path
) -> None:
    config = replace(PAIRS.recipes.config("cross-lora", seed=5), epochs=1, max_steps=1, batch=4, max_length=32)
    assert isinstance(config, LoraConfig) and PAIRS.recipe(config) is RECIPE
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
    again = PAIRS.load(tmp_path / "model", encoder=TextEncoder(tiny), device="cpu")
    assert np.allclose(again.probabilities(PAIRS_ASKED), before, atol=1e-6)
    assert again.bias == model.bias
    # The encoder the process shares with other tasks is copied, never adapted in place.
    _, shared = resources.encoder(None).load_transformer()
    assert not any("lora" in name for name, _ in shared.named_parameters())


def test_the_lora_recipe_reads_both_orders_of_the_symmetric_labels_with_mirror() -> None:
    from gnn.pairs_lora import _pair_rows

    found = _examples()
    plain = _pair_rows(found, mirror=False)
    mirrored = _pair_rows(found, mirror=True)
    backwards = {(e.target, e.source) for e in found if e.label in ("attack", "rephrase")}
    assert len(mirrored) == len(plain) + sum(e.label in ("attack", "rephrase") for e in found)
    assert {p for p, _ in mirrored[len(plain) :]} == backwards
    assert {LABELS[k] for _, k in mirrored[len(plain) :]} == {"attack", "rephrase"}
