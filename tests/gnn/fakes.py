"""A fake text encoder for the unit tier: the real :class:`~gnn.encoder.TextEncoder` (cache, shards,
duplicates, progress) with vectors that come from a hash of each text instead of a transformer."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from gnn.encoder import TextEncoder


class HashEncoder(TextEncoder):
    """An encoder of ``dim`` dimensions whose model directory holds only a config, and no weights.

    Each text's vector is a deterministic unit vector seeded by the text's sha1; ``computed`` lists
    the texts it had to compute (the cache answered the rest).
    """

    def __init__(self, model_dir: Path, dim: int = 8, cache_dir: Path | None = None, batch_size: int = 4) -> None:
        model_dir.mkdir(parents=True, exist_ok=True)
        (model_dir / "config.json").write_text(json.dumps({"hidden_size": dim}), encoding="utf-8")
        super().__init__(model_dir, device="cpu", cache_dir=cache_dir, batch_size=batch_size)
        self.computed: list[str] = []

    def _compute(self, texts: list[str], advance: Callable[[int], None] | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            for i in range(start, min(start + self.batch_size, len(texts))):
                seed = int.from_bytes(hashlib.sha1(texts[i].encode("utf-8")).digest()[:8], "big")
                vec = np.random.default_rng(seed).standard_normal(self.dim)
                out[i] = vec / np.linalg.norm(vec)
                self.computed.append(texts[i])
            if advance is not None:
                advance(min(start + self.batch_size, len(texts)))
        return out
