"""The direct path's dropout: nn.Dropout's distribution and scaling, its mask decided by torch's seed."""

from __future__ import annotations

import torch
from torch import nn

from gnn.relations.model import RelationGNN, WideDropout


def test_wide_dropout_keeps_the_share_and_scale_of_nn_dropout() -> None:
    x = torch.ones(400, 500, requires_grad=True)
    drop = WideDropout(0.2).train()
    torch.manual_seed(3)
    y = drop(x)
    kept = y != 0
    # 200,000 draws: the kept share within 0.005 of 0.8, every kept value scaled by 1 / 0.8.
    assert abs(kept.float().mean().item() - 0.8) < 0.005
    assert torch.allclose(y[kept], torch.full_like(y[kept], 1.25))
    # The gradient passes the kept elements only, with the same scale.
    y.sum().backward()
    assert x.grad is not None and torch.equal(x.grad, y.detach())


def test_wide_dropout_mask_follows_torch_seed_and_is_off_in_evaluation() -> None:
    x = torch.randn(64, 32)
    drop = WideDropout(0.3).train()
    torch.manual_seed(7)
    first = drop(x)
    torch.manual_seed(7)
    assert torch.equal(first, drop(x))
    assert not torch.equal(first, drop(x))
    assert drop.eval()(x) is x
    assert WideDropout(0.0).train()(x) is x


def test_direct_path_weights_keep_their_names() -> None:
    # Models trained with nn.Dropout in this place load unchanged: the dropout holds no weights.
    net = RelationGNN(emb_dim=8, prim_dim=3, sec_dim=0, pair_dim=2, n_edge_types=2, n_labels=3, direct=True)
    assert isinstance(net.direct[0], WideDropout) and isinstance(net.direct[1], nn.Linear)
    assert {k for k in net.state_dict() if k.startswith("direct.")} == {"direct.1.weight", "direct.1.bias"}
