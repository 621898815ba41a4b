"""Sci-Arg's two-network relation model: contextual component vectors, the ensemble, a tiny
full-profile train -> save -> load -> predict run with a stand-in encoder, and how a relation
network is fitted by the trainer (the PyG graphs it reads, selection, refit)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from torch_geometric.data import Batch

from gnn.relations.family import TrainOptions
from gnn.relations.model import RelationEnsemble, RelationGNN, build_model, relation_graph, typed_edges
from gnn.relations.sciarg_features import Comp, Paper
from gnn.relations.sciarg_task import context_vectors, load_sciarg, papers_from_records, train_sciarg
from gnn.relations.train import RelationFit
from gnn.trainer import Schedule, Trainer
from ontology.formats.registry import SAMPLES
from ontology.formats.sciarg import load_sciarg as load_brat

TEXT = "Results vary. Therefore, the method is robust, since errors stay small in practice. No claim here."
SECOND = TEXT.index(" No claim")


class WordLengths:
    """A stand-in encoder: a text's vector is its length and word count; a word's vector in a
    sentence is its length and its position there (two layers of width 1)."""

    dim = 2
    cache_dir = None

    def __init__(self) -> None:
        self.read: list[list[str]] = []

    def cache_key(self) -> str:
        return "word-lengths"

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        return np.array([[len(t) / 100, len(t.split()) / 20] for t in texts], dtype=np.float32).reshape(-1, 2)

    def word_states(self, sentences: Sequence[Sequence[str]], layers: Sequence[int], max_length: int) -> list:
        self.read += [list(s) for s in sentences]
        return [np.array([[len(w), k, 0.0, 1.0] for k, w in enumerate(s)], dtype=np.float32) for s in sentences]


def _paper() -> Paper:
    comps = []
    for k, s in enumerate(["Results vary", "the method is robust", "errors stay small"]):
        start = TEXT.index(s)
        comps.append(Comp(f"T{k + 1}", "own_claim", s, start, start + len(s), 0 if k == 0 else 1))
    comps.append(Comp("T4", "data", "outside", len(TEXT) + 5, len(TEXT) + 12, -1))
    pieces = [(0, 13, TEXT[0:13]), (14, SECOND, TEXT[14:SECOND]), (SECOND + 1, len(TEXT), TEXT[SECOND + 1 :])]
    return Paper("A01", comps, {}, pieces)


def test_context_vectors_average_the_words_of_each_component_in_its_sentence() -> None:
    encoder = WordLengths()
    (ctx,) = context_vectors([_paper()], encoder)
    # Only the sentences a component overlaps are encoded.
    assert [s[0] for s in encoder.read] == ["Results", "Therefore"]
    assert ctx.shape == (4, 4)
    # "the method is robust": words 2-5 of the second sentence ("Therefore" "," come first).
    np.testing.assert_allclose(ctx[1], np.array([(3 + 6 + 2 + 6) / 4, (2 + 3 + 4 + 5) / 4, 0.0, 1.0]))
    np.testing.assert_allclose(ctx[0], np.array([(7 + 4) / 2, 0.5, 0.0, 1.0]))
    # A component outside every sentence gets zeros, not a neighbour's words.
    assert not ctx[3].any()


def _batch(prim: np.ndarray) -> Batch:
    emb = np.eye(3, 4, dtype=np.float32)
    edges = np.array([[0, 1], [1, 2], [0, 0]], dtype=np.int64)
    pairs = np.array([[0, 1], [1, 2], [2, 0]], dtype=np.int64)
    return Batch.from_data_list([relation_graph(emb, prim, edges, pairs, np.ones((3, 2), np.float32), np.zeros(3))])


def test_ensemble_is_the_geometric_mean_and_narrow_members_ignore_trailing_features() -> None:
    base = {"emb_dim": 4, "sec_dim": 0, "pair_dim": 2, "n_edge_types": 1, "n_labels": 3, "direct": True}
    torch.manual_seed(0)
    model = build_model({"members": [{**base, "prim_dim": 2}, {**base, "prim_dim": 5}]})
    assert isinstance(model, RelationEnsemble) and model.widths == [2, 5]
    model.eval()
    prim = np.arange(15, dtype=np.float32).reshape(3, 5) / 10
    batch = _batch(prim)
    narrow, wide = model.members
    assert isinstance(narrow, RelationGNN) and isinstance(wide, RelationGNN)
    with torch.no_grad():
        out = model(batch)
        expected = (torch.log_softmax(narrow(_batch(prim[:, :2])), 1) + torch.log_softmax(wide(_batch(prim)), 1)) / 2
        torch.testing.assert_close(out, expected)
        changed = prim.copy()
        changed[:, 2:] += 1.0
        torch.testing.assert_close(narrow(_batch(changed[:, :2])), narrow(_batch(prim[:, :2])))
        # A member reads the first columns of whatever the batch carries.
        torch.testing.assert_close(narrow(_batch(changed)), narrow(_batch(prim[:, :2])))
        assert not torch.allclose(model(_batch(changed)), out)
    # Stored as one state dict and one configuration.
    again = build_model({"members": [{**base, "prim_dim": 2}, {**base, "prim_dim": 5}]})
    again.load_state_dict(model.state_dict())
    again.eval()
    with torch.no_grad():
        torch.testing.assert_close(again(batch), out)
    assert isinstance(build_model({**base, "prim_dim": 2}), RelationGNN)
    # Trained networks are wrapped as they are, one per configuration.
    assert RelationEnsemble([{**base, "prim_dim": 2}], [narrow]).members[0] is narrow
    with pytest.raises(ValueError, match="2 networks for 1"):
        RelationEnsemble([{**base, "prim_dim": 2}], [narrow, wide])


@pytest.fixture(scope="module")
def papers() -> list[Paper]:
    bundle = load_brat(sorted((SAMPLES / "sciarg" / "compiled_corpus").glob("*.ann")))
    return papers_from_records(bundle.nodes, bundle.edges)


def test_full_profile_trains_a_plain_and_a_contextual_network(tmp_path: Path, papers: list[Paper]) -> None:
    encoder = WordLengths()
    section = train_sciarg(papers, tmp_path, TrainOptions("full", seed=0, encoder=encoder, epochs=1))
    hp = section["hyperparameters"]
    # The card lists both networks' widths: the second reads the 4 contextual columns as well.
    assert hp["context"] is True and [m["prim_dim"] for m in hp["members"]] == [287, 291]
    stored = load_file(tmp_path / "sciarg.safetensors")
    assert {v.dtype for v in stored.values() if v.is_floating_point()} == {torch.float16}
    model = load_sciarg(tmp_path, encoder=encoder)
    # Loaded back into float32 parameters holding the stored values.
    for key, value in model.model.state_dict().items():
        assert value.dtype != torch.float16 and torch.equal(value, stored[key].to(value.dtype))
    assert model.context and isinstance(model.model, RelationEnsemble)
    plain, contextual = model.model.widths
    assert contextual - plain == 4  # the stand-in's word vectors: two layers of width 2
    predicted = model.predict(papers)
    assert predicted == model.predict(papers)
    ids = [{c.local_id for c in p.comps} for p in papers]
    for rels, known in zip(predicted, ids, strict=True):
        assert all(a in known and b in known and a != b and 0 < s <= 1 for a, b, _, s in rels)
    # The full profile refits on train + dev: here one paper each, so the card says which.
    assert hp["refit"] is False and "refit_epochs" not in hp  # no dev paper among A01 and A10
    (tmp_path / "refit").mkdir()
    options = TrainOptions("full", seed=0, encoder=encoder, epochs=2)
    refit = train_sciarg(papers, tmp_path / "refit", options, dev=("A10",))
    assert refit["hyperparameters"]["refit"] is True and refit["data"]["dev"] == ["A10"]
    chosen = refit["hyperparameters"]["refit_epochs"]
    assert len(chosen) == 2 and set(chosen) <= {1, 2}
    assert "retrained on train + dev" in refit["data"]["split"]
    refit_state = load_file(tmp_path / "refit" / "sciarg.safetensors")
    assert any(not torch.equal(refit_state[k], v) for k, v in stored.items() if v.is_floating_point())
    # Without an encoder (the quick profile's LSA), one network and no contextual vectors.
    (tmp_path / "quick").mkdir()
    quick = train_sciarg(papers, tmp_path / "quick", TrainOptions("quick", seed=0, epochs=1))
    assert "members" not in quick["hyperparameters"] and quick["hyperparameters"]["prim_dim"] == 287
    assert not load_sciarg(tmp_path / "quick").context


def _graphs(k: int, empty: bool = False) -> list:
    rng = np.random.default_rng(k)
    emb = rng.normal(size=(4, 4)).astype(np.float32)
    prim = rng.normal(size=(4, 2)).astype(np.float32)
    edges = np.array([[0, 1, 2], [1, 2, 3], [0, 0, 0]], dtype=np.int64)
    pairs = np.array([[0, 1], [1, 2], [2, 3], [3, 0]], dtype=np.int64)[: 0 if empty else 4]
    labels = np.array([1, 0, 2, 0], dtype=np.int64)[: len(pairs)]
    return [relation_graph(emb, prim, edges, pairs, rng.normal(size=(len(pairs), 2)).astype(np.float32), labels)]


def test_a_batch_of_graphs_numbers_units_first_then_locutions() -> None:
    # Two maps: 2 units + 1 locution, then 1 unit + 2 locutions; edges over ids units then locutions.
    first = relation_graph(
        np.zeros((2, 3)), np.zeros((2, 1)), np.array([[0, 2, 1], [2, 1, 0], [0, 1, 2]]),
        np.array([[0, 1]]), np.zeros((1, 1)), np.array([1]), loc_feats=np.ones((1, 5)),
    )  # fmt: skip
    second = relation_graph(
        np.zeros((1, 3)), np.zeros((1, 1)), np.array([[1, 0], [2, 1], [3, 4]]),
        np.zeros((0, 2)), np.zeros((0, 1)), np.zeros(0), loc_feats=np.ones((2, 5)),
    )  # fmt: skip
    batch = Batch.from_data_list([first, second])
    assert batch["unit"].num_nodes == 3 and batch["locution"].num_nodes == 3
    # Units 0, 1 (first map), 2 (second); locutions 3 (first map), 4, 5 (second).
    got = {tuple(e) for e in typed_edges(batch).t().tolist()}
    assert got == {(0, 3, 0), (3, 1, 1), (1, 0, 2), (4, 5, 3), (2, 4, 4)}
    assert batch["unit", "pair", "unit"].edge_index.tolist() == [[0], [1]]
    # The network reads the batch: one row of logits per candidate pair.
    net = RelationGNN(emb_dim=3, prim_dim=1, sec_dim=5, pair_dim=1, n_edge_types=5, n_labels=3).eval()
    assert net(batch).shape == (1, 3)


def test_an_epoch_batches_graphs_in_the_trainers_order_and_drops_those_without_pairs() -> None:
    graphs = _graphs(0) + _graphs(1, empty=True) + _graphs(2) + _graphs(3)
    job = RelationFit(lambda: RelationGNN(4, 2, 0, 2, 1, 3), graphs, graphs_per_batch=2)
    order = np.random.default_rng(5).permutation(4)
    batches = job.batches(np.random.default_rng(5))
    expected = [[k for k in order[s : s + 2] if k != 1] for s in (0, 2)]
    assert [b.num_graphs for b in batches] == [len(e) for e in expected]
    for batch, ks in zip(batches, expected, strict=True):
        torch.testing.assert_close(batch["unit"].x, torch.cat([graphs[k]["unit"].x for k in ks]))


CONFIG = {"emb_dim": 4, "prim_dim": 2, "sec_dim": 0, "pair_dim": 2, "n_edge_types": 1, "n_labels": 3}


def _job(train: list, tune: list | None = None, score: Any = None) -> RelationFit:
    return RelationFit(lambda: RelationGNN(**CONFIG), train, tune or [], score, graphs_per_batch=1)


def test_the_trainer_keeps_the_best_dev_epoch_and_a_refit_stops_at_it() -> None:
    train = _graphs(0) + _graphs(1) + _graphs(2)
    schedule = Schedule(epochs=4, lr=2e-3, weight_decay=1e-4, seed=3, autocast=False)
    seen: list[int] = []

    def second_epoch_best(probs: list[np.ndarray]) -> float:
        assert [p.shape for p in probs] == [(4, 3)]  # the dev graph's pair probabilities
        seen.append(len(seen) + 1)
        return 1.0 if len(seen) == 2 else 0.0

    selected = _job(train, _graphs(4), second_epoch_best)
    result = Trainer(schedule, "cpu").fit(selected)
    assert result.best_epoch == 2 and result.best_score == 1.0 and seen == [1, 2, 3, 4]
    assert [row.get("selected") for row in result.history] == [None, True, None, None]
    # A refit stopped after that epoch (counted from 1, as the card's refit_epochs) trains two
    # epochs of the same four-epoch schedule, without dev scoring: the selected weights.
    refit = _job(train)
    stopped = Trainer(schedule, "cpu").fit(refit, stop_after=result.best_epoch)
    assert [row["epoch"] for row in stopped.history] == [1, 2] and stopped.best_score is None
    for key, value in selected.module.state_dict().items():
        torch.testing.assert_close(refit.module.state_dict()[key], value)
    later = _job(train)
    Trainer(schedule, "cpu").fit(later, stop_after=4)
    assert not torch.equal(
        later.module.state_dict()["pair_proj.weight"], selected.module.state_dict()["pair_proj.weight"]
    )


def test_the_network_is_built_and_trained_from_the_schedules_seed_alone() -> None:
    train = _graphs(0) + _graphs(1)
    schedule = Schedule(epochs=2, lr=2e-3, seed=11, autocast=False)
    first = _job(train)
    Trainer(schedule, "cpu").fit(first)
    torch.manual_seed(99)
    torch.rand(7)  # whatever ran before does not change the run
    second = _job(train)
    Trainer(schedule, "cpu").fit(second)
    for key, value in first.module.state_dict().items():
        assert torch.equal(second.module.state_dict()[key], value)
    other = _job(train)
    Trainer(Schedule(epochs=2, lr=2e-3, seed=12, autocast=False), "cpu").fit(other)
    assert not torch.equal(other.module.state_dict()["pair_proj.weight"], first.module.state_dict()["pair_proj.weight"])
