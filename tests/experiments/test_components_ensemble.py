"""experiments/components_ensemble.py: taggers averaged into one CRF decoding."""

from __future__ import annotations

import numpy as np
import torch

from experiments.components_ensemble import EnsembleTagger, int8_rounded, variants
from gnn.components import TAGS, TaggerConfig
from gnn.components.net import BiLstmCrf, ComponentTagger, input_width

WIDTH = 8
ROWS = [
    np.random.default_rng(k).normal(size=(n, input_width(WIDTH))).astype(np.float32) for k, n in enumerate((5, 3, 7))
]


def _member(bias: dict[str, float], seed: int = 0) -> ComponentTagger:
    """A tagger whose emissions are its output bias alone: every token scores each tag the same way."""
    torch.manual_seed(seed)
    network = BiLstmCrf(input_width(WIDTH), TaggerConfig())
    with torch.no_grad():
        network.emit.weight.zero_()
        network.emit.bias.copy_(torch.tensor([bias.get(t, 0.0) for t in TAGS]))
    return ComponentTagger(network, TaggerConfig(), vectors=None)  # type: ignore[arg-type]


def _tags(tagger: ComponentTagger) -> set[str]:
    return {TAGS[i] for row in tagger.tag(ROWS) for i in row}


def test_an_ensemble_of_one_or_of_a_member_and_its_copy_tags_as_the_member() -> None:
    member = _member({}, seed=3)
    with torch.no_grad():
        member.network.emit.weight.normal_()  # emissions that depend on the token
    alone = member.tag(ROWS)
    assert EnsembleTagger([member]).tag(ROWS) == alone
    assert EnsembleTagger([member, ComponentTagger(member.network, member.config, member.vectors)]).tag(ROWS) == alone


def test_the_members_scores_are_averaged_not_voted() -> None:
    sure_o = _member({"O": 10.0}, seed=1)
    sure_claim = _member({"B-own_claim": 30.0}, seed=2)
    weak_data = _member({"B-data": 6.0}, seed=3)
    assert _tags(sure_o) == {"O"} and _tags(sure_claim) == {"B-own_claim"} and _tags(weak_data) == {"B-data"}
    # Mean scores: O 5, B-own_claim 15: the stronger member wins though it is not the first.
    assert _tags(EnsembleTagger([sure_o, sure_claim])) == {"B-own_claim"}
    # Mean scores: O 5, B-data 3: O.
    assert _tags(EnsembleTagger([sure_o, weak_data])) == {"O"}


def test_the_crf_scores_are_averaged_too() -> None:
    a, b = _member({}, seed=1), _member({}, seed=2)
    with torch.no_grad():
        a.network.transitions.normal_()
        b.network.transitions.normal_()
    ensemble = EnsembleTagger([a, b])
    expected = (a.network.transitions + b.network.transitions) / 2
    assert torch.allclose(ensemble.decoder.transitions, expected)
    # The members keep their own scores.
    assert not torch.allclose(a.network.transitions, expected)


def test_variants_are_each_member_and_each_leading_ensemble() -> None:
    taggers = [_member({}, seed=s) for s in (1, 2, 3)]
    found = variants(taggers, [13, 14, 15])
    assert list(found) == ["seed13", "seed14", "seed15", "ensemble2", "ensemble3"]
    assert isinstance(found["ensemble3"], EnsembleTagger) and len(found["ensemble3"].members) == 3
    assert found["seed14"] is taggers[1]


def test_int8_rounding_keeps_each_weight_within_half_a_step_and_leaves_vectors_alone() -> None:
    member = _member({}, seed=4)
    with torch.no_grad():
        member.network.emit.weight.normal_()
    rounded = int8_rounded(member)
    after_state = rounded.network.state_dict()
    for name, before in member.network.state_dict().items():
        after = after_state[name]
        if before.dim() >= 2:
            step = before.reshape(before.shape[0], -1).abs().amax(dim=1) / 127
            error = (after - before).reshape(before.shape[0], -1).abs().amax(dim=1)
            assert bool((error <= step / 2 + 1e-7).all()), name
            # 255 levels at most per row.
            assert len(torch.unique(after.reshape(after.shape[0], -1)[0])) <= 255, name
        else:
            assert torch.equal(before, after), name
    assert rounded.network is not member.network
