"""The paraphrase service with the fine-tuned profile: train, evaluate and predict a file end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.services import paraphrase as service
from gnn.modelcard import read_card
from gnn.paraphrase import FineTunedHighlighter
from ontology.formats.registry import SAMPLES

pytestmark = pytest.mark.model  # trains a model
SAMPLE = SAMPLES / "contextdep"
TRAIN, DEV = SAMPLE / "ANON_TRAIN_TOKEN-annotations.tsv", SAMPLE / "ANON_DEV_TOKEN-annotations.tsv"


def test_service_trains_the_finetune_profile_and_serves_it(tmp_path: Path) -> None:
    card = service.train([TRAIN, DEV], tmp_path / "model", profile="finetune", seed=2)
    stored = read_card(tmp_path / "model", task="paraphrase")
    assert stored.weights == [FineTunedHighlighter.WEIGHTS, "paraphrase_config.json"] == card.weights
    assert stored.hyperparameters["finetune_layers"] == 6 and stored.hyperparameters["profile"] == "finetune"
    assert stored.encoder == "all-MiniLM-L6-v2" and stored.encoder_fingerprint and stored.encoder_dir is None
    assert "fine-tuned" in stored.notes
    assert set(stored.metrics) >= {"tune", "heldout", "best_epoch", "history", "bytes"}
    result = service.evaluate(tmp_path / "model", DEV)
    assert result["pairs"] == 7 and 0.0 <= result["f1"] <= 1.0
    summary = service.predict_file(DEV, tmp_path / "pred.tsv", tmp_path / "model")
    lines = (tmp_path / "pred.tsv").read_text(encoding="utf-8").splitlines()
    assert summary["pairs"] == 7 and len(lines) == 8 and lines[0].startswith("QID\tparaphrase")
