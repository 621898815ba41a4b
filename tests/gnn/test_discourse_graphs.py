"""Parent candidates of the discourse graphs and their decoding."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch

from gnn.discourse.data import Dialogue
from gnn.discourse.graphs import SENSE_INDEX, candidate_slots, dialogue_graph, pair_feature_count
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


def _graph():
    d = _dialogue()
    return dialogue_graph(d, np.zeros((len(d), 4), np.float32), {}, K)


def test_a_following_parent_is_unreachable_and_earlier_ones_are_candidates() -> None:
    g = _graph()
    assert candidate_slots(K) == K + 1
    assert g.pair.shape == (3, K + 1, pair_feature_count(K))
    assert not bool(g.reachable[0]) and g.gold[0].sum() == 0
    assert bool(g.reachable[2]) and float(g.gold[2, 2]) == 1.0
    assert int(g.gold_sense[2, 2]) == SENSE_INDEX[Sense.Acknowledgement]
    assert float(g.pair[2, 2, 2]) == 1.0  # the slot's one-hot column
    # Only the first EDU may be a root; a slot reaches no further back than the dialogue's start.
    assert g.cand_mask.tolist() == [
        [True, False, False, False],
        [False, True, False, False],
        [False, True, True, False],
    ]


def test_candidates_never_cross_into_the_previous_dialogue() -> None:
    batch = Batch.from_data_list([_graph(), _graph()])
    net = DiscourseParser(4, 0, K, dim=8, word_dim=4)
    cand = net._candidates(batch.position)
    n = batch.num_nodes
    # The second dialogue's first EDU (node 3) has no earlier EDU of its own: every slot is the root row.
    assert cand[3].tolist() == [n] * (K + 1)
    assert cand[5].tolist() == [n, 4, 3, n]
    out = net(batch)
    assert out["link2"].shape == (n, K + 1)
    assert torch.isfinite(out["link2"][batch.cand_mask]).all()


def test_decode_turns_a_slot_into_a_link_from_that_many_edus_back() -> None:
    batch = Batch.from_data_list([_graph()])
    prob = torch.zeros(3, K + 1)
    prob[0, 0] = 1.0  # the root: no link
    prob[1, 1] = 1.0
    prob[2, 2] = 1.0
    sense = torch.zeros(3, K + 1, len(SENSE_INDEX))
    sense[..., SENSE_INDEX[Sense.Conditional]] = 1.0
    links = decode(prob, sense, batch, {"stac": 1.01}, ["stac"])[0]
    assert [(p.x, p.y, p.sense) for p in links] == [(0, 1, Sense.Conditional), (0, 2, Sense.Conditional)]
