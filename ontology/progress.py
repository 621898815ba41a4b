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

A long-running service tells its caller what it does through a :class:`Reporter` (log lines,
warnings, progress units): the CLI passes ``api.progress.ConsoleReporter``, the HTTP API and tests
:data:`SILENT`; :func:`stages` shows a :class:`Progress` as one reporter unit per stage.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
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


# -- how a long-running service tells its caller what it does ------------------------------------


class Reporter(Protocol):
    """Receiver of a service's log lines and progress."""

    def log(self, message: str) -> None:
        """One line of information for the user (plain text)."""

    def warn(self, message: str) -> None:
        """One line saying something was skipped or looks wrong (plain text)."""

    def progress(self, title: str, total: int) -> AbstractContextManager[Advance]:
        """A unit of work of ``total`` steps; the context yields the function to advance it."""
        ...


class Silent:
    """A reporter that drops everything."""

    def log(self, message: str) -> None:
        """Ignore the line."""

    def warn(self, message: str) -> None:
        """Ignore the warning."""

    @contextmanager
    def progress(self, title: str, total: int) -> Iterator[Advance]:
        """Ignore the progress."""
        yield lambda n: None


SILENT = Silent()


@contextmanager
def stages(reporter: Reporter) -> Iterator[Progress]:
    """The :class:`~ontology.progress.Progress` callback of model work, shown as one unit of ``reporter`` per stage.

    A stage's unit opens at its first call and closes when it reaches its total (or when the
    block ends); stages may interleave (the encoder's inside a training stage). Within the block,
    model code that only takes ``progress=True`` reports here too (:func:`ontology.progress.reporting_to`).
    """
    units: dict[str, tuple[AbstractContextManager[Advance], Advance, list[int]]] = {}

    def close(stage: str) -> None:
        unit, _, _ = units.pop(stage)
        unit.__exit__(None, None, None)

    def progress(stage: str, done: int, total: int) -> None:
        if stage in units and units[stage][2][1] != total:
            close(stage)
        if stage not in units:
            unit = reporter.progress(stage, total)
            units[stage] = (unit, unit.__enter__(), [0, total])
        _, advance, state = units[stage]
        advance(done - state[0])
        state[0] = done
        if done >= total:
            close(stage)

    try:
        with reporting_to(progress):
            yield progress
    finally:
        for stage in list(units):
            close(stage)
