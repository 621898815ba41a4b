"""Stored precision of model weights (gnn.weights)."""

from __future__ import annotations

import pytest
import torch

from gnn.weights import float_state, half_state, round_to_half

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier


def test_half_state_round_trip_keeps_integers_and_rounds_floats() -> None:
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    torch.nn.init.constant_(net[0].weight, 1 / 3)
    stored = half_state(net.state_dict())
    assert stored["0.weight"].dtype == torch.float16 and stored["0.weight"].is_contiguous()
    assert stored["1.num_batches_tracked"].dtype == torch.int64  # integer buffers keep their type
    loaded = float_state(stored)
    assert loaded["0.weight"].dtype == torch.float32
    assert 0 < abs(float(loaded["0.weight"][0, 0]) - 1 / 3) < 1e-3  # float16 precision, not float32
    # Rounding in place gives the model exactly the weights it will be stored with.
    round_to_half(net)
    assert torch.equal(net[0].weight, loaded["0.weight"])
    assert all(torch.equal(v, loaded[k]) for k, v in net.state_dict().items())
