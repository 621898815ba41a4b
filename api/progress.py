"""The reporter of the command line and notebooks: log lines, warnings and progress, legible anywhere.

One mechanism for progress (rich). On a terminal every unit of work is a transient bar of one
shared live display (bars nest: a stage of model work inside a service's step). Anywhere else (a
pipe, CI, a log file) a unit prints one line every ``interval`` seconds (or at growing gaps, for
the main job) and a closing line when it printed any, so that a log never fills with the
carriage-return frames of redrawn bars. A log file, when given, receives every line with its time,
and a progress line of each unit every ``interval`` seconds.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from ontology.progress import Advance

# Seconds between two progress lines of one unit of work when no terminal shows bars.
LINE_INTERVAL = 10.0


@dataclass
class _Unit:
    """One unit of work while it runs, and when its next progress lines are due."""

    title: str
    total: int
    started: float
    done: int = 0
    console_due: float = 0.0
    console_gap: float = 0.0
    file_due: float = 0.0
    lines: int = 0
    last_console_done: int = -1

    def line(self) -> str:
        share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        return f"{self.title}: {self.done:,}/{self.total:,}{share}, {time.monotonic() - self.started:.0f}s"


class ConsoleReporter:
    """Service reporter writing to a rich console (stderr by default) and optionally to a log file.

    Args:
        console: Where lines and bars go.
        details: Whether :meth:`log` lines reach the console (the main job keeps them in its log
            file and shows one line per step instead); warnings always do.
        log_file: A file that receives every line, with its time (appended to).
        interval: Seconds before the first progress line of a unit off a terminal, and between two
            lines of the log file.
        slowdown: Factor by which the gap between two console progress lines grows off a terminal
            (1: a line every ``interval``; 2: lines after 10, 30, 70 ... seconds, so that an hour of
            work is a dozen lines), up to ``max_gap`` seconds.
        max_gap: The longest gap between two console progress lines.
    """

    def __init__(
        self,
        console: Console | None = None,
        *,
        details: bool = True,
        log_file: Path | None = None,
        interval: float = LINE_INTERVAL,
        slowdown: float = 1.0,
        max_gap: float = 300.0,
    ) -> None:
        self.console = console or Console(stderr=True)
        self.details = details
        self.log_file = log_file
        self.interval = interval
        self.slowdown = slowdown
        self.max_gap = max_gap
        self._file: TextIO | None = None
        self._bars: Progress | None = None
        self._open = 0

    # -- lines ---------------------------------------------------------------------------------
    def _write(self, message: str) -> None:
        if self.log_file is None:
            return
        if self._file is None:
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.log_file.open("a", encoding="utf-8")
        self._file.write(f"{time.strftime('%H:%M:%S')} {message}\n")
        self._file.flush()

    def log(self, message: str) -> None:
        """One line of information (to the console only when ``details``)."""
        self._write(message)
        if self.details:
            self.console.print(escape(message), highlight=False, soft_wrap=True)

    def warn(self, message: str) -> None:
        """One line in yellow, always on the console."""
        self._write(f"warning: {message}")
        self.console.print(f"[yellow]{escape(message)}[/]", highlight=False, soft_wrap=True)

    def close(self) -> None:
        """Close the log file (a later line opens it again)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    # -- progress ------------------------------------------------------------------------------
    @contextmanager
    def progress(self, title: str, total: int) -> Iterator[Advance]:
        """A unit of ``total`` steps; the context yields the function that advances it by ``n``."""
        unit = _Unit(title, total, started=time.monotonic())
        unit.console_gap = self.interval
        unit.console_due = unit.file_due = unit.started + self.interval
        task = self._start_bar(title, total)

        def advance(n: int) -> None:
            unit.done += n
            if task is not None and self._bars is not None:
                self._bars.advance(task, n)
            now = time.monotonic()
            if self.log_file is not None and now >= unit.file_due:
                unit.file_due = now + self.interval
                unit.lines += 1
                self._write(unit.line())
            if task is None and now >= unit.console_due:
                unit.console_gap = min(unit.console_gap * self.slowdown, self.max_gap)
                unit.console_due = now + unit.console_gap
                unit.lines += 1
                unit.last_console_done = unit.done
                self.console.print(escape(unit.line()), highlight=False, soft_wrap=True)

        try:
            yield advance
        finally:
            if task is not None:
                self._stop_bar(task)
            if unit.lines:
                # A unit that printed progress lines says that it ended.
                self._write(unit.line())
                # Not twice the same count (a unit whose last progress line already said 100%),
                # even when the seconds moved on in between.
                if task is None and unit.done != unit.last_console_done:
                    self.console.print(escape(unit.line()), highlight=False, soft_wrap=True)

    def _start_bar(self, title: str, total: int) -> TaskID | None:
        """A bar on the shared live display (started by the first open unit), or None off a terminal."""
        if not self.console.is_terminal:
            return None
        if self._bars is None:
            self._bars = Progress(
                TextColumn("[bold]{task.description}[/]"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._bars.start()
        self._open += 1
        return self._bars.add_task(escape(title), total=total)

    def _stop_bar(self, task: TaskID) -> None:
        if self._bars is None:
            return
        self._bars.remove_task(task)
        self._open -= 1
        if self._open == 0:
            self._bars.stop()
            self._bars = None
