"""The relation listing's filter: validation and the query parameters it hands to the store."""

from __future__ import annotations

import pytest

from graphstore.browsing import RelationFilter
from ontology.errors import ApiError
from ontology.terms import Label


def test_params_carry_every_filter_but_the_kind() -> None:
    f = RelationFilter("Support", "predicted", "m1", 0.5, "qt30", None)
    assert f.label is Label.Support
    assert f.params() == {"origin": "predicted", "model": "m1", "min_score": 0.5, "corpus": "qt30", "sense": None}


def test_no_kind_means_every_relation() -> None:
    assert RelationFilter().label is Label.Relation


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "Nonsense"}, "unknown relation type"),
        ({"origin": "guessed"}, "origin must be gold or predicted"),
        ({"sense": "Nonsense"}, "unknown discourse sense"),
        ({"min_score": 1.5}, r"min_score must lie in \[0, 1\]"),
    ],
)
def test_bad_filters_are_client_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ApiError, match=message):
        RelationFilter(**kwargs)  # type: ignore[arg-type]
