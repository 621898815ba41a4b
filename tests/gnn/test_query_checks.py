"""What a text searched by meaning may be, checked before any encoder loads."""

from __future__ import annotations

import pytest

from gnn.query_embedding import MAX_QUERY_CHARS, check_queries
from ontology.errors import ApiError

pytestmark = pytest.mark.unit  # no encoder loaded


def test_query_texts_are_stripped_once_each_is_searchable() -> None:
    assert check_queries(["  a claim ", "x" * MAX_QUERY_CHARS]) == ["a claim", "x" * MAX_QUERY_CHARS]
    assert check_queries([]) == []


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        (["fine", "  "], "the query text is empty"),
        ([""], "the query text is empty"),
        (["x" * (MAX_QUERY_CHARS + 1)], f"has {MAX_QUERY_CHARS + 1} characters; at most {MAX_QUERY_CHARS}"),
    ],
)
def test_an_empty_or_oversized_text_is_refused(texts: list[str], message: str) -> None:
    with pytest.raises(ApiError, match=message):
        check_queries(texts)
