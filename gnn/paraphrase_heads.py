"""The sequence head of the paraphrase highlighter (``HighlighterConfig.head = "gru"``).

Each side's words are read in order: their features pass a linear layer, a bidirectional GRU over
the side gives every word its neighbours' view, and a small MLP scores the word from both. A
token MLP scores every word on its own, so a highlight can start or stop anywhere; annotators
highlight spans. Measured by five-fold cross-validation over the training pairs and the tuning
half (by interview, out-of-fold logits, one offset; docs/models/paraphrase.md), the GRU head
raised the highlight Jaccards (guest 0.266 -> 0.302, host 0.497 -> 0.519) where a 5-word
convolution did not.

Imported lazily (it needs torch at import time).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn


class SequenceHead(nn.Module):
    """Word logits of each side from its word features, the side read by a bidirectional GRU."""

    def __init__(self, dim_in: int, hidden: int, dropout: float) -> None:
        super().__init__()
        self.inp = nn.Sequential(nn.Linear(dim_in, hidden), nn.GELU(), nn.Dropout(dropout))
        self.rnn = nn.GRU(hidden, hidden // 2, batch_first=True, bidirectional=True)
        self.out = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.GELU(), nn.Linear(hidden, 1))

    def forward(self, sides: Sequence[Tensor]) -> list[Tensor]:
        """One logit per word of each side (``sides``: words x features each; empty sides allowed)."""
        lengths = [len(s) for s in sides]
        kept = [i for i, n in enumerate(lengths) if n > 0]
        out = [s.new_zeros(0) for s in sides]
        if not kept:
            return out
        padded = nn.utils.rnn.pad_sequence([sides[i] for i in kept], batch_first=True)
        z = self.inp(padded)
        packed = nn.utils.rnn.pack_padded_sequence(
            z, torch.tensor([lengths[i] for i in kept]), batch_first=True, enforce_sorted=False
        )
        ctx, _ = self.rnn(packed)
        ctx, _ = nn.utils.rnn.pad_packed_sequence(ctx, batch_first=True, total_length=z.size(1))
        logits = self.out(torch.cat([z, ctx], dim=-1)).squeeze(-1)
        for row, i in enumerate(kept):
            out[i] = logits[row, : lengths[i]]
        return out
