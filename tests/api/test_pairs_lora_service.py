"""The pair task's LoRA cross-encoder recipe (profile ``cross-lora``) trained through the task and
answered through the application's task service, on a tiny random encoder."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from api.services import tasks as service
from api.settings import Settings
from gnn.encoder import TextEncoder
from gnn.pairs import TASK as PAIRS
from gnn.pairs_lora import CONFIG, RECIPE
from gnn.task import Resources, TextPair
from ontology.errors import ModelError
from tests.gnn.test_pairs_lora import AIF_DIR, PAIRS_ASKED, _tiny_bert


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_bert(tmp_path_factory.mktemp("tiny-bert-2"), layers=2)


def test_train_pairs_with_the_lora_profile_writes_a_card_and_answers_through_the_service(
    tiny: Path, tmp_path: Path
) -> None:
    config = replace(PAIRS.recipes.config("cross-lora", seed=5), epochs=1, max_steps=1, batch=4, max_length=32)
    resources = Resources(tmp_path / "cache", encoder_dir=tiny, data_files=(AIF_DIR,))
    found = PAIRS.examples(service.read_records("aif", [AIF_DIR]), config)
    report = PAIRS.train(found, tmp_path / "lora", config, "cross-lora", resources)
    assert report.card.model == "pair-cross-lora" and report.card.encoder == tiny.name
    assert report.card.hyperparameters["rank"] == 8 and (tmp_path / "lora" / CONFIG).is_file()
    service.forget()
    asked = [TextPair(a, b) for a, b in PAIRS_ASKED]
    answered = service.predict(Settings(), "pairs", asked, model=tmp_path / "lora")
    direct = PAIRS.load(tmp_path / "lora", encoder=TextEncoder(tiny), device="cpu")
    assert [p.label for p in answered] == [p.label for p in PAIRS.predict(direct, asked)]
    service.forget()
    with pytest.raises(ModelError, match="adapts an encoder"):
        RECIPE.load(tmp_path / "lora", None, "cpu")
