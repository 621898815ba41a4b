"""The word-alignment head of the out-of-context pair model (``PairConfig.align > 0``).

Two frozen sentence vectors carry little of a pair's polarity: "The limit is working" and "The
limit is not working" sit close together. Here each side's words (the encoder's last-layer word
vectors) are projected, every word attends to the words of the other side, and is compared with
what it attends to (``[a, b̃, a - b̃, a * b̃]``, the decomposable-attention / ESIM comparison); the
compared words of each side are pooled (mean and max) and join the sentence-vector features in
the MLP. A "not" then meets the words it denies.

Imported lazily (it needs torch at import time).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor, nn

_MASKED = -1e4


class AlignHead(nn.Module):
    """Pair logits from the pair features and the two sides' word vectors.

    Args:
        features: Width of the sentence-vector pair features (:func:`gnn.pairs.feature_width`).
        word_dim: Width of a word vector.
        width: Width of the projected and compared words.
        hidden: Width of the MLP's hidden layer.
        dropout: Dropout after it.
        labels: Number of labels.
    """

    def __init__(self, features: int, word_dim: int, width: int, hidden: int, dropout: float, labels: int) -> None:
        super().__init__()
        self.project = nn.Sequential(nn.Linear(word_dim, width), nn.ReLU())
        self.compare = nn.Sequential(nn.Linear(4 * width, width), nn.ReLU())
        self.mlp = nn.Sequential(
            nn.Linear(features + 4 * width, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, labels)
        )

    def _side(self, words: Tensor, other: Tensor, weights: Tensor, mask: Tensor) -> Tensor:
        aligned = weights @ other
        compared = self.compare(torch.cat([words, aligned, words - aligned, words * aligned], dim=-1))
        keep = mask.unsqueeze(-1).to(compared.dtype)
        mean = (compared * keep).sum(1) / keep.sum(1).clamp(min=1)
        peak = compared.masked_fill(~mask.unsqueeze(-1), _MASKED).amax(1).clamp(min=0)
        return torch.cat([mean, peak], dim=-1)

    def forward(self, features: Tensor, a: Tensor, mask_a: Tensor, b: Tensor, mask_b: Tensor) -> Tensor:
        """Logits ``(n, labels)``: ``a``/``b`` are ``(n, words, word_dim)`` with boolean masks ``(n, words)``."""
        pa, pb = self.project(a), self.project(b)
        scores = pa @ pb.transpose(1, 2)
        to_b = torch.softmax(scores.masked_fill(~mask_b.unsqueeze(1), _MASKED), dim=2)
        to_a = torch.softmax(scores.masked_fill(~mask_a.unsqueeze(2), _MASKED), dim=1).transpose(1, 2)
        side_a = self._side(pa, pb, to_b, mask_a)
        side_b = self._side(pb, pa, to_a, mask_b)
        return self.mlp(torch.cat([features, side_a, side_b], dim=-1))


def padded(arrays: Sequence[np.ndarray], width: int) -> tuple[Tensor, Tensor]:
    """Word vectors of several texts as one zero-padded ``(n, words, width)`` float32 tensor and its mask."""
    longest = max((len(a) for a in arrays), default=0) or 1
    x = np.zeros((len(arrays), longest, width), dtype=np.float32)
    mask = np.zeros((len(arrays), longest), dtype=bool)
    for i, a in enumerate(arrays):
        x[i, : len(a)] = a
        mask[i, : len(a)] = True
    return torch.from_numpy(x), torch.from_numpy(mask)
