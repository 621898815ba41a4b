"""The rewritings of corpus files moved to :mod:`ontology.formats.perturb` (pure, no Neo4j); this name
stays only for :mod:`api.services.relations` until it imports them from there."""

from __future__ import annotations

from ontology.formats.perturb import AIF_VARIANTS

__all__ = ["AIF_VARIANTS"]
