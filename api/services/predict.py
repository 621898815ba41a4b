"""The prediction hook of the API (``POST /predict``).

This module is the one place the API asks models for predictions: :func:`register` installs a
predictor per task, :func:`predict` checks the request and calls it. The app installs the real
predictors (:mod:`api.services.predictors`: relation model, discourse parser, live mining) when it
is built; a server where none is registered answers 503, never with made-up edges.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ontology.errors import ApiError, BusyError, ModelNotInstalledError, UnknownTaskError

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
        model: Reserved: only the server's installed models answer (a value is refused).
        write: Store the predictions through the prediction write path (API key checked by the route).
        options: Task options (transcript: ``corpus``, ``name``, ``k``).
    """

    task: str
    texts: tuple[str, str] | None = None
    dialogue_id: str | None = None
    utterances: tuple[dict[str, str], ...] = ()
    model: str | None = None
    write: bool = False
    options: dict[str, Any] = field(default_factory=dict)


Predictor = Callable[[PredictionRequest, Any], dict[str, Any]]
"""``(request, graph) -> {"model", "model_version", "run_id"?, "edges": [{source, target, label, score}], ...}``."""

_PREDICTORS: dict[str, Predictor] = {}


def register(task: str, predictor: Predictor) -> None:
    """Install the predictor of ``task`` (called by the model services when they are wired in).

    Raises:
        UnknownTaskError: ``task`` is not one of :data:`TASKS`.
    """
    UnknownTaskError.check(task, TASKS)
    _PREDICTORS[task] = predictor


@dataclass(frozen=True)
class Limits:
    """What one prediction request may ask of the models (see the ``predict_*`` settings).

    Attributes:
        utterances: Utterances of a transcript.
        chars: Characters of a transcript in all; one utterance may have a tenth of it.
        running: Requests computed at once; one more is refused, not queued.
    """

    utterances: int = 300
    chars: int = 60_000
    running: int = 2


_RUNNING: dict[int, threading.BoundedSemaphore] = {}
_RUNNING_LOCK = threading.Lock()


def check_limits(request: PredictionRequest, limits: Limits) -> None:
    """Refuse a transcript beyond ``limits`` before any model runs.

    Raises:
        ApiError: Too many utterances or characters (names the utterance that is too long).
    """
    if len(request.utterances) > limits.utterances:
        raise ApiError(f"a transcript may have at most {limits.utterances} utterances, not {len(request.utterances)}")
    per = max(1, limits.chars // 10)
    total = 0
    for i, utterance in enumerate(request.utterances):
        size = len(utterance.get("text", ""))
        if size > per:
            raise ApiError(f"utterance #{i} has {size} characters; one utterance may have at most {per}")
        total += size
    if total > limits.chars:
        raise ApiError(f"a transcript may have at most {limits.chars} characters in all, not {total}")


def predict_limited(request: PredictionRequest, graph: Any, limits: Limits) -> dict[str, Any]:
    """:func:`predict` within ``limits``: checked first, then at most ``limits.running`` at once.

    Raises:
        ApiError: Beyond the size limits (:func:`check_limits`).
        BusyError: ``limits.running`` requests are being computed (503, retry).
    """
    check_limits(request, limits)
    with running_slot(limits):
        return predict(request, graph)


@contextmanager
def running_slot(limits: Limits) -> Iterator[None]:
    """One of the ``limits.running`` slots of model requests (``/predict`` and ``/amf``), held while inside.

    Raises:
        BusyError: Every slot is taken (503, retry): a request is refused, not queued.
    """
    with _RUNNING_LOCK:
        slot = _RUNNING.setdefault(limits.running, threading.BoundedSemaphore(limits.running))
    if not slot.acquire(blocking=False):
        raise BusyError(f"{limits.running} predictions are being computed, the most at once; retry")
    try:
        yield
    finally:
        slot.release()


def predict(request: PredictionRequest, graph: Any) -> dict[str, Any]:
    """Predicted edges with scores for a pair, a stored dialogue or a new transcript.

    Raises:
        UnknownTaskError: The task is not one of :data:`TASKS`.
        ApiError: The request does not fit its task.
        ModelNotInstalledError: No model is installed for the task (503).
    """
    UnknownTaskError.check(request.task, TASKS)
    if request.task == "pair" and request.texts is None:
        raise ApiError("a pair prediction needs two texts")
    if request.model is not None:
        raise ApiError("model: only the server's installed models can be used; leave it out")
    if request.task == "dialogue" and not request.dialogue_id:
        raise ApiError("a dialogue prediction needs dialogue_id")
    if request.task == "transcript" and not request.utterances:
        raise ApiError("a transcript prediction needs utterances")
    predictor = _PREDICTORS.get(request.task)
    if predictor is None:
        raise ModelNotInstalledError(f"no model is installed for {request.task} prediction on this server")
    return predictor(request, graph)
