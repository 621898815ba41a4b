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
    """A prediction request."""

    task: Annotated[str, Field(pattern="^(pair|dialogue|transcript)$")]
    texts: tuple[str, str] | None = None
    dialogue_id: str | None = Field(default=None, max_length=500)
    utterances: list[Utterance] = Field(default_factory=list, max_length=2000)
    model: str | None = Field(default=None, max_length=200)
    write: bool = Field(default=False, description="store the predictions (needs X-API-Key)")


class PredictedEdge(BaseModel):
    """A predicted relation: never gold, always with its model and score."""

    source: str
    target: str
    label: str
    score: float


class Prediction(BaseModel):
    """Predicted edges and the model that produced them."""

    model: str
    model_version: str
    run_id: str | None = None
    edges: list[PredictedEdge]


router = APIRouter(tags=["predict"])


@router.post(
    "/predict",
    response_model=Prediction,
    responses={400: {"model": Problem}, 401: {"model": Problem}, 503: {"model": Problem}},
)
async def predict(body: PredictBody, request: Request) -> Any:
    """Predict relations (support, attack, rephrase, discourse senses) with scores; ``write=true``
    stores them as a prediction run (API key). 503 while no model is installed on the server."""
    if body.write:
        deps.require_key(request)
    req = svc.PredictionRequest(
        task=body.task,
        texts=body.texts,
        dialogue_id=body.dialogue_id,
        utterances=tuple(u.model_dump() for u in body.utterances),
        model=body.model,
        write=body.write,
    )
    return await run_in_threadpool(svc.predict, req, getattr(request.app.state, "driver", None))
