"""``POST /predict``: relation predictions for a pair of texts, a stored dialogue or a new transcript."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field

from api.routes import deps
from api.routes.schemas import Problem
from api.services import predict as svc


class Utterance(BaseModel):
    """One utterance of a new transcript."""

    speaker: str = Field(max_length=200)
    text: str = Field(max_length=20_000)


class PredictBody(BaseModel):
    """A prediction request: ``texts`` for ``pair``, ``dialogue_id`` for ``dialogue``, ``utterances`` for
    ``transcript``."""

    task: str = Field(
        max_length=100,
        description="pair, dialogue, transcript, or a registered task that predicts over stored dialogues "
        "(discourse, relations, paraphrase ...; argweb model list)",
    )
    texts: tuple[Annotated[str, Field(max_length=20_000)], Annotated[str, Field(max_length=20_000)]] | None = Field(
        default=None, description="pair: the first text and the reply to it"
    )
    dialogue_id: str | None = Field(default=None, max_length=500, description="dialogue: graph id or local id")
    utterances: list[Utterance] = Field(
        default_factory=list, max_length=2000, description="transcript: turns in order, each split into sentences"
    )
    corpus: str | None = Field(
        default=None,
        max_length=100,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        description="transcript: corpus of the new dialogue (default mined; never a gold corpus)",
    )
    name: str | None = Field(default=None, max_length=100, description="transcript: name of the new dialogue")
    k: int = Field(default=3, ge=1, le=20, description="transcript: nearest units looked up per proposition")
    options: dict[str, Annotated[str, Field(max_length=100)]] = Field(
        default_factory=dict,
        max_length=10,
        description="a registered task: its decoding options (relations: objective)",
    )
    model: str | None = Field(default=None, max_length=200)
    write: bool = Field(default=False, description="store the predictions (needs X-API-Key); not for pair")


class PredictedEdge(BaseModel):
    """A predicted relation: never gold, always with its model and score."""

    source: str = Field(description="graph id of the source unit (pair: text:0 or text:1)")
    target: str
    label: str = Field(description="support, attack, rephrase, none or a discourse sense")
    score: float
    kind: str = Field(description="discourse (between locutions) or argument (between propositions)")
    model: str
    model_version: str
    run_id: str | None = None
    source_text: str | None = None
    target_text: str | None = None


class ModelRun(BaseModel):
    """A prediction run (its id is stable per dialogue and model version; written only with ``write``)."""

    run_id: str
    model: str
    model_version: str
    task: str


class Prediction(BaseModel):
    """Predicted edges and the models that produced them."""

    task: str
    model: str = Field(description="the relation model")
    model_version: str
    run_id: str | None = Field(default=None, description="the relations run, when written")
    runs: list[ModelRun] = Field(default_factory=list)
    written: bool = False
    dialogue_id: str | None = None
    edges: list[PredictedEdge]
    probabilities: dict[str, float] | None = Field(default=None, description="pair: probability per label")
    summary: dict[str, Any] | None = Field(
        default=None,
        description="dialogue, transcript: utterances, links, strongest support/attack, nearest units elsewhere",
    )


router = APIRouter(tags=["predict"])


@router.post(
    "/predict",
    response_model=Prediction,
    responses={
        400: {"model": Problem},
        401: {"model": Problem},
        404: {"model": Problem},
        422: {"model": Problem},
        503: {"model": Problem},
    },
)
async def predict(body: PredictBody, request: Request) -> Any:
    """Predict relations with the shipped models: ``pair`` (QT30 relation model: support, attack, rephrase
    or none between two texts), ``dialogue`` (discourse parser + relation model over a stored dialogue) or
    ``transcript`` (live mining of new utterances). ``write=true`` stores a dialogue's or transcript's
    predictions as prediction runs (API key); 503 while the database is away or while
    ``predict_max_running`` requests are being computed. A transcript is limited in utterances and
    characters (``predict_max_utterances``, ``predict_max_chars``) before any model runs."""
    if body.write:
        deps.require_key(request)
    req = svc.PredictionRequest(
        task=body.task,
        texts=body.texts,
        dialogue_id=body.dialogue_id,
        utterances=tuple(u.model_dump() for u in body.utterances),
        model=body.model,
        write=body.write,
        options=(
            {"corpus": body.corpus, "name": body.name, "k": body.k} if body.task in svc.TASKS else dict(body.options)
        ),
    )
    cfg = deps.settings(request)
    limits = svc.Limits(cfg.predict_max_utterances, cfg.predict_max_chars, cfg.predict_max_running)
    answer = await run_in_threadpool(svc.predict_limited, req, request.app.state.graph, limits)
    return answer.as_dict()
