"""Model directories and their cards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gnn.modelcard import CARD_FILE, ModelCard, read_card, write_card
from ontology.errors import ModelError

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier


def _card(**over: object) -> ModelCard:
    fields: dict = {"task": "discourse", "model": "m", "version": "1", "weights": ["w.pt"]}
    fields.update(over)
    return ModelCard(**fields)


def test_round_trip(tmp_path: Path) -> None:
    (tmp_path / "w.pt").write_bytes(b"x")
    card = _card(metrics={"test": {"link_f1": 0.5}}, training_seconds=1.5, git_commit="abc")
    write_card(tmp_path, card)
    back = read_card(tmp_path, task="discourse")
    assert back == card
    assert back.created_at.endswith("+00:00")


def test_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="no such directory"):
        read_card(tmp_path / "nope")
    with pytest.raises(ModelError, match=f"{CARD_FILE} is missing"):
        read_card(tmp_path)
    with pytest.raises(ModelError, match="do not exist"):
        write_card(tmp_path, _card())
    (tmp_path / "w.pt").write_bytes(b"x")
    write_card(tmp_path, _card())
    with pytest.raises(ModelError, match="not a 'relations' model"):
        read_card(tmp_path, task="relations")
    (tmp_path / "w.pt").unlink()
    with pytest.raises(ModelError, match=r"w\.pt"):
        read_card(tmp_path)
    (tmp_path / CARD_FILE).write_text("{not json")
    with pytest.raises(ModelError, match=str(tmp_path / CARD_FILE)):
        read_card(tmp_path)
    (tmp_path / CARD_FILE).write_text(json.dumps({"task": "x"}))
    with pytest.raises(ModelError, match="lacks"):
        read_card(tmp_path)
    (tmp_path / CARD_FILE).write_text(json.dumps({"task": "x", "model": "m", "version": "1", "weights": [], "z": 1}))
    with pytest.raises(ModelError, match="unknown model card field"):
        read_card(tmp_path)
