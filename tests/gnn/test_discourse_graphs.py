"""Parent candidates of the discourse graphs, the look-ahead slot and its decoding."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch

from gnn.discourse.data import Dialogue
from gnn.discourse.graphs import SENSE_INDEX, candidate_slots, dialogue_graph, pair_feature_count, slot_offsets
from gnn.discourse.model import DiscourseParser
from gnn.discourse.train import decode
from ontology.terms import Sense

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier

K = 3


def _dialogue() -> Dialogue:
    # "if you get them" (1) is the parent of the clause before it (0), as in STAC's Conditional links.
    return Dialogue(
        key="stac#0",
        local_id="g1",
        domain="stac",
        texts=["ports are great", "if you get them", "ok Rennoc"],
        speakers=["Rennoc", "Rennoc", "Markus"],
        relations=[(1, 0, Sense.Conditional), (0, 2, Sense.Acknowledgement)],
    )


def _graph(lookahead: bool):
    d = _dialogue()
    return dialogue_graph(d, np.zeros((len(d), 4), np.float32), {}, K, lookahead)


def test_without_lookahead_a_following_parent_is_unreachable() -> None:
    g = _graph(False)
    assert g.pair.shape == (3, K + 1, pair_feature_count(K))
    assert not bool(g.reachable[0]) and g.gold[0].sum() == 0
    assert bool(g.reachable[2]) and float(g.gold[2, 2]) == 1.0


def test_lookahead_slot_holds_the_next_edu() -> None:
    g = _graph(True)
    slot = K + 1
    assert candidate_slots(K, True) == slot + 1 and slot_offsets(K, True)[slot] == -1
    assert g.pair.shape == (3, slot + 1, pair_feature_count(K, True))
    assert bool(g.reachable[0]) and float(g.gold[0, slot]) == 1.0
    assert int(g.gold_sense[0, slot]) == SENSE_INDEX[Sense.Conditional]
    assert float(g.pair[0, slot, slot]) == 1.0  # its one-hot column
    assert float(g.pair[0, slot, slot + 1]) == 1.0  # same speaker
    assert g.cand_mask[:, slot].tolist() == [True, True, False]  # the last EDU has no next one
    # The earlier candidates are unchanged by the extra slot.
    plain = _graph(False)
    assert torch.equal(g.gold[:, : K + 1], plain.gold) and torch.equal(g.cand_mask[:, : K + 1], plain.cand_mask)


def test_candidates_never_cross_into_the_next_dialogue() -> None:
    batch = Batch.from_data_list([_graph(True), _graph(True)])
    net = DiscourseParser(4, 0, K, dim=8, word_dim=4, lookahead=True)
    cand = net._candidates(batch.position, batch.cand_mask)
    n = batch.num_nodes
    assert cand[:, -1].tolist() == [1, 2, n, 4, 5, n]  # the root row after each dialogue's last EDU
    out = net(batch)
    assert out["link2"].shape == (n, K + 2)
    assert torch.isfinite(out["link2"][batch.cand_mask]).all()


def test_decode_turns_the_lookahead_slot_into_a_link_from_the_next_edu() -> None:
    batch = Batch.from_data_list([_graph(True)])
    prob = torch.zeros(3, K + 2)
    prob[0, K + 1] = 1.0  # EDU 0: its parent is the next EDU
    prob[1, 1] = 1.0
    prob[2, 2] = 1.0
    sense = torch.zeros(3, K + 2, len(SENSE_INDEX))
    sense[..., SENSE_INDEX[Sense.Conditional]] = 1.0
    links = decode(prob, sense, batch, {"stac": 1.01}, ["stac"], slot_offsets(K, True))[0]
    assert [(p.x, p.y) for p in links] == [(1, 0), (0, 1), (0, 2)]


def test_lookahead_stays_masked_in_molweni_style_dialogues() -> None:
    d = _dialogue()
    molweni = Dialogue(d.key, d.local_id, "molweni", d.texts, d.speakers, d.relations)
    g = dialogue_graph(molweni, np.zeros((3, 4), np.float32), {}, K, True)
    assert g.pair.shape[1] == K + 2
    assert not g.cand_mask[:, K + 1].any() and not bool(g.reachable[0])
    assert float(g.pair[:, K + 1].abs().sum()) == 0.0
