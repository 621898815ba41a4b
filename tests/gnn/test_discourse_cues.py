"""The discourse levers of issue 49: the pairs' hashed lexical cues and the reply-to decoding."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch

from gnn.discourse.data import Dialogue
from gnn.discourse.graphs import CUE_FIELDS, SENSE_INDEX, dialogue_graph, pair_cues, reply_candidates, tokenize
from gnn.discourse.model import DiscourseParser
from gnn.discourse.train import bias_senses, decode, match_shares
from ontology.terms import Sense

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier

K = 4


def _dialogue() -> Dialogue:
    return Dialogue(
        key="molweni#0",
        local_id="d1",
        domain="molweni",
        texts=["how do i mount a usb disk ?", "anyone ?", "bob : sudo mount /dev/sdb1 /mnt", "ok thanks", "it works"],
        speakers=["bob", "bob", "ann", "bob", "bob"],
        relations=[(0, 1, Sense.Continuation), (0, 2, Sense.QuestionAnswerPair), (2, 3, Sense.Acknowledgement)],
    )


def test_cues_are_stable_buckets_of_the_edges_of_the_two_edus() -> None:
    child, parent = tokenize("ok thanks"), tokenize("try sudo mount ?")
    cues = pair_cues(child, parent, False, 64)
    assert len(cues) == CUE_FIELDS and all(1 <= c < 64 for c in cues)
    # The same text gives the same buckets on every call (crc32, not Python's salted hash).
    assert cues == pair_cues(list(child), list(parent), False, 64)
    # The child's first word is a field of its own, whatever follows it.
    big = pair_cues(child, parent, False, 1 << 20)
    assert pair_cues(tokenize("ok sure"), parent, False, 1 << 20)[0] == big[0]
    assert pair_cues(tokenize("yes thanks"), parent, False, 1 << 20)[0] != big[0]
    # A change of speaker or a parent that is no question moves the fields that read them.
    same = pair_cues(child, parent, True, 1 << 20)
    assert same[:9] == big[:9] and same[9] != big[9]
    statement = pair_cues(child, tokenize("try sudo mount ."), False, 1 << 20)
    assert statement[5] != big[5] and statement[0] == big[0]
    root = pair_cues(child, None, False, 1 << 20)
    assert root[:4] == big[:4] and root[4] != big[4]


def test_the_graph_carries_one_row_of_cues_per_candidate_only_when_asked() -> None:
    d = _dialogue()
    emb = np.zeros((len(d), 4), np.float32)
    assert "cue_ids" not in dialogue_graph(d, emb, {}, K)
    g = dialogue_graph(d, emb, {}, K, cues=128)
    assert tuple(g.cue_ids.shape) == (len(d), K + 1, CUE_FIELDS)
    assert int(g.cue_ids[3, 1, 0]) == pair_cues(tokenize("ok thanks"), tokenize(d.texts[2]), False, 128)[0]
    # Slots before the dialogue's start have no cues.
    assert int(g.cue_ids[1, 2:].abs().sum()) == 0 and int(g.cue_ids[1, 1].min()) >= 1


def test_reply_candidates_point_at_the_speaker_named_and_at_what_addressed_the_speaker() -> None:
    r = reply_candidates(_dialogue(), K)
    assert r.shape == (5, K + 1) and not r[:, 0].any()
    # "bob : sudo mount ..." names bob: bob's latest EDU, one back.
    assert r[2].tolist() == [False, True, False, False, False]
    # bob's "ok thanks" follows ann's EDU that named him (one back), and it is a new turn of bob.
    assert r[3].tolist() == [False, True, False, False, False]
    # "it works" goes on bob's turn (one back) and ann's EDU two back addressed him.
    assert r[4].tolist() == [False, True, True, False, False]


def test_the_reply_margin_moves_a_near_tied_parent_to_the_reply_candidate() -> None:
    d = _dialogue()
    batch = Batch.from_data_list([dialogue_graph(d, np.zeros((len(d), 4), np.float32), {}, K)])
    prob = torch.zeros(5, K + 1)
    prob[0, 0] = 1.0
    prob[1, 1] = prob[2, 1] = prob[3, 1] = 1.0
    prob[4, 2], prob[4, 3] = 0.40, 0.45  # best: EDU 1, three back; ann's EDU (two back) is a reply candidate
    prob[4, 1] = 0.15
    sense = torch.zeros(5, K + 1, len(SENSE_INDEX))
    sense[..., SENSE_INDEX[Sense.Comment]] = 1.0

    def parent_of_last(margin: float) -> int:
        links = decode(prob, sense, batch, {"molweni": 1.01}, ["molweni"], {"molweni": margin})[0]
        return next(p.x for p in links if p.y == 4)

    assert parent_of_last(0.0) == 1
    assert parent_of_last(0.03) == 1  # 0.40 is not within 0.03 of 0.45
    assert parent_of_last(0.1) == 2
    # Another domain's margin does not apply.
    links = decode(prob, sense, batch, {"molweni": 1.01}, ["molweni"], {"stac": 0.3})[0]
    assert next(p.x for p in links if p.y == 4) == 1


def test_a_network_with_cues_reads_them_and_one_without_keeps_its_parameters() -> None:
    d = _dialogue()
    emb = np.random.default_rng(0).normal(size=(len(d), 4)).astype(np.float32)
    plain = DiscourseParser(4, 0, K, dim=8, word_dim=4)
    cued = DiscourseParser(4, 0, K, dim=8, word_dim=4, cues=64, cue_dim=4)
    extra = set(cued.state_dict()) - set(plain.state_dict())
    assert extra == {"cues.weight", "pass1.cue.weight", "pass2.cue.weight"}
    assert set(plain.state_dict()) <= set(cued.state_dict())
    batch = Batch.from_data_list([dialogue_graph(d, emb, {}, K, cues=64)])
    cued.eval()
    before = cued(batch)["sense2"].clone()
    with torch.no_grad():
        cued.cues.weight.normal_()  # type: ignore[union-attr]
    after = cued(batch)["sense2"]
    assert not torch.allclose(before[batch.cand_mask], after[batch.cand_mask])


def test_sense_biases_bring_a_sink_sense_down_to_the_gold_shares() -> None:
    rng = np.random.default_rng(0)
    # 300 links whose probabilities all lean to sense 0 (a "Comment" sink), a third truly of sense 1.
    probs = np.full((300, 3), 0.1)
    probs[:, 0] = 0.6 + rng.uniform(0, 0.1, 300)
    probs[:100, 1] += 0.3
    probs[:, 1] += rng.uniform(0, 0.1, 300)
    probs /= probs.sum(1, keepdims=True)
    assert np.bincount(probs.argmax(1), minlength=3).tolist() == [300, 0, 0]
    target = np.array([200.0, 100.0, 0.0])
    bias = np.array(match_shares(probs, target))
    counts = np.bincount((np.log(probs) + bias).argmax(1), minlength=3)
    assert abs(int(counts[0]) - 200) <= 10 and abs(int(counts[1]) - 100) <= 10 and counts[2] == 0
    assert abs(float(bias.mean())) < 1e-3


def test_sense_biases_apply_per_domain_of_each_graph() -> None:
    d = _dialogue()
    g = dialogue_graph(d, np.zeros((len(d), 4), np.float32), {}, K)
    batch = Batch.from_data_list([g, g])
    sense = torch.full((2 * len(d), K + 1, len(SENSE_INDEX)), 1.0 / len(SENSE_INDEX))
    bias = [0.0] * len(SENSE_INDEX)
    bias[SENSE_INDEX[Sense.Continuation]] = 2.0
    out = bias_senses(sense, batch, {"molweni": bias}, ["molweni", "stac"])
    assert torch.allclose(out.sum(-1), torch.ones(2 * len(d)).unsqueeze(1).expand(-1, K + 1))
    top = out.argmax(-1)
    assert (top[: len(d)] == SENSE_INDEX[Sense.Continuation]).all()
    assert torch.allclose(out[len(d) :], sense[len(d) :])  # the STAC graph has no biases
    assert bias_senses(sense, batch, {}, ["molweni", "stac"]) is sense
