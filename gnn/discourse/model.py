"""The discourse parser network: encoder features, dialogue context, relational GNN, two passes.

1. EDU representation: frozen sentence embedding + a trainable bag of words (the lexical cues the
   sense depends on: "yes", "?", "ok", first words) + speaker/position features, through an MLP.
2. Dialogue context: a bidirectional GRU over the EDUs of each dialogue.
3. Structure: relational message passing over the surface graph (sequence, same-speaker turns, a speaker
   naming another).
4. Pass 1: a pairwise scorer (additive MLP plus a low-rank biaffine term) ranks the K previous EDUs
   and "no parent"; a sense classifier reads the same pair.
5. Pass 2 (structure-aware): the pass-1 parents become edges typed by their predicted sense, a second
   relational GCN reads them (what an EDU answers, what answers it), and link and sense are
   scored again. Both passes are trained jointly; pass 2 gives the output.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch_geometric.utils import scatter, to_dense_batch

from gnn.discourse.graphs import (
    EDGE_TYPES,
    NODE_FEATURES,
    SENSES,
    STRUCTURE_TYPES,
    pair_feature_count,
)


class TypedConv(nn.Module):
    """Relational message passing with relation embeddings (CompGCN-style composition).

    A message along an edge of type ``r`` is ``relu(W h_src + e_r)``; a node takes the mean of its
    incoming messages plus a linear map of itself. One gather and one scatter for all types, which
    on a CPU is several times cheaper than a weight matrix per type (R-GCN) at these graph sizes.
    """

    def __init__(self, dim: int, num_types: int) -> None:
        super().__init__()
        self.msg = nn.Linear(dim, dim)
        self.self_loop = nn.Linear(dim, dim, bias=False)
        self.types = nn.Embedding(num_types, dim)

    def forward(self, h: Tensor, edge_index: Tensor, edge_type: Tensor) -> Tensor:
        """New node states ``(n, dim)``."""
        src, dst = edge_index
        m = torch.relu(self.msg(h)[src] + self.types(edge_type))
        agg = scatter(m, dst, dim=0, dim_size=h.size(0), reduce="mean")
        return agg + self.self_loop(h)


class PairScorer(nn.Module):
    """Link score and sense logits of (child, candidate parent) pairs.

    Child and parent projections are computed once per EDU and gathered per pair; the pair itself
    only adds its features and a low-rank product of the two (an additive + biaffine scorer), so
    the per-pair cost stays small on a CPU.
    """

    def __init__(self, dim: int, pair_dim: int, hidden: int, dropout: float) -> None:
        super().__init__()
        self.node = nn.Linear(dim, 8 * hidden)
        self.pair = nn.Linear(pair_dim, 2 * hidden)
        self.hidden = hidden
        self.link = nn.Sequential(nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.sense = nn.Sequential(nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, len(SENSES)))
        self.drop = nn.Dropout(dropout)

    def forward(self, h: Tensor, cand: Tensor, pair: Tensor) -> tuple[Tensor, Tensor]:
        """Scores for EDU states ``h`` ``(n+1, d)`` (last row: the root), candidate rows ``cand``
        ``(n, c)`` and pair features ``(n, c, p)``.

        Returns:
            Link scores ``(n, c)`` and sense logits ``(n, c, senses)``.
        """
        n = cand.size(0)
        proj = self.drop(self.node(h)).view(h.size(0), 8, self.hidden)
        child, parent = proj[:n], proj[cand]  # (n, 8, H), (n, c, 8, H)
        pf = self.pair(pair).view(n, cand.size(1), 2, self.hidden)
        ch = child.unsqueeze(1)
        z_link = ch[:, :, 0] + parent[:, :, 1] + pf[:, :, 0] + ch[:, :, 2] * parent[:, :, 3]
        z_sense = ch[:, :, 4] + parent[:, :, 5] + pf[:, :, 1] + ch[:, :, 6] * parent[:, :, 7]
        return self.link(z_link).squeeze(-1), self.sense(z_sense)


class DiscourseParser(nn.Module):
    """Two-pass discourse parser over batched dialogue graphs (see the module docstring).

    Args:
        emb_dim: Encoder width.
        vocab_size: Words in the lexical bag (plus pad and unknown).
        k: Parent candidates per EDU.
        dim: Hidden width of EDU states.
        word_dim: Width of the lexical bag.
        dropout: Dropout rate.
    """

    def __init__(
        self,
        emb_dim: int,
        vocab_size: int,
        k: int,
        dim: int = 192,
        word_dim: int = 96,
        dropout: float = 0.2,
    ) -> None:
        super().__init__()
        self.k = k
        self.words = nn.EmbeddingBag(vocab_size + 2, word_dim, mode="mean", padding_idx=0)
        self.inp = nn.Sequential(
            nn.Dropout(dropout), nn.Linear(emb_dim + word_dim + NODE_FEATURES, dim), nn.ReLU(), nn.LayerNorm(dim)
        )
        self.gru = nn.GRU(dim, dim // 2, batch_first=True, bidirectional=True)
        self.gnn1 = TypedConv(dim, len(STRUCTURE_TYPES))
        self.norm1 = nn.LayerNorm(dim)
        self.gnn2 = TypedConv(dim, 2 * len(SENSES))
        self.norm2 = nn.LayerNorm(dim)
        self.root = nn.Parameter(torch.zeros(dim))
        pdim = pair_feature_count(k)
        self.pass1 = PairScorer(dim, pdim, 128, dropout)
        self.pass2 = PairScorer(dim, pdim, 128, dropout)
        self.drop = nn.Dropout(dropout)

    def _lexical(self, batch) -> Tensor:
        n = batch.emb.size(0)
        # EmbeddingBag with per-node offsets: tokens are grouped by node (token_index sorted).
        counts = torch.bincount(batch.token_index, minlength=n)
        offsets = torch.cumsum(counts, 0) - counts
        return self.words(batch.token_ids, offsets)

    def _candidates(self, position: Tensor) -> Tensor:
        """``(n, slots)`` rows of the extended state matrix: the root row ``n``, then the 1..K
        previous EDUs (the root row where there is no such EDU; those slots are masked)."""
        n = position.size(0)
        dist = torch.arange(1, self.k + 1, device=position.device)
        idx = torch.arange(n, device=position.device).unsqueeze(1) - dist.unsqueeze(0)
        idx = torch.where(dist.unsqueeze(0) <= position.unsqueeze(1), idx, torch.full_like(idx, n))
        return torch.cat([torch.full((n, 1), n, dtype=idx.dtype, device=idx.device), idx], dim=1)

    def forward(self, batch) -> dict[str, Tensor]:
        """Scores of a PyG batch of dialogue graphs.

        Returns:
            ``link1``/``link2`` ``(n, slots)`` masked link scores and ``sense1``/``sense2``
            ``(n, slots, senses)`` logits, for pass 1 and pass 2.
        """
        x = torch.cat([batch.emb, self._lexical(batch), batch.feat], dim=-1)
        h = self.inp(x)
        dense, mask = to_dense_batch(h, batch.batch)
        lengths = mask.sum(1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(dense, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.gru(packed)
        ctx, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=dense.size(1))
        h = h + self.drop(ctx[mask])
        h = self.norm1(h + self.drop(torch.relu(self.gnn1(h, batch.edge_index, batch.edge_type))))
        neg = torch.finfo(h.dtype).min
        cand = self._candidates(batch.position)
        link1, sense1 = self.pass1(torch.cat([h, self.root.unsqueeze(0)]), cand, batch.pair)
        link1 = link1.masked_fill(~batch.cand_mask, neg)
        # Pass 2: edges from the pass-1 parents, typed by predicted sense (and direction).
        with torch.no_grad():
            best = link1.argmax(1)
            child = torch.nonzero(best > 0).squeeze(1)
            parent = child - best[child]
            s = sense1[child, best[child]].argmax(-1)
        edge_index = torch.cat([torch.stack([parent, child]), torch.stack([child, parent])], dim=1)
        edge_type = torch.cat([s, s + len(SENSES)])
        h2 = self.norm2(h + self.drop(torch.relu(self.gnn2(h, edge_index, edge_type))))
        link2, sense2 = self.pass2(torch.cat([h2, self.root.unsqueeze(0)]), cand, batch.pair)
        link2 = link2.masked_fill(~batch.cand_mask, neg)
        return {"link1": link1, "sense1": sense1, "link2": link2, "sense2": sense2}


def edge_type_names() -> tuple[str, ...]:
    """Names of the edge types the model reads (structure, then senses), for the model card."""
    return EDGE_TYPES
