"""JSON bodies bounded by what they cost to parse and hold, not only by their bytes.

Ten mebibytes of JSON can be a 3.3-million-item list: parsed into Python objects it takes
hundreds of megabytes, parsing it holds the interpreter for a good part of a second, and every
later step (validation, the Cypher driver's encoding) pays per item again. So the bodies anonymous
clients send to ``POST /cypher`` and ``POST /amf/{task}`` are measured before anything parses them
for the route, in a worker thread:

1. A byte count that costs no parse: every array element and object member but the first of its
   container follows a comma, so commas plus opening brackets bound the items from above. A body
   over the limit by that bound is refused at once; a string holding many commas counts them too,
   which the refusal says.
2. Within that bound the body is parsed and walked: items (array elements and object members, in
   all), the longest string and the nesting depth, each against its limit.

A body over a limit is refused with 413 (problem+json naming the limit) before the route runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api import problems
from api.settings import Settings
from ontology.errors import ArgwebError, RequestTooLargeError


@dataclass(frozen=True)
class BodyLimits:
    """What one JSON body may hold.

    Attributes:
        items: Array elements and object members, counted over the whole body.
        string: Characters of the longest string (keys included).
        depth: Arrays and objects nested in one another.
    """

    items: int
    string: int
    depth: int


def body_limits(settings: Settings) -> BodyLimits:
    """The body limits of ``settings``."""
    return BodyLimits(settings.request_max_items, settings.request_max_string, settings.request_max_depth)


def _bracket_bound(body: bytes) -> int:
    """An upper bound on the items of ``body`` from byte counts alone (no parse)."""
    return body.count(b",") + body.count(b"[") + body.count(b"{")


def check_json(body: bytes, limits: BodyLimits, what: str = "the request body") -> Any:
    """The parsed JSON of ``body`` if it is within ``limits``.

    Args:
        body: The raw body (UTF-8 JSON).
        limits: What it may hold.
        what: How the refusal names the body.

    Returns:
        The parsed document, or ``None`` when ``body`` is not JSON (the route then says why).

    Raises:
        RequestTooLargeError: Over one of the limits (the message names which and the limit).
    """
    bound = _bracket_bound(body)
    if bound > limits.items:
        raise RequestTooLargeError(
            f"{what} holds more than {limits.items:,} items (JSON array elements and object members, "
            f"counted by their commas and brackets, strings included: {bound:,}); send a smaller request"
        )
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None
    items = 0
    stack: list[tuple[Any, int]] = [(document, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if len(value) > limits.string:
                raise RequestTooLargeError(
                    f"{what} holds a string of {len(value):,} characters; at most {limits.string:,} are accepted"
                )
            continue
        if not isinstance(value, list | dict):
            continue
        if depth >= limits.depth:
            raise RequestTooLargeError(f"{what} nests arrays or objects deeper than {limits.depth} levels")
        items += len(value)
        if isinstance(value, dict):
            stack.extend((key, depth + 1) for key in value)
            stack.extend((item, depth + 1) for item in value.values())
        else:
            stack.extend((item, depth + 1) for item in value)
    return document


class JsonBodyGuard:
    """ASGI middleware applying :func:`check_json` to the JSON bodies of some POST routes.

    The body is read whole (the :class:`api.app.BodyLimit` outside this one has bounded its bytes),
    checked in a worker thread so that the event loop keeps answering meanwhile, then handed on.
    A body over a limit is answered 413 problem+json; one that is not JSON goes on to the route,
    whose own parser says what is wrong with it.

    Args:
        app: The wrapped application.
        limits: What a body may hold.
        paths: Path prefixes whose POST bodies are checked (``/cypher``, ``/amf/``).
    """

    def __init__(self, app: ASGIApp, limits: BodyLimits, paths: tuple[str, ...]) -> None:
        self.app = app
        self.limits = limits
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or scope.get("method") != "POST" or not path.startswith(self.paths):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        media = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if media not in (b"application/json", b""):
            # A form upload (oAMF's way) is measured by the route once the file is taken out of it.
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client left before its body was complete
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        try:
            await anyio.to_thread.run_sync(check_json, body, self.limits)
        except ArgwebError as e:
            await problems.problem(413, str(e), "too-large", path)(scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app ``body`` whole first (it was read off the client already),
    then whatever the client sends next (a disconnect)."""
    whole: Message = {"type": "http.request", "body": body, "more_body": False}
    delivered = False

    async def replay() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return whole
        return await receive()

    return replay
