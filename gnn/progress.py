"""Where model work reports its progress: the callback given, or the one the caller set for a block of work.

Model code reports ``(stage, done, total)`` to a :data:`~gnn.trainer.Progress` callback and never
draws anything itself; the application turns the calls into progress bars or log lines. Code
whose signature still takes ``progress: bool`` (``True``: report) reports to the callback that
:func:`reporting_to` set around it, so that a caller can receive the progress of work it does
not call directly (the encoder inside a model's prediction).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from gnn.trainer import Progress

T = TypeVar("T")
R = TypeVar("R")
_CURRENT: ContextVar[Progress | None] = ContextVar("argweb_progress", default=None)


def resolve(progress: Progress | bool | None) -> Progress | None:
    """The callback to report to: ``progress`` itself when callable, the current one when ``True``, else None."""
    if callable(progress):
        return progress
    return _CURRENT.get() if progress else None


@contextmanager
def reporting_to(progress: Progress | None) -> Iterator[None]:
    """Within the block, ``progress=True`` of model code reports to ``progress`` (None: to nothing)."""
    token = _CURRENT.set(progress)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def each(stage: str, items: Sequence[T], fn: Callable[[T], R], progress: Progress | None) -> list[R]:
    """``fn`` of every item, in order; ``progress`` hears ``(stage, done, total)`` after each."""
    out: list[R] = []
    for item in items:
        out.append(fn(item))
        if progress:
            progress(stage, len(out), len(items))
    return out
