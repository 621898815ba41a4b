"""argweb's models as oAMF modules: ``POST /amf/{task}`` takes xAIF and returns it with predictions added."""

from __future__ import annotations

from email.parser import BytesParser
from email.policy import HTTP
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse

from api.body_guard import BodyLimits, body_limits, check_json
from api.json_response import FiniteJSONResponse
from api.routes import deps
from api.routes.schemas import Problem
from api.services import amf as svc
from api.services.predict import Limits
from ontology.errors import ApiError
from ontology.formats.amf import XaifDocument, parse_document

router = APIRouter(tags=["oAMF"])
Task = Annotated[Literal["turns", "segments", "ari", "discourse"], Path(description="the module")]
_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": Problem, "description": "Not an xAIF document, or beyond the prediction limits"},
    413: {"model": Problem, "description": "Larger than the body limits (bytes, items, string length, nesting)"},
    415: {"model": Problem},
    503: {"model": Problem, "description": "As many model requests running as allowed; retry"},
}
_XAIF = {"type": "object", "description": "an xAIF document: AIF, text, dialog, ova"}


@router.get("/amf/{task}", response_class=PlainTextResponse, responses={200: {"content": {"text/markdown": {}}}})
def module_readme(task: Task) -> PlainTextResponse:
    """The module's README (Markdown): what it reads, what it adds, the models behind it."""
    return PlainTextResponse(svc.readme(task), media_type="text/markdown; charset=utf-8")


@router.get(
    "/amf/{task}/metadata.yaml", response_class=PlainTextResponse, responses={200: {"content": {"text/yaml": {}}}}
)
def module_metadata(task: Task) -> PlainTextResponse:
    """The module's oAMF ``metadata.yaml`` (name, licence, AMF tag, domain, training data, requires, outputs)."""
    return PlainTextResponse(svc.metadata(task), media_type="text/yaml; charset=utf-8")


def _document(content_type: str, body: bytes, limits: BodyLimits) -> XaifDocument:
    """The xAIF document of a JSON body, or of the ``file`` field of a form upload (how oAMF calls modules).

    Runs in a worker thread: parsing a large body must not hold the event loop. A JSON body was
    measured against ``limits`` on its way in (:class:`api.body_guard.JsonBodyGuard`); an uploaded
    file is measured here, before it is parsed for the module.
    """
    media = content_type.split(";")[0].strip().lower()
    if media in ("application/json", ""):
        return parse_document(body)
    if media == "multipart/form-data":
        head = b"Content-Type: " + content_type.encode("latin-1", "replace") + b"\r\n\r\n"
        message = BytesParser(policy=HTTP).parsebytes(head + body)
        for part in message.iter_parts() if message.is_multipart() else ():
            if part.get_param("name", header="content-disposition") == "file":
                payload = part.get_payload(decode=True)
                data = payload if isinstance(payload, bytes) else b""
                check_json(data, limits, "the uploaded file")
                return parse_document(data, "uploaded file")
        raise ApiError("a form upload needs the xAIF document in the field 'file'")
    from starlette.exceptions import HTTPException

    raise HTTPException(415, "send the xAIF document as application/json or as the field 'file' of a form")


@router.post(
    "/amf/{task}",
    responses=_ERRORS,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": _XAIF},
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {"file": {"type": "string", "format": "binary"}},
                        "required": ["file"],
                    }
                },
            },
        }
    },
)
async def run_module(task: Task, request: Request) -> FiniteJSONResponse:
    """Run a module on an xAIF document: ``turns`` / ``segments`` add locutions from the text and
    propositions where absent, ``ari`` RA/CA/MA between the propositions, ``discourse`` TA links
    between the locutions. Every input node and edge is returned as it came; what argweb added is
    listed, with model, version and score, under the top-level ``argweb`` key. Nothing is stored."""
    cfg = deps.settings(request)
    raw = await request.body()
    doc = await run_in_threadpool(_document, request.headers.get("content-type", ""), raw, body_limits(cfg))
    limits = Limits(cfg.predict_max_utterances, cfg.predict_max_chars, cfg.predict_max_running)
    return FiniteJSONResponse(await run_in_threadpool(svc.run_task, task, doc, cfg, limits))
