"""The relation model: a relational GNN over the argument map and a pairwise transformer head.

Every map or document is one graph. Its primary nodes are the propositions (I-nodes, Sci-Arg
components) with frozen encoder embeddings plus a few node features; secondary nodes (QT30
locutions) carry structural features only. Two relational graph-convolution layers (one weight
matrix per edge type: anchoring, TA transitions, file order ...) spread information over the
map; a transformer encoder layer then lets every proposition attend to all others of its map.
The head scores each candidate ordered pair from the two contextual states, their product and
difference, the product of projected sentence embeddings, their cosine and the structural pair
features, into the label set of the corpus (index 0 = no relation).

Torch and PyG are imported here only; nothing imports this module at CLI start-up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch
from torch import nn
from torch_geometric.utils import to_dense_batch


@dataclass
class GraphBatch:
    """Several graphs concatenated.

    Attributes:
        emb: ``(P, D)`` text embeddings of the primary nodes.
        prim_feats: ``(P, F1)`` primary-node features.
        sec_feats: ``(S, F2)`` secondary-node features.
        prim_graph: ``(P,)`` graph index of each primary node (ascending).
        edges: ``(3, E)`` source, target, type over ids ``[0, P)`` primary then ``[P, P+S)`` secondary.
        pairs: ``(Q, 2)`` ordered primary-node pairs (global ids).
        pair_feats: ``(Q, F3)``.
        labels: ``(Q,)`` label indices.
    """

    emb: torch.Tensor
    prim_feats: torch.Tensor
    sec_feats: torch.Tensor
    prim_graph: torch.Tensor
    edges: torch.Tensor
    pairs: torch.Tensor
    pair_feats: torch.Tensor
    labels: torch.Tensor

    def to(self, device: str) -> GraphBatch:
        """The batch on ``device``."""
        return GraphBatch(*(getattr(self, f).to(device) for f in self.__dataclass_fields__))


def collate(
    items: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
) -> GraphBatch:
    """Concatenate graphs given as (emb, prim_feats, sec_feats, edges, pairs, pair_feats, labels)."""
    embs, pf, sf, graph, edges, pairs, qf, labels = [], [], [], [], [], [], [], []
    n_prim_total = sum(len(it[1]) for it in items)
    p_off = 0
    s_off = 0
    for g, (emb, prim, sec, e, pr, pfeat, lab) in enumerate(items):
        n_p, n_s = len(prim), len(sec)
        embs.append(emb)
        pf.append(prim)
        sf.append(sec)
        graph.append(np.full(n_p, g, dtype=np.int64))
        if e.size:
            src = np.where(e[0] < n_p, e[0] + p_off, e[0] - n_p + n_prim_total + s_off)
            dst = np.where(e[1] < n_p, e[1] + p_off, e[1] - n_p + n_prim_total + s_off)
            edges.append(np.stack([src, dst, e[2]]))
        pairs.append(pr + p_off)
        qf.append(pfeat)
        labels.append(lab)
        p_off += n_p
        s_off += n_s

    def cat(parts: list[np.ndarray], width: int | None, dtype: type) -> torch.Tensor:
        # ``width`` None: one-dimensional arrays.
        arrays = [p for p in parts if p.size] or [np.zeros((0,) if width is None else (0, width), dtype=dtype)]
        return torch.from_numpy(np.concatenate(arrays).astype(dtype, copy=False))

    return GraphBatch(
        emb=cat(embs, items[0][0].shape[1], np.float32),
        prim_feats=cat(pf, items[0][1].shape[1], np.float32),
        sec_feats=cat(sf, items[0][2].shape[1], np.float32),
        prim_graph=cat(graph, None, np.int64),
        edges=torch.from_numpy(np.concatenate(edges, axis=1)) if edges else torch.zeros((3, 0), dtype=torch.long),
        pairs=cat(pairs, 2, np.int64).reshape(-1, 2),
        pair_feats=cat(qf, items[0][5].shape[1], np.float32),
        labels=cat(labels, None, np.int64),
    )


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
            nn.Sequential(nn.Dropout(dropout), nn.Linear(3 * emb_dim + 2 * prim_dim, head)) if direct else None
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
        self.dropout = nn.Dropout(dropout)

    def forward(self, batch: GraphBatch) -> torch.Tensor:
        """Logits ``(Q, n_labels)`` of the batch's pairs."""
        prim = self.prim_in(torch.cat([batch.emb, batch.prim_feats], dim=1))
        sec = batch.sec_feats if batch.sec_feats.shape[1] else batch.sec_feats.new_zeros((len(batch.sec_feats), 1))
        h = torch.cat([prim, self.sec_in(sec)], dim=0)
        if batch.edges.shape[1]:
            adj = block_adjacency(batch.edges, h.shape[0], self.n_edge_types)
            for conv, norm in zip(self.convs, self.norms, strict=True):
                h = norm(h + self.dropout(torch.relu(conv(h, adj))))
        hp = h[: len(prim)]
        dense, mask = to_dense_batch(hp, batch.prim_graph)
        hp = self.context(dense, src_key_padding_mask=~mask)[mask]
        s, t = batch.pairs[:, 0], batch.pairs[:, 1]
        ea, eb = self.emb_a(batch.emb), self.emb_b(batch.emb)
        cos = nn.functional.cosine_similarity(batch.emb[s], batch.emb[t], dim=1).unsqueeze(1)
        pair = torch.cat([self.mul_a(hp)[s] * self.mul_b(hp)[t], ea[s] * eb[t], cos, batch.pair_feats], dim=1)
        z = self.src_proj(hp)[s] + self.tgt_proj(hp)[t] + self.pair_proj(pair)
        if self.direct is not None:
            es, et = batch.emb[s], batch.emb[t]
            z = z + self.direct(torch.cat([es, et, es * et, batch.prim_feats[s], batch.prim_feats[t]], dim=1))
        return self.out(z)


class RelationEnsemble(nn.Module):
    """Relation GNNs over the same graphs, as one model.

    The output is the members' mean log-probability, so a softmax over it gives the normalised
    geometric mean of their probabilities: a label has to be likely for every member. Members
    may read fewer node features than the batch carries: each reads the first ``prim_dim``
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

    def forward(self, batch: GraphBatch) -> torch.Tensor:
        """Mean log-probabilities ``(Q, n_labels)`` of the batch's pairs."""
        out = [
            torch.log_softmax(member(narrowed(batch, width)), dim=1)
            for member, width in zip(self.members, self.widths, strict=True)
        ]
        return torch.stack(out).mean(dim=0)


def narrowed(batch: GraphBatch, width: int) -> GraphBatch:
    """``batch`` with its primary-node features cut to the first ``width`` columns."""
    if batch.prim_feats.shape[1] == width:
        return batch
    return replace(batch, prim_feats=batch.prim_feats[:, :width])


def build_model(config: Mapping[str, Any]) -> nn.Module:
    """The model a stored configuration describes: a :class:`RelationEnsemble` when it lists
    ``members``, otherwise one :class:`RelationGNN`."""
    if "members" in config:
        return RelationEnsemble(config["members"])
    return RelationGNN(**config)
