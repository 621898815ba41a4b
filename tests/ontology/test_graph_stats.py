"""The typed corpus stats give back, key for key and in the same order, what the store counted."""

from __future__ import annotations

import json

from ontology.views import GraphStats

COUNTS = {
    "labels": {"Node": 7, "Locution": 2},
    "relationships": {"IN_CORPUS": 5},
    "corpora": {
        "(none)": {"labels": {"Node": 1}, "relationships": {}, "relations": {}, "summary": {"relations": 0}},
        "qt30": {
            "labels": {"Node": 6, "Locution": 2},
            "relationships": {"IN_CORPUS": 5},
            "relations": {"Support:Default Inference": 1},
            "status": "complete",
            "source": None,
            "summary": {"locutions": 2, "relations": 1},
        },
    },
}


def test_stats_round_trip_to_the_same_json() -> None:
    stats = GraphStats.from_counts(COUNTS)
    assert stats.corpora["qt30"].marked and stats.corpora["qt30"].status == "complete"
    assert not stats.corpora["(none)"].marked and stats.corpora["(none)"].status is None
    assert stats.corpora["qt30"].summary["locutions"] == 2
    assert json.dumps(stats.as_dict()) == json.dumps(COUNTS)
