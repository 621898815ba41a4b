"""Embeddings of query texts: one forward pass of the encoder, nothing kept.

The semantic search of a long-running API embeds arbitrary texts; :meth:`TextEncoder.encode`
would keep every text it saw in its memory cache, so queries go through :meth:`TextEncoder.embed`
instead, a few at a time, with one intra-op thread.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ontology.errors import ApiError

if TYPE_CHECKING:
    from gnn.encoder import TextEncoder

MAX_QUERY_CHARS = 2000
"""The longest text searched by meaning."""
BATCH = 64
# torch's thread count is process-wide: one query sets and restores it at a time.
_THREADS = threading.Lock()


def check_queries(texts: Sequence[str]) -> list[str]:
    """The query texts, stripped, once each is known to be searchable.

    Raises:
        ApiError: An empty text, or one longer than :data:`MAX_QUERY_CHARS`.
    """
    for t in texts:
        if not t or not t.strip():
            raise ApiError("the query text is empty")
        if len(t) > MAX_QUERY_CHARS:
            raise ApiError(f"the query text has {len(t)} characters; at most {MAX_QUERY_CHARS} are searched")
    return [t.strip() for t in texts]


def embed_queries(encoder: TextEncoder, texts: Sequence[str]) -> list[list[float]]:
    """The embedding of each text, in order (the texts are embedded as given)."""
    import torch

    out: list[list[float]] = []
    # One intra-op thread: a few short texts gain nothing from more, and on a busy machine the
    # spinning of several threads made one query embedding 10x slower (2 s instead of 0.2 s).
    with _THREADS:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with torch.inference_mode():
                for s in range(0, len(texts), BATCH):
                    out.extend(v.tolist() for v in encoder.embed(texts[s : s + BATCH]).float().cpu().numpy())
        finally:
            torch.set_num_threads(threads)
    return out
