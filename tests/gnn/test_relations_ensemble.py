"""Sci-Arg's two-network relation model: contextual component vectors, the ensemble, and a tiny
full-profile train -> save -> load -> predict run with a stand-in encoder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from gnn.relations.family import TrainOptions
from gnn.relations.model import RelationEnsemble, RelationGNN, build_model, collate
from gnn.relations.sciarg_features import Comp, Paper
from gnn.relations.sciarg_task import context_vectors, load_sciarg, papers_from_records, train_sciarg
from gnn.relations.train import fit
from graphstore.loaders.registry import SAMPLES
from graphstore.loaders.sciarg import load_sciarg as load_brat

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


def _batch(prim: np.ndarray) -> object:
    emb = np.eye(3, 4, dtype=np.float32)
    edges = np.array([[0, 1], [1, 2], [0, 0]], dtype=np.int64)
    pairs = np.array([[0, 1], [1, 2], [2, 0]], dtype=np.int64)
    item = (emb, prim, np.zeros((0, 0), np.float32), edges, pairs, np.ones((3, 2), np.float32), np.zeros(3, np.int64))
    return collate([item])


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


def _items(k: int) -> list[tuple]:
    rng = np.random.default_rng(k)
    emb = rng.normal(size=(4, 4)).astype(np.float32)
    prim = rng.normal(size=(4, 2)).astype(np.float32)
    edges = np.array([[0, 1, 2], [1, 2, 3], [0, 0, 0]], dtype=np.int64)
    pairs = np.array([[0, 1], [1, 2], [2, 3], [3, 0]], dtype=np.int64)
    labels = np.array([1, 0, 2, 0], dtype=np.int64)
    return [(emb, prim, np.zeros((0, 0), np.float32), edges, pairs, rng.normal(size=(4, 2)).astype(np.float32), labels)]


def test_stopping_after_an_epoch_gives_the_weights_that_epoch_has_in_a_full_run() -> None:
    config = {"emb_dim": 4, "prim_dim": 2, "sec_dim": 0, "pair_dim": 2, "n_edge_types": 1, "n_labels": 3}
    train = _items(0) + _items(1) + _items(2)
    epochs_seen: list[int] = []

    def pick_epoch_one(_probs: list[np.ndarray]) -> float:
        epochs_seen.append(len(epochs_seen))
        return 1.0 if len(epochs_seen) == 2 else 0.0

    torch.manual_seed(3)
    selected = RelationGNN(**config)
    history = fit(selected, train, _items(4), pick_epoch_one, epochs=4, seed=3, graphs_per_batch=1)
    assert history["best_epoch"] == 1 and epochs_seen == [0, 1, 2, 3]
    torch.manual_seed(3)
    stopped = RelationGNN(**config)
    calls: list[int] = []

    def count(_probs: list[np.ndarray]) -> float:
        calls.append(1)
        return 0.0

    history = fit(stopped, train, [], count, epochs=4, seed=3, graphs_per_batch=1, stop_after=1)
    # Two epochs, no dev scoring, and the same cosine schedule over four epochs as the full run.
    steps = history["history"]
    assert isinstance(steps, list) and [h["epoch"] for h in steps] == [0, 1] and history["best_epoch"] == 1
    assert not calls
    for key, value in selected.state_dict().items():
        torch.testing.assert_close(stopped.state_dict()[key], value)
    torch.manual_seed(3)
    last = RelationGNN(**config)
    fit(last, train, [], lambda p: 0.0, epochs=4, seed=3, graphs_per_batch=1, stop_after=3)
    assert not torch.equal(last.state_dict()["pair_proj.weight"], selected.state_dict()["pair_proj.weight"])
