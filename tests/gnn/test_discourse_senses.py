"""Discourse sense levers: the class-balanced sense loss, the decoding's prior correction chosen on the
tuning dialogues, and a pass 2 that reads each candidate parent's own sense; each saves and loads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from gnn.discourse.data import Dialogue, dialogues_from_bundle
from gnn.discourse.graphs import SENSES
from gnn.discourse.train import (
    PROFILES,
    SHIFTS,
    ParserConfig,
    _batches,
    _collate,
    balance_weights,
    load_model,
    save_model,
    sense_shares,
    shift_senses,
    train_parser,
)
from gnn.encoder import TextEncoder
from gnn.modelcard import ModelCard
from ontology.formats.dialogue_json import load_dialogue_json
from ontology.formats.registry import SAMPLES


@pytest.fixture(scope="module")
def dialogues() -> list[Dialogue]:
    path = SAMPLES / "molweni" / "DP" / "dev.json"
    return dialogues_from_bundle(load_dialogue_json([path], "molweni"), source="dev.json")


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> TextEncoder:
    return TextEncoder(cache_dir=tmp_path_factory.mktemp("emb"))


def test_sense_shares_count_every_sense_once_more(dialogues: list[Dialogue]) -> None:
    shares = sense_shares(dialogues)
    links = sum(len(d.relations) for d in dialogues)
    counts = {s: sum(1 for d in dialogues for _x, _y, t in d.relations if t is s) for s in SENSES}
    assert len(shares) == len(SENSES)
    assert sum(shares) == pytest.approx(1.0)
    for i, s in enumerate(SENSES):
        assert shares[i] == pytest.approx((counts[s] + 1) / (links + len(SENSES)))


def test_balanced_weights_favour_rare_senses_and_keep_the_mean_loss() -> None:
    shares = [0.7, 0.2, 0.1]
    assert balance_weights(shares, 0.0) is None
    w = balance_weights(shares, 0.5)
    assert w is not None
    assert w[2] > w[1] > w[0]
    assert float(w[2] / w[0]) == pytest.approx((0.7 / 0.1) ** 0.5)
    # Mean 1 over the training links: the sense loss keeps its scale against the link loss.
    assert float((w * torch.tensor(shares)).sum()) == pytest.approx(1.0)


def test_the_prior_correction_moves_the_decision_towards_a_rare_sense() -> None:
    config = ParserConfig(sense_share=[0.8, 0.2] + [0.0001] * (len(SENSES) - 2))
    sense = torch.zeros(1, 1, len(SENSES))
    sense[0, 0, 0], sense[0, 0, 1] = 0.6, 0.4
    assert torch.equal(shift_senses(sense, config), sense)  # exponent 0: unchanged
    config.sense_shift = 1.0
    shifted = shift_senses(sense, config)
    assert int(shifted[0, 0].argmax()) == 1  # 0.6 / 0.8 < 0.4 / 0.2
    assert float(shifted.sum()) == pytest.approx(1.0)


def test_levers_train_choose_the_shift_on_tune_and_round_trip(
    dialogues: list[Dialogue], encoder: TextEncoder, tmp_path: Path
) -> None:
    config = ParserConfig(
        seed=3, **{**PROFILES["tiny"], "members": 1}, parent_sense=True, sense_balance=0.5, tune_sense_shift=True
    )
    model, _ = train_parser(dialogues[:6], dialogues[6:], encoder, config)
    assert model.nets[0].parent_sense is not None
    assert config.sense_shift in SHIFTS
    assert config.sense_share == pytest.approx(sense_shares(dialogues[:6]))
    # The chosen exponent is the best on the tuning dialogues (ties to the smaller one).
    chosen = model.evaluate(dialogues[6:]).link_rel.f1
    for b in SHIFTS:
        model.config.sense_shift = b
        assert model.evaluate(dialogues[6:]).link_rel.f1 <= chosen + 1e-12
    model.config.sense_shift = config.sense_shift = SHIFTS[-1]
    save_model(model, tmp_path, ModelCard(task="discourse", model="test", version="0", weights=[]))
    loaded = load_model(tmp_path, encoder=encoder, device="cpu")
    assert loaded.config.parent_sense and loaded.config.sense_shift == SHIFTS[-1]
    assert loaded.config.sense_share == pytest.approx(config.sense_share, rel=1e-6)
    assert loaded.nets[0].parent_sense is not None
    assert _fp16_close(model, loaded, dialogues)


def _fp16_close(model, loaded, dialogues: list[Dialogue]) -> bool:
    """Weights ship in half precision: the loaded probabilities stay within its rounding."""
    from gnn.discourse.train import probabilities

    data = model.graphs(dialogues)
    batch = _collate(data, _batches(data, 32, False, np.random.default_rng(0))[0], "cpu")
    with torch.inference_mode():
        a = probabilities(model.nets, batch)
        b = probabilities(loaded.nets, batch)
    return torch.allclose(a[0], b[0], atol=5e-3) and torch.allclose(a[1], b[1], atol=5e-3)


def test_parent_sense_reads_the_candidates_own_sense(dialogues: list[Dialogue], encoder: TextEncoder) -> None:
    """Changing the embedding of one sense changes pass 2's scores only where a candidate has that sense."""
    config = ParserConfig(seed=3, **{**PROFILES["tiny"], "members": 1}, parent_sense=True)
    model, _ = train_parser(dialogues[:6], [], encoder, config)
    net = model.nets[0].eval()
    data = model.graphs(dialogues)
    batch = _collate(data, _batches(data, 32, False, np.random.default_rng(0))[0], "cpu")
    with torch.inference_mode():
        before = net(batch)
        assert net.parent_sense is not None
        net.parent_sense.weight[len(SENSES)] += 1.0  # the "no own sense" row: the root and the first EDUs
        after = net(batch)
    assert torch.equal(before["link1"], after["link1"])
    assert not torch.equal(before["sense2"], after["sense2"])
