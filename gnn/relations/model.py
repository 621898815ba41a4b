"""The relation model: a relational GNN over the argument map and a pairwise transformer head.

Every map or document is one PyG ``HeteroData`` graph (:func:`relation_graph`), batched with
``Batch.from_data_list``. Its unit nodes are the propositions (I-nodes, Sci-Arg components) with
frozen encoder embeddings plus a few node features; locution nodes (QT30 L-nodes) carry
structural features only; the candidate pairs are an edge type of their own. Two relational
graph-convolution layers (one weight matrix per edge type: anchoring, TA transitions, file order
...) spread information over the map; a transformer encoder layer then lets every proposition
attend to all others of its map.
The head scores each candidate ordered pair from the two contextual states, their product and
difference, the product of projected sentence embeddings, their cosine and the structural pair
features, into the label set of the corpus (index 0 = no relation).

Torch and PyG are imported here only; nothing imports this module at CLI start-up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch_geometric.data import HeteroData
from torch_geometric.utils import to_dense_batch

UNIT = "unit"
"""Node type of the units a model relates: QT30 I-nodes, Sci-Arg components."""
LOCUTION = "locution"
"""Node type of the QT30 L-nodes (structural features only; Sci-Arg graphs have none)."""
GRAPH = "graph"
"""Relation of the typed map edges (their type in ``edge_type``) between any two node types."""
PAIR = (UNIT, "pair", UNIT)
"""Edge type of the candidate pairs: ``edge_index`` (source, target), ``edge_attr`` (pair
features) and ``y`` (label indices)."""


class WideDropout(nn.Module):
    """Dropout of the direct path's pair rows, the widest tensor of the network, with its mask drawn
    by numpy on the CPU.

    The same as ``nn.Dropout(p)``: each element kept with probability ``1 - p`` and scaled by
    ``1 / (1 - p)`` in training, the identity in evaluation, no weights. torch's CPU Bernoulli
    draws one element at a time, and on Sci-Arg's wide rows (two nodes' embeddings and features
    per candidate pair) it took 40% of a training; numpy's PCG64 fills the mask several times
    faster. Its seed is drawn from torch's generator, so the trainer's seed still decides every
    mask. On other devices torch's own dropout runs.
    """

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` with a fresh dropout mask in training, unchanged in evaluation."""
        if not self.training or self.p == 0.0:
            return x
        if x.device.type != "cpu":
            return nn.functional.dropout(x, self.p, True)
        seed = int(torch.randint(0, 2**62, (1,)).item())
        draw = np.random.default_rng(seed).random(tuple(x.shape), dtype=np.float32)
        scale = torch.from_numpy(draw).ge_(self.p).mul_(1.0 / (1.0 - self.p))
        return x * scale.to(x.dtype)


def relation_graph(
    emb: np.ndarray,
    unit_feats: np.ndarray,
    edges: np.ndarray,
    pairs: np.ndarray,
    pair_feats: np.ndarray,
    labels: np.ndarray,
    loc_feats: np.ndarray | None = None,
) -> HeteroData:
    """One map or paper as the PyG graph a relation network reads (batch with ``Batch.from_data_list``).

    Args:
        emb: ``(U, D)`` text vectors of the units.
        unit_feats: ``(U, F)`` unit features.
        edges: ``(3, E)`` source, target, edge type over ids ``[0, U)`` units then ``[U, U+L)`` locutions.
        pairs: ``(Q, 2)`` candidate ordered unit pairs.
        pair_feats: ``(Q, F')`` pair features.
        labels: ``(Q,)`` label indices (0: no relation, or unknown).
        loc_feats: ``(L, F'')`` locution features; ``None``: no locutions.
    """
    n = len(unit_feats)
    locs = np.zeros((0, 0), np.float32) if loc_feats is None else loc_feats
    g = HeteroData()
    g[UNIT].x = torch.from_numpy(np.asarray(emb, dtype=np.float32))
    g[UNIT].feats = torch.from_numpy(np.asarray(unit_feats, dtype=np.float32))
    g[UNIT].num_nodes = n
    g[LOCUTION].x = torch.from_numpy(np.asarray(locs, dtype=np.float32))
    g[LOCUTION].num_nodes = len(locs)
    src, dst, typ = np.asarray(edges, dtype=np.int64).reshape(3, -1)
    for a in (UNIT, LOCUTION):
        for b in (UNIT, LOCUTION):
            keep = ((src < n) == (a == UNIT)) & ((dst < n) == (b == UNIT))
            shift = np.array([[0 if a == UNIT else n], [0 if b == UNIT else n]])
            g[a, GRAPH, b].edge_index = torch.from_numpy(np.stack([src[keep], dst[keep]]) - shift)
            g[a, GRAPH, b].edge_type = torch.from_numpy(typ[keep])
    g[PAIR].edge_index = torch.from_numpy(np.asarray(pairs, dtype=np.int64).reshape(-1, 2).T.copy())
    g[PAIR].edge_attr = torch.from_numpy(np.asarray(pair_feats, dtype=np.float32))
    g[PAIR].y = torch.from_numpy(np.asarray(labels, dtype=np.int64))
    return g


def typed_edges(batch: HeteroData) -> torch.Tensor:
    """``(3, E)`` source, target and type of the map edges, over ids units first, then locutions."""
    n = batch[UNIT].num_nodes
    parts = [torch.zeros((3, 0), dtype=torch.long, device=batch[UNIT].x.device)]
    for a, rel, b in batch.edge_types:
        if rel == GRAPH:
            store = batch[a, rel, b]
            shift = torch.tensor([[0 if a == UNIT else n], [0 if b == UNIT else n]], device=store.edge_index.device)
            parts.append(torch.cat([store.edge_index + shift, store.edge_type.unsqueeze(0)]))
    return torch.cat(parts, dim=1)


class RelConv(nn.Module):
    """Relational graph convolution (Schlichtkrull et al. 2018): ``W0 h_v + sum_r mean_{u in N_r(v)} W_r h_u``.

    One sparse product over a block adjacency ``(N, R*N)`` instead of one scatter per relation,
    which is several times faster on CPU than a per-relation message-passing loop.
    """

    def __init__(self, dim: int, n_rel: int) -> None:
        super().__init__()
        self.root = nn.Linear(dim, dim)
        self.rel = nn.Parameter(torch.empty(n_rel, dim, dim))
        nn.init.xavier_uniform_(self.rel.view(-1, dim))

    def forward(self, h: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        """New node states from states ``h`` and the block adjacency of :func:`block_adjacency`."""
        hr = torch.einsum("nd,rde->rne", h, self.rel).reshape(-1, h.shape[1])
        return self.root(h) + torch.sparse.mm(adj, hr)


def block_adjacency(edges: torch.Tensor, n_nodes: int, n_rel: int) -> torch.Tensor:
    """Sparse ``(N, R*N)`` matrix with ``1/deg_r(v)`` at ``(v, r*N + u)`` for every edge ``u -r-> v``."""
    src, dst, typ = edges[0], edges[1], edges[2]
    slot = dst * n_rel + typ
    deg = torch.zeros(n_nodes * n_rel, device=edges.device).index_add_(
        0, slot, torch.ones_like(slot, dtype=torch.float)
    )
    weight = 1.0 / deg[slot]
    index = torch.stack([dst, typ * n_nodes + src])
    return torch.sparse_coo_tensor(index, weight, (n_nodes, n_rel * n_nodes)).coalesce()


class RelationGNN(nn.Module):
    """RGCN over the map plus a transformer layer and a pairwise head.

    Args:
        emb_dim: Width of the text embeddings.
        prim_dim: Primary-node feature width.
        sec_dim: Secondary-node feature width (0 when the graphs have none).
        pair_dim: Pair feature width.
        n_edge_types: Number of edge types.
        n_labels: Output labels (index 0 = no relation).
        hidden: Hidden width of the graph layers.
        head: Hidden width of the pair head.
        layers: RGCN layers.
        dropout: Dropout rate.
        direct: Also score each pair from its two raw text embeddings, their product and both
            nodes' features through one linear layer (a pair MLP beside the graph path: on
            Sci-Arg's 20 training papers the contextual states alone underfit the pairs).
    """

    def __init__(
        self,
        emb_dim: int,
        prim_dim: int,
        sec_dim: int,
        pair_dim: int,
        n_edge_types: int,
        n_labels: int,
        hidden: int = 96,
        head: int = 128,
        layers: int = 2,
        dropout: float = 0.2,
        direct: bool | int = False,
    ) -> None:
        super().__init__()
        self.direct = (
            nn.Sequential(WideDropout(dropout), nn.Linear(3 * emb_dim + 2 * prim_dim, head)) if direct else None
        )
        self.prim_in = nn.Sequential(nn.Linear(emb_dim + prim_dim, hidden), nn.GELU(), nn.Dropout(dropout))
        self.sec_in = nn.Linear(max(sec_dim, 1), hidden)
        self.convs = nn.ModuleList([RelConv(hidden, n_edge_types) for _ in range(layers)])
        self.n_edge_types = n_edge_types
        self.norms = nn.ModuleList([nn.LayerNorm(hidden) for _ in range(layers)])
        self.context = nn.TransformerEncoderLayer(
            hidden, nhead=4, dim_feedforward=2 * hidden, dropout=dropout, batch_first=True
        )
        # The head is a sum of node-level projections (computed once per node, not per pair) plus
        # pair-level terms: an MLP over the concatenation would cost about 8x more per pair.
        self.src_proj = nn.Linear(hidden, head)
        self.tgt_proj = nn.Linear(hidden, head)
        self.mul_a = nn.Linear(hidden, 64)
        self.mul_b = nn.Linear(hidden, 64)
        self.emb_a = nn.Linear(emb_dim, 32)
        self.emb_b = nn.Linear(emb_dim, 32)
        self.pair_proj = nn.Linear(64 + 32 + 1 + pair_dim, head)
        self.out = nn.Sequential(
            nn.GELU(), nn.Dropout(dropout), nn.Linear(head, 64), nn.GELU(), nn.Linear(64, n_labels)
        )
        self.n_labels = n_labels
        self.prim_dim = prim_dim
        self.dropout = nn.Dropout(dropout)

    def forward(self, batch: HeteroData) -> torch.Tensor:
        """Logits ``(Q, n_labels)`` of the candidate pairs of a batch of :func:`relation_graph` graphs.

        The network reads the first ``prim_dim`` columns of the unit features: an ensemble's
        members can read fewer features than the batch carries.
        """
        units, locs, pairs = batch[UNIT], batch[LOCUTION], batch[PAIR]
        emb, feats = units.x, units.feats[:, : self.prim_dim]
        prim = self.prim_in(torch.cat([emb, feats], dim=1))
        sec = locs.x if locs.x.shape[1] else locs.x.new_zeros((locs.num_nodes, 1))
        h = torch.cat([prim, self.sec_in(sec)], dim=0)
        edges = typed_edges(batch)
        if edges.shape[1]:
            adj = block_adjacency(edges, h.shape[0], self.n_edge_types)
            for conv, norm in zip(self.convs, self.norms, strict=True):
                h = norm(h + self.dropout(torch.relu(conv(h, adj))))
        hp = h[: len(prim)]
        dense, mask = to_dense_batch(hp, units.batch)
        hp = self.context(dense, src_key_padding_mask=~mask)[mask]
        s, t = pairs.edge_index[0], pairs.edge_index[1]
        ea, eb = self.emb_a(emb), self.emb_b(emb)
        cos = nn.functional.cosine_similarity(emb[s], emb[t], dim=1).unsqueeze(1)
        pair = torch.cat([self.mul_a(hp)[s] * self.mul_b(hp)[t], ea[s] * eb[t], cos, pairs.edge_attr], dim=1)
        z = self.src_proj(hp)[s] + self.tgt_proj(hp)[t] + self.pair_proj(pair)
        if self.direct is not None:
            es, et = emb[s], emb[t]
            z = z + self.direct(torch.cat([es, et, es * et, feats[s], feats[t]], dim=1))
        return self.out(z)


class RelationEnsemble(nn.Module):
    """Relation GNNs over the same graphs, as one model: the one way relation networks are combined.

    The output is the members' mean log-probability, so a softmax over it gives the normalised
    geometric mean of their probabilities: a label has to be likely for every member. Members
    may read fewer unit features than the batch carries: each reads the first ``prim_dim``
    columns of its configuration (features that only some members use go last).

    Args:
        members: Each member's :class:`RelationGNN` arguments.
        nets: The members, already built from ``members`` (trained ones); ``None`` builds them.
    """

    def __init__(self, members: Sequence[Mapping[str, Any]], nets: Sequence[RelationGNN] | None = None) -> None:
        super().__init__()
        if nets is not None and len(nets) != len(members):
            raise ValueError(f"{len(nets)} networks for {len(members)} member configurations")
        self.members = nn.ModuleList(nets if nets is not None else [RelationGNN(**config) for config in members])
        self.widths = [int(config["prim_dim"]) for config in members]
        self.n_labels = int(members[0]["n_labels"])

    def forward(self, batch: HeteroData) -> torch.Tensor:
        """Mean log-probabilities ``(Q, n_labels)`` of the batch's pairs."""
        return torch.stack([torch.log_softmax(member(batch), dim=1) for member in self.members]).mean(dim=0)


def build_model(config: Mapping[str, Any]) -> nn.Module:
    """The model a stored configuration describes: a :class:`RelationEnsemble` when it lists
    ``members``, otherwise one :class:`RelationGNN`."""
    if "members" in config:
        return RelationEnsemble(config["members"])
    return RelationGNN(**config)
