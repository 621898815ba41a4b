"""The prediction hook of the API (``POST /predict``).

The relation and discourse models live on their own branches (``api/services/relations.py``,
``api/services/discourse.py``). This module is the one place the API asks them for predictions:
:func:`register` installs a predictor per task, :func:`predict` calls it. Until a model service
registers itself, a prediction request is answered 503 (the feature exists; no model is installed),
never with made-up edges.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ontology.errors import ApiError, DatabaseUnavailableError

TASKS = ("pair", "dialogue", "transcript")


@dataclass(frozen=True)
class PredictionRequest:
    """What a client asks to be predicted.

    Attributes:
        task: ``pair`` (two texts), ``dialogue`` (a stored dialogue id) or ``transcript`` (new
            utterances with speakers, the live-mining case).
        texts: The two texts of a pair.
        dialogue_id: The stored dialogue.
        utterances: ``[{"speaker": ..., "text": ...}]`` of a new transcript.
        model: Model name to use (the service's default when None).
        write: Store the predictions through the prediction write path (API key checked by the route).
    """

    task: str
    texts: tuple[str, str] | None = None
    dialogue_id: str | None = None
    utterances: tuple[dict[str, str], ...] = ()
    model: str | None = None
    write: bool = False
    options: dict[str, Any] = field(default_factory=dict)


Predictor = Callable[[PredictionRequest, Any], dict[str, Any]]
"""``(request, driver) -> {"model", "model_version", "run_id"?, "edges": [{source, target, label, score}]}``."""

_PREDICTORS: dict[str, Predictor] = {}


def register(task: str, predictor: Predictor) -> None:
    """Install the predictor of ``task`` (called by the model services when they are wired in)."""
    if task not in TASKS:
        raise ValueError(f"unknown prediction task {task!r}")
    _PREDICTORS[task] = predictor


def predict(request: PredictionRequest, driver: Any) -> dict[str, Any]:
    """Predicted edges with scores for a pair, a stored dialogue or a new transcript.

    Raises:
        ApiError: The request does not fit its task.
        DatabaseUnavailableError: No model is installed for the task.
    """
    if request.task not in TASKS:
        raise ApiError(f"task must be one of {', '.join(TASKS)}")
    if request.task == "pair" and request.texts is None:
        raise ApiError("a pair prediction needs two texts")
    if request.task == "dialogue" and not request.dialogue_id:
        raise ApiError("a dialogue prediction needs dialogue_id")
    if request.task == "transcript" and not request.utterances:
        raise ApiError("a transcript prediction needs utterances")
    predictor = _PREDICTORS.get(request.task)
    if predictor is None:
        raise DatabaseUnavailableError(f"no model is installed for {request.task} prediction on this server")
    return predictor(request, driver)
