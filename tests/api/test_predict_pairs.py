"""``POST /predict`` with ``task: pair`` answers with the shipped out-of-context pair model: its labels
and probabilities, and the hand-written challenge set (never trained or tuned on) mostly right."""

from __future__ import annotations

from typing import Any

import pytest

from api.app import create_app
from api.services import pairs, predict
from api.services.graph import Graph
from api.settings import Settings
from gnn.pairs import LABELS, ChallengePair, ChallengeScore, challenge_score, read_challenge
from gnn.registry import shipped_model
from ontology.errors import ApiError

pytestmark = pytest.mark.model  # runs the shipped pair model and the packaged encoder


def _ask(graph: Graph, first: str, second: str) -> dict[str, Any]:
    return predict.predict(predict.PredictionRequest("pair", texts=(first, second)), graph).as_dict()


@pytest.fixture(scope="module")
def asked() -> tuple[list[ChallengePair], list[dict[str, Any]]]:
    """Every challenge pair asked through the ``POST /predict`` service, as the route asks it."""
    create_app()
    graph = Graph(Settings(), start=False)
    rows = read_challenge(pairs.CHALLENGE)
    return rows, [_ask(graph, row.source, row.target) for row in rows]


def test_pair_answers_carry_the_pair_model_and_every_label_probability(
    asked: tuple[list[ChallengePair], list[dict[str, Any]]],
) -> None:
    for body in asked[1]:
        (edge,) = body["edges"]
        probs = body["probabilities"]
        assert body["model"] == pairs.MODEL_NAME and body["written"] is False and body["run_id"] is None
        assert edge["model"] == pairs.MODEL_NAME and edge["model_version"] == body["model_version"]
        assert set(probs) == set(LABELS) and abs(sum(probs.values()) - 1) < 1e-3
        assert edge["label"] in LABELS and edge["score"] == probs[edge["label"]]


def _score(asked: tuple[list[ChallengePair], list[dict[str, Any]]]) -> ChallengeScore:
    rows, bodies = asked
    return challenge_score(rows, [body["edges"][0]["label"] for body in bodies])


def test_the_challenge_set_gets_each_of_its_labels_right_somewhere(
    asked: tuple[list[ChallengePair], list[dict[str, Any]]],
) -> None:
    # The QT30 map network answered none to every pair; this model tells all three labels apart.
    result = _score(asked)
    assert all(row["right"] > 0 for row in result.per_label.values()), result


def test_the_challenge_set_is_answered_right_at_least_80_percent_of_the_time(
    asked: tuple[list[ChallengePair], list[dict[str, Any]]],
) -> None:
    # bench/models.py prints the same figure (the shipped model: 31 of 36, docs/models/pairs.md).
    result = _score(asked)
    assert result.share >= 0.8, result
    assert all(row["right"] >= 6 for row in result.per_label.values()), result  # no label given up


def test_a_model_of_another_task_is_refused() -> None:
    with pytest.raises(ApiError, match="not a 'pairs' model"):
        pairs.model_dir(Settings(), shipped_model("paraphrase"))
