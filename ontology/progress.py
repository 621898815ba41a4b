"""The one progress protocol of argweb: how long-running work says how far it got.

Work reports to a callback it is given and never draws anything itself; the application turns the
calls into progress bars or log lines (``api.progress.ConsoleReporter``). It lives here because
``graphstore`` and ``gnn`` may both import ``ontology`` and nothing else of each other.

One protocol, :class:`Progress`: ``progress(stage, done, total)``, ``done`` of ``total`` steps of
the named stage (``("train", 3, 20)``, ``("encoding", 512, 2048)``). Work of one stage that only
counts what it did (a store writing batches, features computed per utterance) takes an
:class:`Advance`, ``advance(n)``: ``n`` more steps done. It is the same protocol seen from inside
one stage: :func:`advancing` turns a :class:`Progress` into the :class:`Advance` of one of its
stages, and an application's progress unit hands out an :class:`Advance` directly.

Code whose signature takes ``progress: bool`` (``True``: report) reports to the callback that
:func:`reporting_to` set around it, so that a caller hears the progress of work it does not call
directly (the encoder inside a model's prediction).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Progress(Protocol):
    """The progress callback: ``(stage, done, total)`` after each step of a stage."""

    def __call__(self, stage: str, done: int, total: int, /) -> None:
        """``done`` of ``total`` steps of ``stage`` are done."""


class Advance(Protocol):
    """The progress callback of work of one stage: ``n`` more steps done."""

    def __call__(self, n: int, /) -> None:
        """``n`` more steps are done."""


Say = Callable[[str], None]
"""A callback that receives one line of plain text about work in progress (a bulk load's phases)."""


def advancing(progress: Progress, stage: str, total: int) -> Advance:
    """The :class:`Advance` of ``stage`` (of ``total`` steps): each ``advance(n)`` reports the running count."""
    done = 0

    def advance(n: int, /) -> None:
        nonlocal done
        done += n
        progress(stage, done, total)

    return advance


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
