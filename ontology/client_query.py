"""What every client query, Cypher or SPARQL, must be before it is looked at: not empty, not oversized."""

from __future__ import annotations

from ontology.errors import ApiError

MAX_QUERY_CHARS = 100_000
"""The longest query text a client may send (either language)."""


def check_query_size(query: str, language: str) -> None:
    """Refuse an empty or oversized query.

    Raises:
        ApiError: The ``language`` query is empty or longer than :data:`MAX_QUERY_CHARS`.
    """
    if not query.strip():
        raise ApiError(f"the {language} query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise ApiError(f"the {language} query is longer than {MAX_QUERY_CHARS} characters")
