"""The typed results of live mining and ``POST /predict``, and the JSON they give at the edge."""

from __future__ import annotations

import json
from typing import Any

from api.services.predict import PredictedEdge, PredictionAnswer
from gnn.relations.mining import (
    Analysis,
    DialogueUnits,
    MiningSummary,
    NeighbourHit,
    best_neighbours,
    summarise,
    unit_transitions,
)
from ontology.records import PredictionRun

RUNS = [
    PredictionRun(run_id="disc-1", model="parser", model_version="3", task="discourse"),
    PredictionRun(run_id="rel-1", model="relations", model_version="7", task="relations"),
]
UNITS = DialogueUnits(
    "mined:d", "mined", ["ann", "bob", "ann"], ["Tax it.", "No, never.", "Yes."], ["L0", "L1", "L2"], ["I0", "I1", "I2"]
)
ANALYSIS = Analysis(
    [(0, 1, "Contrast", 0.9), (1, 2, "QAP", 0.6)],
    [(1, 0, "attack", 0.8), (2, 1, "attack", 0.7), (2, 0, "support", 0.5)],
)


def _summary(neighbours: list[list[NeighbourHit]] | None) -> MiningSummary:
    note = None if neighbours is not None else "nothing embedded"
    return summarise(UNITS, ANALYSIS, runs=RUNS, neighbours=neighbours, neighbours_note=note, written=False)


def test_the_summary_keeps_its_json_shape_and_reads_back() -> None:
    hits = [[NeighbourHit("qt30:I:1", "qt30", "qt30:d", "Taxes", 0.41)], [], [NeighbourHit("x", None, None, None, 0.9)]]
    summary = _summary(hits)
    data: dict[str, Any] = summary.as_dict()
    assert list(data) == [
        "dialogue_id",
        "corpus",
        "written",
        "segmenter",
        "counts",
        "utterances",
        "discourse_links",
        "argument_relations",
        "strongest",
        "nearest",
        "nearest_note",
        "runs",
    ]
    assert data["counts"] == {
        "utterances": 3,
        "speakers": 2,
        "discourse_links": 2,
        "support": 1,
        "attack": 2,
        "rephrase": 0,
    }
    assert data["utterances"][1] == {"index": 1, "id": "L1", "speaker": "bob", "text": "No, never."}
    assert data["strongest"]["attack"] == {
        "source": "I1",
        "target": "I0",
        "source_index": 1,
        "target_index": 0,
        "source_text": "No, never.",
        "target_text": "Tax it.",
        "label": "attack",
        "score": 0.8,
        "model": "relations",
        "model_version": "7",
        "run_id": "rel-1",
    }
    assert data["discourse_links"][0]["run_id"] == "disc-1"
    assert [row["index"] for row in data["nearest"]] == [0, 2]  # a unit without hits is left out
    assert data["runs"][0] == {"run_id": "disc-1", "model": "parser", "model_version": "3", "task": "discourse"}
    assert MiningSummary.from_dict(json.loads(json.dumps(data))) == summary
    assert [(row.index, hit.id) for row, hit in best_neighbours(summary)] == [(2, "x"), (0, "qt30:I:1")]


def test_a_summary_without_neighbours_says_why() -> None:
    summary = _summary(None)
    assert summary.nearest is None and summary.nearest_note == "nothing embedded"
    assert best_neighbours(summary) == []
    assert MiningSummary.from_dict(summary.as_dict()) == summary


def test_a_prediction_answer_leaves_out_what_its_task_has_no_value_for() -> None:
    edge = PredictedEdge("text:0", "text:1", "attack", 0.7, "argument", "pairs", "2")
    pair = PredictionAnswer("pair", "pairs", "2", None, [], False, None, [edge], probabilities={"attack": 0.7})
    assert list(pair.as_dict()) == [
        "task",
        "model",
        "model_version",
        "run_id",
        "runs",
        "written",
        "edges",
        "probabilities",
    ]
    summary = _summary(None)
    dialogue = PredictionAnswer("dialogue", "relations", "7", None, summary.runs, False, "mined:d", [], summary=summary)
    out: dict[str, Any] = dialogue.as_dict()
    assert "probabilities" not in out and out["dialogue_id"] == "mined:d"
    assert out["summary"] == summary.as_dict() and out["runs"] == summary.as_dict()["runs"]


def test_links_between_locutions_become_transitions_and_rows_between_their_units() -> None:
    # Unit 0 was said in locutions 0 and 1, unit 1 in locution 2, unit 2 in none: a link 1 -> 2
    # joins units 0 -> 1, a link 0 -> 2 too; nothing reaches unit 2.
    links = [(0, 2, "Contrast", 0.9), (1, 2, "QAP", 0.6), (2, 0, "Comment", 0.3)]
    assert unit_transitions(links, [[0, 1], [2], []]) == [(0, 1), (0, 1), (1, 0)]
    # One unit per locution: the links themselves.
    assert unit_transitions(links, [[0], [1], [2]]) == [(0, 2), (1, 2), (2, 0)]
    analysis = Analysis([(0, 1, "Contrast", 0.9), (1, 2, "QuestionAnswerPair", 0.6)], ANALYSIS.arguments)
    disc, args = analysis.relations(UNITS.locutions, UNITS.units)
    assert [(r.source, r.target, r.label.value, r.score) for r in disc] == [
        ("L0", "L1", "Contrast", 0.9),
        ("L1", "L2", "QuestionAnswerPair", 0.6),
    ]
    assert all(r.scheme_label for r in disc)
    assert [(r.source, r.target, r.label.value) for r in args] == [
        ("I1", "I0", "attack"),
        ("I2", "I1", "attack"),
        ("I2", "I0", "support"),
    ]
