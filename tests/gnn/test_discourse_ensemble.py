"""Discourse parser ensembles: averaged probabilities, networks fitted by the one Trainer, and weights that save
and load (safetensors) per member."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from gnn.discourse.data import Dialogue, dialogues_from_bundle
from gnn.discourse.graphs import build_vocab
from gnn.discourse.train import (
    PROFILES,
    WEIGHTS,
    ParserConfig,
    ParserFit,
    _batches,
    _collate,
    graphs_for,
    load_model,
    probabilities,
    save_model,
    schedule,
    train_parser,
)
from gnn.encoder import TextEncoder
from gnn.modelcard import ModelCard, read_card, write_card
from gnn.registry import shipped_model
from gnn.trainer import Schedule, Trainer
from ontology.errors import ModelError
from ontology.formats.dialogue_json import load_dialogue_json
from ontology.formats.registry import SAMPLES


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
    stored = load_file(str(tmp_path / WEIGHTS))
    assert {k.split(".")[0] for k in stored} == {"0", "1"}
    assert {v.dtype for v in stored.values()} == {torch.float16}  # half precision on disk
    assert read_card(tmp_path).weights == [WEIGHTS, "vocab.json"]
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
    keys = set(load_file(str(tmp_path / WEIGHTS)))
    # Parameter names as model directories written before ensembles have them.
    assert keys == set(model.nets[0].state_dict())
    assert len(load_model(tmp_path, encoder=encoder, device="cpu").nets) == 1
    # Cards that name the removed options: a refit only changed the training, so the parser runs; the
    # look-ahead slot changed the networks' inputs, so that parser is refused with a message.
    card = read_card(tmp_path, task="discourse")
    card.hyperparameters = {**card.hyperparameters, "refit": True, "lookahead": False}
    write_card(tmp_path, card)
    assert len(load_model(tmp_path, encoder=encoder, device="cpu").nets) == 1
    card.hyperparameters["lookahead"] = True
    write_card(tmp_path, card)
    with pytest.raises(ModelError, match="look-ahead slot"):
        load_model(tmp_path, encoder=encoder, device="cpu")


def test_without_tuning_dialogues_each_member_keeps_its_last_epoch(
    dialogues: list[Dialogue], encoder: TextEncoder
) -> None:
    config = ParserConfig(seed=3, **{**PROFILES["tiny"], "members": 2, "epochs": 3, "patience": 3})
    untuned, history = train_parser(dialogues[:6], [], encoder, config)
    assert not any("tune_link_f1" in r for r in history)
    assert [(r["member"], r["epoch"]) for r in history if r.get("selected")] == [(0, 3), (1, 3)]
    assert set(untuned.config.thresholds.values()) == {1.01}  # nothing to tune them on: one parent each
    assert len(untuned.predict(dialogues)) == len(dialogues)


def test_each_network_is_fitted_by_the_trainer_from_its_seed(dialogues: list[Dialogue], encoder: TextEncoder) -> None:
    config = ParserConfig(seed=3, **{**PROFILES["tiny"], "members": 1})
    # The recipe: AdamW, a warm-up over 5% of the steps then linear decay to 5%, clipping at 5, patience.
    assert schedule(config, 7) == Schedule(
        2, config.lr, config.weight_decay, "adamw", "warmup-linear", 0.05, 0.05, 5.0, config.patience, seed=7
    )
    train, tune = dialogues[:6], dialogues[6:]
    model, history = train_parser(train, tune, encoder, config)
    vocab = build_vocab(train, config.vocab_size)
    graphs = graphs_for(train, encoder, vocab, config.k)
    tune_graphs = graphs_for(tune, encoder, vocab, config.k)

    def fit(seed: int) -> tuple[ParserFit, list[dict]]:
        job = ParserFit(graphs, config, encoder, vocab, tune, tune_graphs)
        return job, Trainer(schedule(config, seed), device="cpu").fit(job).history

    (same, rows), (other, _) = fit(3), fit(4)

    # The network is built inside the trainer's seeded run: its seed alone sets the initial weights and the
    # batches, so train_parser's network is this one (up to the CPU's summation order in scatter means).
    def drift(net: torch.nn.Module) -> float:
        return max(float((v - net.state_dict()[k]).abs().max()) for k, v in model.nets[0].state_dict().items())

    # Threads on a loaded CPU sum in another order: the same seed lands up to about 2e-4 away, another
    # seed starts from other weights altogether.
    assert drift(same.module) < 1e-3 < 0.05 < drift(other.module), (drift(same.module), drift(other.module))
    assert [r["loss"] for r in history] == pytest.approx([r["loss"] for r in rows], abs=1e-4)
    best = max(rows, key=lambda r: r["tune_link_f1"] + r["tune_link_rel_f1"])
    assert [r["epoch"] for r in rows if r.get("selected")] == [best["epoch"]]


def test_the_shipped_model_is_half_precision_safetensors(dialogues: list[Dialogue], encoder: TextEncoder) -> None:
    shipped = shipped_model("discourse")
    assert shipped.parent.name == "models" and read_card(shipped).weights == [WEIGHTS, "vocab.json"]
    assert {v.dtype for v in load_file(str(shipped / WEIGHTS)).values()} == {torch.float16}
    model = load_model(shipped, encoder=encoder, device="cpu")
    assert len(model.nets) == 5 and len(model.predict(dialogues[:3])) == 3


def test_a_model_directory_with_torch_weights_is_refused(
    dialogues: list[Dialogue], encoder: TextEncoder, tmp_path: Path
) -> None:
    model, _ = _train(dialogues, encoder, members=1)
    save_model(model, tmp_path, _card())
    # A directory written before safetensors: a pickled state dict named by the card.
    torch.save(model.nets[0].state_dict(), tmp_path / "parser.pt")
    card = read_card(tmp_path)
    card.weights = ["parser.pt", "vocab.json"]
    write_card(tmp_path, card)
    (tmp_path / WEIGHTS).unlink()
    with pytest.raises(ModelError, match=r"not parser\.safetensors.*train it again"):
        load_model(tmp_path, encoder=encoder, device="cpu")
