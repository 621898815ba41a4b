"""How a long-running service tells its caller what it does (log lines and progress counts).

The CLI passes a reporter that prints and draws progress bars; the HTTP API and tests pass
:data:`SILENT` (or collect the lines).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

Advance = Callable[[int], None]


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
