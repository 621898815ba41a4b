"""Helpers shared by the loaders, on hand-made values."""

from __future__ import annotations

import pytest

from graphstore.loaders.common import vote_fields
from ontology.records import relation_from_scheme


def test_vote_fields_derive_the_share_only_from_known_counts() -> None:
    assert vote_fields(3, 4) == {"votes": 3, "annotator_count": 4, "vote_share": 0.75}
    # An aggregate that gives only how many judged (M-Arg's aggregated file) has no share.
    assert vote_fields(None, 5) == {"votes": None, "annotator_count": 5, "vote_share": None}
    assert vote_fields(0, 0)["vote_share"] is None
    assert vote_fields(0, 2)["vote_share"] == 0.0


def test_vote_fields_are_relation_record_fields() -> None:
    rel = relation_from_scheme(
        "m-arg", "Support", "f.csv: pair p1", id="m-arg:pair:p1", corpus="m-arg", **vote_fields(2, 3)
    )
    assert (rel.votes, rel.annotator_count) == (2, 3)
    assert rel.vote_share == pytest.approx(2 / 3)
