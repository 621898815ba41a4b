"""JSON responses that are valid JSON: non-finite numbers are answered as strings.

JSON has no NaN or infinity, yet a Cypher query (``0.0/0.0``), a model score or a statistic can
produce one. Python's encoder would write the bare tokens ``NaN`` and ``Infinity``, which strict
parsers reject, and Starlette's refuses them with a 500. Every JSON answer of the API is rendered
by :class:`FiniteJSONResponse` instead: such a number becomes the string ``"NaN"``,
``"Infinity"`` or ``"-Infinity"`` (docs/api.md).
"""

from __future__ import annotations

import json
import math
from typing import Any

import pydantic_core
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from graphstore.readonly import non_finite


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float (at any depth) replaced by its string name."""
    if isinstance(value, float):
        return value if math.isfinite(value) else non_finite(value)
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


def dumps(content: Any) -> bytes:
    """``content`` as compact UTF-8 JSON with non-finite numbers as strings.

    The common case (nothing to replace) costs one encoding: the walk runs only after the strict
    encoder refused the content.
    """
    try:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:
        text = json.dumps(finite(content), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.encode("utf-8")


def model_json(model: BaseModel) -> bytes:
    """A response model as JSON with non-finite numbers as strings (pydantic alone writes ``null``)."""
    return pydantic_core.to_json(model.model_dump(), inf_nan_mode="strings")


class FiniteJSONResponse(JSONResponse):
    """The API's JSON response class (its default): strict JSON, non-finite numbers as strings."""

    def render(self, content: Any) -> bytes:
        """Encode ``content`` (see :func:`dumps`)."""
        return dumps(content)
