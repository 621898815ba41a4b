"""Strict JSON answers, JSON bodies measured before they are parsed, and /health's latest check."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from typing import Any

import pytest
from pydantic import BaseModel

from api.body_guard import BodyLimits, check_json
from api.json_response import FiniteJSONResponse, model_json
from api.liveness import WAIT_S, LatestCheck
from ontology.errors import RequestTooLargeError

LIMITS = BodyLimits(items=1000, string=100, depth=8)


def _strict(data: bytes) -> Any:
    def refuse(token: str) -> Any:
        raise AssertionError(f"not JSON: bare {token}")

    return json.loads(data, parse_constant=refuse)


def test_a_json_answer_writes_non_finite_numbers_as_strings() -> None:
    content = {"a": math.nan, "b": [math.inf, -math.inf, 1.5], "c": {"d": (math.nan,)}, "e": None}
    body = FiniteJSONResponse(content).body
    assert _strict(body) == {"a": "NaN", "b": ["Infinity", "-Infinity", 1.5], "c": {"d": ["NaN"]}, "e": None}
    assert _strict(FiniteJSONResponse({"x": 1.0, "t": "été"}).body) == {"x": 1.0, "t": "été"}


def test_a_response_model_writes_non_finite_numbers_as_strings() -> None:
    class Scored(BaseModel):
        score: float
        scores: list[float]
        missing: float | None = None

    body = model_json(Scored(score=math.nan, scores=[math.inf, 0.25]))
    assert _strict(body) == {"score": "NaN", "scores": ["Infinity", 0.25], "missing": None}


def test_a_body_within_the_limits_is_parsed() -> None:
    assert check_json(b'{"query": "RETURN 1", "parameters": {"l": [1, 2, "x,y"]}}', LIMITS) == {
        "query": "RETURN 1",
        "parameters": {"l": [1, 2, "x,y"]},
    }
    assert check_json(b"{not json", LIMITS) is None  # the route's own parser says what is wrong


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (json.dumps({"l": list(range(5000))}).encode(), "more than 1,000 items"),
        (json.dumps({"m": {str(i): i for i in range(600)}, "l": list(range(500))}).encode(), "more than 1,000 items"),
        (json.dumps({"s": "x" * 101}).encode(), "a string of 101 characters"),
        (json.dumps({"x" * 101: 1}).encode(), "a string of 101 characters"),
        (b'{"a": ' + b"[" * 9 + b"]" * 9 + b"}", "deeper than 8 levels"),
    ],
    ids=["list", "members", "string", "key", "depth"],
)
def test_a_body_over_a_limit_is_refused_naming_it(body: bytes, named: str) -> None:
    with pytest.raises(RequestTooLargeError, match=named):
        check_json(body, LIMITS, "the body")


def test_health_waits_for_the_first_check_then_answers_the_last_one_at_once() -> None:
    calls = []
    release = threading.Event()

    def check() -> int:
        calls.append(time.monotonic())
        if len(calls) > 1:
            release.wait(10)
        return len(calls)

    latest = LatestCheck(check)

    async def scenario() -> list[tuple[int, float, float]]:
        answers = []
        for _ in range(3):
            started = time.monotonic()
            result, age = await latest.answer()
            answers.append((result, age, time.monotonic() - started))
        release.set()
        await asyncio.sleep(0.2)
        result, age = await latest.answer()
        answers.append((result, age, 0.0))
        return answers

    answers = asyncio.run(scenario())
    assert answers[0][:2] == (1, 0.0)  # the first check, waited for
    for result, age, took in answers[1:3]:  # the second check hangs: the first one's result, aged
        assert result == 1 and age > 0 and took < WAIT_S + 0.5
    assert len(calls) == 3 and answers[3][0] == 3  # one check at a time; the next one fresh


def test_health_answers_a_backend_gone_since_the_last_check_as_gone() -> None:
    """A last success is not answered for a backend whose port now refuses (the probe raises)."""
    release = threading.Event()
    calls = []

    def check() -> str:
        calls.append(1)
        if len(calls) > 1:
            release.wait(10)
        return "ok"

    gone = threading.Event()

    def probe() -> None:
        if gone.is_set():
            raise RequestTooLargeError("stands for any failure of the probe")

    latest = LatestCheck(check, probe)

    async def scenario() -> None:
        assert await latest.answer() == ("ok", 0.0)
        result, age = await latest.answer()  # the second check hangs; the probe passes
        assert result == "ok" and age > 0
        gone.set()
        with pytest.raises(RequestTooLargeError):
            await latest.answer()
        release.set()

    asyncio.run(scenario())


def test_health_never_answers_a_failure_stale() -> None:
    """After a failed check (Neo4j away), the running check is waited for: a backend back is seen back."""
    calls = []

    def check() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise RequestTooLargeError("stands for Neo4j away")
        time.sleep(WAIT_S + 0.3)
        return "back"

    latest = LatestCheck(check)

    async def scenario() -> None:
        with pytest.raises(RequestTooLargeError):
            await latest.answer()
        assert await latest.answer() == ("back", 0.0)

    asyncio.run(scenario())
