"""Helpers of SPARQL results shared by the worker process and the command line.

Queries themselves are evaluated only in worker processes of the one worker pool
(:func:`api.services.query.run_sparql`), never in the process that serves clients.
"""

from __future__ import annotations

from typing import Any

import pyoxigraph as ox

from ontology.namespaces import PREFIXES


def result_form(result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples) -> str:
    """``boolean`` (ASK), ``graph`` (CONSTRUCT/DESCRIBE) or ``solutions`` (SELECT)."""
    if isinstance(result, ox.QueryBoolean):
        return "boolean"
    return "graph" if isinstance(result, ox.QueryTriples) else "solutions"


def compact(value: Any) -> str:
    """An IRI written with a known prefix (``aw:Support``); other values as text, unbound as ''."""
    if value is None:
        return ""
    text = str(value)
    for prefix, iri in PREFIXES.items():
        if text.startswith(iri) and len(text) > len(iri):
            return f"{prefix}:{text[len(iri) :]}"
    return text
