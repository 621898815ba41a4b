"""Discourse parser ensembles: averaged probabilities, and weights that save and load per member."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from gnn.discourse.data import Dialogue, dialogues_from_bundle
from gnn.discourse.train import (
    PROFILES,
    WEIGHTS,
    ParserConfig,
    _batches,
    _collate,
    load_model,
    probabilities,
    refit_parser,
    save_model,
    train_parser,
)
from gnn.encoder import TextEncoder
from gnn.modelcard import ModelCard
from graphstore.loaders.dialogue_json import load_dialogue_json
from graphstore.loaders.registry import SAMPLES
from ontology.errors import ModelError


@pytest.fixture(scope="module")
def dialogues() -> list[Dialogue]:
    path = SAMPLES / "molweni" / "DP" / "dev.json"
    return dialogues_from_bundle(load_dialogue_json([path], "molweni"), source="dev.json")


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> TextEncoder:
    return TextEncoder(cache_dir=tmp_path_factory.mktemp("emb"))


def _train(dialogues: list[Dialogue], encoder: TextEncoder, members: int):
    config = ParserConfig(seed=3, **{**PROFILES["tiny"], "members": members})
    return train_parser(dialogues[:6], dialogues[6:], encoder, config)


def _card() -> ModelCard:
    return ModelCard(task="discourse", model="test", version="0", weights=[])


def test_members_differ_and_their_probabilities_are_averaged(dialogues: list[Dialogue], encoder: TextEncoder) -> None:
    model, history = _train(dialogues, encoder, members=2)
    assert len(model.nets) == 2
    # Each member has its own seed: same architecture, different weights.
    a, b = (dict(n.named_parameters())["inp.1.weight"] for n in model.nets)
    assert not torch.equal(a, b)
    assert {(row["member"], row["seed"]) for row in history} == {(0, 3), (1, 4)}
    data = model.graphs(dialogues)
    batch = _collate(data, _batches(data, 32, False, np.random.default_rng(0))[0], "cpu")
    with torch.inference_mode():
        link, sense = probabilities(model.nets, batch)
        singles = [probabilities([n], batch) for n in model.nets]
    assert torch.allclose(link, (singles[0][0] + singles[1][0]) / 2)
    assert torch.allclose(sense, (singles[0][1] + singles[1][1]) / 2)
    assert torch.allclose(link.sum(1), torch.ones(link.size(0)))
    # The ensemble is not just one of its members.
    assert not torch.allclose(link, singles[0][0])


def test_an_ensemble_saves_and_loads_every_member(
    dialogues: list[Dialogue], encoder: TextEncoder, tmp_path: Path
) -> None:
    model, _ = _train(dialogues, encoder, members=2)
    save_model(model, tmp_path, _card())
    keys = torch.load(tmp_path / WEIGHTS, weights_only=True).keys()
    assert {k.split(".")[0] for k in keys} == {"0", "1"}
    loaded = load_model(tmp_path, encoder=encoder, device="cpu")
    assert len(loaded.nets) == 2 and loaded.config.members == 2
    before = [[(p.x, p.y, p.sense) for p in ps] for ps in model.predict(dialogues)]
    after = [[(p.x, p.y, p.sense) for p in ps] for ps in loaded.predict(dialogues)]
    # Saved in half precision: the decisions, not every last bit of the scores, survive.
    assert before == after


def test_one_network_keeps_the_single_model_layout(
    dialogues: list[Dialogue], encoder: TextEncoder, tmp_path: Path
) -> None:
    model, history = _train(dialogues, encoder, members=1)
    assert "member" not in history[0]
    save_model(model, tmp_path, _card())
    keys = set(torch.load(tmp_path / WEIGHTS, weights_only=True))
    # Parameter names as model directories written before ensembles have them.
    assert keys == set(model.nets[0].state_dict())
    assert len(load_model(tmp_path, encoder=encoder, device="cpu").nets) == 1


def test_a_refit_trains_every_member_on_train_and_tune_for_its_best_tuning_epochs(
    dialogues: list[Dialogue], encoder: TextEncoder
) -> None:
    config = ParserConfig(seed=3, **{**PROFILES["tiny"], "members": 2, "epochs": 3, "patience": 3})
    train, tune = dialogues[:6], dialogues[6:]
    model, history = train_parser(train, tune, encoder, config)
    refit, rows = refit_parser(model, history, train, tune)
    assert len(refit.nets) == 2 and refit.vocab == model.vocab and refit.config.thresholds == model.config.thresholds
    for member in (0, 1):
        own = [r for r in history if r["member"] == member]
        best = max(own, key=lambda r: r["tune_link_f1"] + r["tune_link_rel_f1"])["epoch"]
        again = [r for r in rows if r["member"] == member]
        # Epochs 1..best of the same seed, without tuning scores (the tuning dialogues are trained on).
        assert [r["epoch"] for r in again] == list(range(1, best + 1))
        assert all(r["refit"] and r["seed"] == 3 + member and "tune_link_f1" not in r for r in again)
        selected, retrained = (
            dict(n.named_parameters())["inp.1.weight"] for n in (model.nets[member], refit.nets[member])
        )
        assert not torch.equal(selected, retrained)
    assert len(refit.predict(dialogues)) == len(dialogues)
    # A model trained without tuning dialogues has no tuning scores, so nothing to refit up to.
    untuned, untuned_history = train_parser(train, [], encoder, config)
    assert not any("tune_link_f1" in r or r.get("selected") for r in untuned_history)
    with pytest.raises(ModelError, match="no tuning scores"):
        refit_parser(untuned, untuned_history, train, tune)
