"""Text vectors of the relation models: frozen transformer embeddings, or a small LSA when CPU is scarce.

``encoder`` uses :class:`gnn.encoder.TextEncoder` (MiniLM by default, cached per text). ``lsa``
is a TF-IDF -> truncated-SVD projection fitted on the training texts and stored in the model
directory (vocabulary, idf and components; a few MB): it costs milliseconds instead of the
encoder's minutes, which is what the quick profile uses.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ontology.errors import ModelError

_TOKEN = re.compile(r"[a-z0-9']+")


class TextVectors(Protocol):
    """Anything that turns texts into fixed-width vectors."""

    @property
    def dim(self) -> int:
        """Vector width."""
        ...

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """``(len(texts), dim)`` float32 vectors."""
        ...


def _tokens(text: str) -> list[str]:
    toks = _TOKEN.findall(text.lower())
    return toks + [f"{a}_{b}" for a, b in itertools.pairwise(toks)]


class Lsa:
    """TF-IDF (words and word bigrams, sublinear tf) projected by a truncated SVD.

    Args:
        vocab: Term -> column.
        idf: ``(V,)`` inverse document frequencies.
        components: ``(k, V)`` SVD components.
    """

    def __init__(self, vocab: dict[str, int], idf: np.ndarray, components: np.ndarray) -> None:
        self.vocab = vocab
        self.idf = idf.astype(np.float32)
        self.components = components.astype(np.float32)

    @property
    def dim(self) -> int:
        """Vector width."""
        return int(self.components.shape[0])

    @property
    def name(self) -> str:
        """Name for model cards."""
        return f"lsa-{self.dim}"

    def _tfidf(self, texts: Sequence[str]) -> Any:
        from scipy.sparse import csr_matrix

        rows, cols, vals = [], [], []
        for r, text in enumerate(texts):
            counts = Counter(t for t in _tokens(text) if t in self.vocab)
            for term, c in counts.items():
                rows.append(r)
                cols.append(self.vocab[term])
                vals.append((1.0 + math.log(c)) * self.idf[self.vocab[term]])
        m = csr_matrix((vals, (rows, cols)), shape=(len(texts), len(self.vocab)), dtype=np.float32)
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1))).ravel()
        norms[norms == 0] = 1.0
        return m.multiply(1.0 / norms[:, None]).tocsr()

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """L2-normalised LSA vectors."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        x = np.asarray(self._tfidf(texts) @ self.components.T, dtype=np.float32)
        n = np.linalg.norm(x, axis=1, keepdims=True)
        n[n == 0] = 1.0
        return x / n

    @classmethod
    def fit(cls, texts: Sequence[str], dim: int = 128, max_terms: int = 8000, seed: int = 0) -> Lsa:
        """Fit vocabulary (terms in at least 2 texts, most frequent first), idf and SVD on ``texts``."""
        from sklearn.decomposition import TruncatedSVD

        df: Counter[str] = Counter()
        for text in texts:
            # Sorted: which terms tie at the ``max_terms`` cut must not follow set iteration order.
            df.update(sorted(set(_tokens(text))))
        terms = [t for t, c in df.most_common(max_terms) if c >= 2]
        vocab = {t: k for k, t in enumerate(sorted(terms))}
        n = len(texts)
        idf = np.array([math.log((1 + n) / (1 + df[t])) + 1.0 for t in sorted(terms)], dtype=np.float32)
        model = cls(vocab, idf, np.zeros((0, len(vocab)), dtype=np.float32))
        x = model._tfidf(texts)
        k = max(1, min(dim, len(vocab) - 1, n - 1))
        svd = TruncatedSVD(n_components=k, random_state=seed).fit(x)
        model.components = svd.components_.astype(np.float32)
        return model

    def save(self, path: Path) -> None:
        """Write ``path`` (``.npz``: components in float16, idf, vocabulary as JSON)."""
        vocab_json = json.dumps(sorted(self.vocab, key=self.vocab.__getitem__))
        with open(path, "wb") as fh:
            np.savez_compressed(
                fh, components=self.components.astype(np.float16), idf=self.idf, vocab=np.array(vocab_json)
            )

    @classmethod
    def load(cls, path: Path) -> Lsa:
        """Read a file written by :meth:`save`.

        Raises:
            ModelError: Missing or malformed file.
        """
        try:
            with np.load(path, allow_pickle=False) as data:
                terms = json.loads(str(data["vocab"]))
                return cls({t: k for k, t in enumerate(terms)}, data["idf"], data["components"].astype(np.float32))
        except (OSError, KeyError, ValueError) as e:
            raise ModelError(f"{path}: not an LSA text model ({e})") from e
