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
from dataclasses import asdict, dataclass, field
from typing import Any

from gnn.relations.mining import MinedRun, MiningSummary
from ontology.errors import ApiError, BusyError, ModelNotInstalledError, UnknownTaskError

TASKS = ("pair", "dialogue", "transcript")
"""The doors of their own: an out-of-context pair, live mining of a stored dialogue or of a new transcript.
Every registered task that predicts over stored dialogues answers too (:func:`graph_tasks`)."""


def graph_tasks() -> tuple[str, ...]:
    """The registered tasks that predict over dialogues stored in the graph (``POST /predict`` names them)."""
    from gnn.task import contract_tasks, get_task

    return tuple(name for name in contract_tasks() if get_task(name).graph_corpora)


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


@dataclass(frozen=True)
class PredictedEdge:
    """A predicted relation of a ``/predict`` answer: never gold, always with its model and score.

    Attributes:
        source: Graph id of the source unit (a pair: ``text:0``).
        target: Graph id of the target unit (a pair: ``text:1``).
        label: support, attack, rephrase, none or a discourse sense.
        score: The model's score (rounded).
        kind: ``discourse`` (between locutions) or ``argument`` (between propositions).
        model: Model name.
        model_version: Model version.
        run_id: The run it belongs to (None for a pair, which is never stored).
        source_text: The source's text (dialogue, transcript).
        target_text: The target's text (dialogue, transcript).
    """

    source: str
    target: str
    label: str
    score: float
    kind: str
    model: str
    model_version: str
    run_id: str | None = None
    source_text: str | None = None
    target_text: str | None = None


@dataclass(frozen=True)
class PredictionAnswer:
    """What ``POST /predict`` answers: predicted edges and the models that produced them.

    Attributes:
        task: ``pair``, ``dialogue`` or ``transcript``.
        model: The relation model.
        model_version: Its version.
        run_id: The relations run, when written.
        runs: The runs of a dialogue or transcript (their ids also when not written).
        written: Whether the predictions were stored.
        dialogue_id: The dialogue predicted over (dialogue, transcript).
        edges: Every predicted edge.
        probabilities: A pair's probability per label.
        summary: What was mined of a dialogue or transcript.
    """

    task: str
    model: str
    model_version: str
    run_id: str | None
    runs: list[MinedRun]
    written: bool
    dialogue_id: str | None
    edges: list[PredictedEdge]
    probabilities: dict[str, float] | None = None
    summary: MiningSummary | None = None

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (the route's schema mirrors it); entries a task has no value for are left out."""
        out = asdict(self)
        for key in ("dialogue_id", "probabilities", "summary"):
            if out[key] is None:
                del out[key]
        return out


Predictor = Callable[[PredictionRequest, Any], PredictionAnswer]
"""``(request, graph) -> answer``: the predictor of one task."""

_PREDICTORS: dict[str, Predictor] = {}


def register(task: str, predictor: Predictor) -> None:
    """Install the predictor of ``task`` (called by the model services when they are wired in).

    Raises:
        UnknownTaskError: ``task`` is not one of :data:`TASKS` or :func:`graph_tasks`.
    """
    UnknownTaskError.check(task, (*TASKS, *graph_tasks()))
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


def predict_limited(request: PredictionRequest, graph: Any, limits: Limits) -> PredictionAnswer:
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


def predict(request: PredictionRequest, graph: Any) -> PredictionAnswer:
    """Predicted edges with scores for a pair, a stored dialogue or a new transcript.

    Raises:
        UnknownTaskError: The task is not one of :data:`TASKS` or :func:`graph_tasks`.
        ApiError: The request does not fit its task.
        ModelNotInstalledError: No model is installed for the task (503).
    """
    UnknownTaskError.check(request.task, (*TASKS, *graph_tasks()))
    if request.task == "pair" and request.texts is None:
        raise ApiError("a pair prediction needs two texts")
    if request.model is not None:
        raise ApiError("model: only the server's installed models can be used; leave it out")
    if request.task not in ("pair", "transcript") and not request.dialogue_id:
        raise ApiError(f"a {request.task} prediction needs dialogue_id")
    if request.task == "transcript" and not request.utterances:
        raise ApiError("a transcript prediction needs utterances")
    predictor = _PREDICTORS.get(request.task)
    if predictor is None:
        raise ModelNotInstalledError(f"no model is installed for {request.task} prediction on this server")
    return predictor(request, graph)
