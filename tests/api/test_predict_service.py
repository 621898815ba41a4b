"""The /predict hook without a database: the app installs real predictors, requests are checked before
any model runs, and transcript turns become sentence-level utterances."""

from __future__ import annotations

import pytest

from api.app import create_app
from api.services import mine, predict, predictors
from ontology.errors import ApiError


def test_the_app_installs_a_predictor_per_task() -> None:
    create_app()
    # The doors of their own, and one per registered task that predicts over stored dialogues.
    assert set(predict._PREDICTORS) == {*predict.TASKS, *predict.graph_tasks()}
    assert {"discourse", "relations", "paraphrase"} <= set(predict.graph_tasks())
    assert predict._PREDICTORS["pair"] is predictors.predict_pair
    assert predict._PREDICTORS["transcript"] is mine.predict_transcript


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (
            predict.PredictionRequest("guess"),
            "unknown task 'guess'; expected one of pair, dialogue, transcript, discourse",
        ),
        (predict.PredictionRequest("pair"), "needs two texts"),
        (predict.PredictionRequest("pair", texts=("a", "b"), model="x"), "only the server's installed models"),
        (predict.PredictionRequest("dialogue"), "needs dialogue_id"),
        (predict.PredictionRequest("transcript"), "needs utterances"),
    ],
)
def test_requests_are_checked_before_a_model_runs(request_: predict.PredictionRequest, message: str) -> None:
    with pytest.raises(ApiError, match=message):
        predict.predict(request_, None)


def test_utterances_of_segments_turns_and_refuses_empty_ones() -> None:
    us = mine.utterances_of([{"speaker": "Anna", "text": "First. Second one?"}, {"speaker": "Tom", "text": "No."}])
    assert [(u.speaker, u.text, u.turn) for u in us] == [
        ("Anna", "First.", 0),
        ("Anna", "Second one?", 0),
        ("Tom", "No.", 1),
    ]
    with pytest.raises(ApiError, match="utterance #1"):
        mine.utterances_of([{"speaker": "Anna", "text": "x"}, {"speaker": "", "text": "y"}])


def test_a_gold_corpus_is_refused_before_anything_runs() -> None:
    us = mine.utterances_of([{"speaker": "Anna", "text": "A claim."}])
    with pytest.raises(ApiError, match="gold annotation"):
        mine.prepare(us, "qt30", "x", "")
    mined = mine.prepare(us, "mined", "x", "")
    assert mined.locutions == [f"{mined.dialogue_id}:L:0"] and mined.propositions == [f"{mined.dialogue_id}:I:0"]
