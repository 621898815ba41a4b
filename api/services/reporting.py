"""How a long-running service tells its caller what it does (log lines and progress counts).

The CLI passes :class:`api.progress.ConsoleReporter` (bars on a terminal, a line every few seconds
elsewhere); the HTTP API and tests pass :data:`SILENT` (or collect the lines). A reporter's unit
hands out an :class:`~ontology.progress.Advance`; model work reports to a
:class:`~ontology.progress.Progress`, which :func:`stages` turns into the reporter's units.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

from ontology.progress import Advance, Progress, reporting_to


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
