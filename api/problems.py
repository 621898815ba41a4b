"""Errors as ``application/problem+json`` (RFC 9457), from the one error mapping.

Every error response of the API is a problem document: argweb errors by their class, request
validation errors as 422, unknown routes as 404, anything unexpected as a bare 500 whose detail
says nothing about the code (the traceback goes to the server log only).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.errors import INSUFFICIENT_STORAGE, no_space, outcome
from ontology.errors import (
    ArgwebError,
    BusyError,
    CorpusIncompleteError,
    DatabaseUnavailableError,
    InvalidQueryError,
    LoaderError,
    ModelNotInstalledError,
    NotFoundError,
    QueryLimitError,
    QueryRefusedError,
    RequestTooLargeError,
    UnauthorizedError,
    UnknownProfileError,
    UnknownTaskError,
    WriteConflictError,
)

PROBLEM = "application/problem+json"
PROBLEM_BASE = "https://w3id.org/argweb/problems/"
log = logging.getLogger("argweb.api")
RETRY_AFTER = 5

# The problem type named in the response; the status comes from api.errors.outcome.
_KINDS: tuple[tuple[type[ArgwebError], str], ...] = (
    (NotFoundError, "not-found"),
    (UnauthorizedError, "unauthorized"),
    (QueryRefusedError, "query-refused"),
    (QueryLimitError, "query-limit"),
    (InvalidQueryError, "invalid-query"),
    (LoaderError, "invalid-input"),
    (UnknownTaskError, "unknown-task"),
    (UnknownProfileError, "unknown-profile"),
    (RequestTooLargeError, "too-large"),
    (DatabaseUnavailableError, "unavailable"),
    (ModelNotInstalledError, "no-model"),
    (BusyError, "busy"),
    (CorpusIncompleteError, "incomplete"),
    (WriteConflictError, "conflict"),
)
_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    406: "Not acceptable",
    409: "Conflict",
    413: "Request body too large",
    415: "Unsupported media type",
    422: "Unprocessable content",
    500: "Internal server error",
    503: "Service unavailable",
    507: "Insufficient storage",
}


def kind_of(exc: ArgwebError) -> str:
    """The problem type slug of an argweb error."""
    for cls, kind in _KINDS:
        if isinstance(exc, cls):
            return kind
    return "bad-request"


def problem(
    status: int,
    detail: str,
    kind: str | None = None,
    instance: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """A problem+json response (``headers``: extra headers, e.g. ``Allow`` of a 405)."""
    body = {
        "type": PROBLEM_BASE + (kind or str(status)),
        "title": _TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
    }
    if instance:
        body["instance"] = instance
    extra = dict(headers or {})
    if status == 401:
        extra["WWW-Authenticate"] = 'ApiKey header="X-API-Key"'
    if status in (409, 503):
        # A backend away or at its limit of concurrent work, or a write waiting for another run's:
        # worth asking again soon.
        extra.setdefault("Retry-After", str(RETRY_AFTER))
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=extra or None)


def unreadable_body(cause: BaseException | None) -> str | None:
    """What was wrong with a JSON body FastAPI could not parse (it says only "error parsing the body").

    Python's parser raises on input a client can send on purpose: nesting past its recursion limit,
    and integers past 4,300 digits. The answer says which, instead of a bare 400.
    """
    if isinstance(cause, RecursionError):
        return "the JSON body nests arrays or objects too deeply to read"
    if isinstance(cause, ValueError) and "integer string conversion" in str(cause):
        return "the JSON body holds a number of more than 4,300 digits, which is not read"
    if isinstance(cause, UnicodeDecodeError):
        return f"the body is not UTF-8 (byte {cause.start})"
    return None


def _full_disk(request: Request, exc: BaseException) -> JSONResponse:
    """507: the server's disk is full (logged with the path; the client is told no more than that)."""
    log.error("no space left on device on %s %s: %s", request.method, request.url.path, exc)
    return problem(
        INSUFFICIENT_STORAGE,
        "no space left on the server's disk; nothing was written. Retry once space has been freed",
        "insufficient-storage",
        request.url.path,
    )


_SAID_AS_IS = (DatabaseUnavailableError, BusyError, ModelNotInstalledError)


def install(app: FastAPI) -> None:
    """Register the exception handlers on ``app``."""

    @app.exception_handler(ArgwebError)
    async def argweb_error(request: Request, exc: ArgwebError) -> JSONResponse:
        result = outcome(exc)
        if result.http_status == INSUFFICIENT_STORAGE:
            return _full_disk(request, exc)
        # A backend away, every slot busy or no model installed is said as it is (the client can
        # act on it); any other server-side error is logged and answered without its internals.
        if result.http_status >= 500 and not isinstance(exc, _SAID_AS_IS):
            log.error("argweb error on %s %s: %s", request.method, request.url.path, exc)
            return problem(result.http_status, "internal error; see the server log", "internal", request.url.path)
        return problem(result.http_status, result.message, kind_of(exc), request.url.path)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for err in exc.errors()[:5]:
            where = ".".join(str(x) for x in err.get("loc", ()))
            parts.append(f"{where}: {err.get('msg')}")
        return problem(422, "; ".join(parts) or "invalid request", "invalid-request", request.url.path)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Starlette's 405 carries the Allow header the client needs; keep it.
        detail = unreadable_body(exc.__cause__) if exc.status_code == 400 else None
        return problem(exc.status_code, detail or str(exc.detail), None, request.url.path, exc.headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        if no_space(exc):
            return _full_disk(request, exc)
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return problem(500, "internal error; see the server log", "internal", request.url.path)
