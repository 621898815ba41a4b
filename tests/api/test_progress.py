"""The command line's reporter: bars on a terminal, a line every few seconds elsewhere, every line in
its log file; and the bridge from model work's ``(stage, done, total)`` callback to its units."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from rich.console import Console

from api.progress import ConsoleReporter
from ontology.progress import Advance, resolve, stages


def _console(terminal: bool) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=terminal, width=120, color_system=None), out


def test_off_a_terminal_progress_is_a_line_every_interval_and_a_closing_line(tmp_path: Path) -> None:
    console, out = _console(terminal=False)
    reporter = ConsoleReporter(console, log_file=tmp_path / "run.log", interval=0.0)
    with reporter.progress("export", 4) as advance:
        advance(1)
        advance(2)
    reporter.close()
    lines = out.getvalue().splitlines()
    assert [line.rsplit(",", 1)[0] for line in lines] == ["export: 1/4 (25%)", "export: 3/4 (75%)"]
    assert "\r" not in out.getvalue()
    logged = (tmp_path / "run.log").read_text(encoding="utf-8").splitlines()
    # The log also has the closing line (the same as the last progress line here, with its time).
    assert [line.split(" ", 1)[1].rsplit(",", 1)[0] for line in logged] == [
        "export: 1/4 (25%)",
        "export: 3/4 (75%)",
        "export: 3/4 (75%)",
    ]


def test_a_closing_line_that_repeats_the_last_progress_line_is_not_printed_twice() -> None:
    console, out = _console(terminal=False)
    with ConsoleReporter(console, interval=0.0).progress("sciarg: discourses predicted", 32) as advance:
        advance(32)
    assert [line.rsplit(",", 1)[0] for line in out.getvalue().splitlines()] == [
        "sciarg: discourses predicted: 32/32 (100%)"
    ]


def test_a_short_unit_prints_nothing_off_a_terminal() -> None:
    console, out = _console(terminal=False)
    with ConsoleReporter(console, interval=60.0).progress("load", 10) as advance:
        advance(10)
    assert out.getvalue() == ""


def test_on_a_terminal_units_share_one_transient_display_and_print_no_lines() -> None:
    console, out = _console(terminal=True)
    reporter = ConsoleReporter(console, interval=0.0)
    with reporter.progress("train", 2) as outer:
        with reporter.progress("encoding", 3) as inner:  # nested: a second live display would fail
            inner(3)
        outer(2)
    assert reporter._bars is None  # stopped with the last unit
    assert "train: 2/2" not in out.getvalue()


def test_details_go_to_the_log_only_and_warnings_everywhere(tmp_path: Path) -> None:
    console, out = _console(terminal=False)
    reporter = ConsoleReporter(console, details=False, log_file=tmp_path / "run.log")
    reporter.log("molweni: 171 nodes written")
    reporter.warn("stac: prediction FAILED")
    reporter.close()
    assert out.getvalue() == "stac: prediction FAILED\n"
    logged = (tmp_path / "run.log").read_text(encoding="utf-8")
    assert "molweni: 171 nodes written" in logged and "warning: stac: prediction FAILED" in logged


class Units:
    """A reporter that records when its units open, advance and close."""

    def __init__(self) -> None:
        self.events: list[tuple[str, ...]] = []

    def log(self, message: str) -> None:
        self.events.append(("log", message))

    def warn(self, message: str) -> None:
        self.events.append(("warn", message))

    @contextmanager
    def progress(self, title: str, total: int) -> Iterator[Advance]:
        self.events.append(("open", title, str(total)))
        yield lambda n: self.events.append(("advance", title, str(n)))
        self.events.append(("close", title))


def test_stages_open_a_unit_per_stage_and_close_it_at_its_total() -> None:
    units = Units()
    with stages(units) as progress:
        progress("train", 1, 3)
        progress("encode", 5, 10)  # interleaved: the encoder inside a training stage
        progress("train", 2, 3)
        progress("encode", 10, 10)
        progress("train", 3, 3)
        progress("tune", 1, 4)  # left open: closed with the block
    assert units.events == [
        ("open", "train", "3"),
        ("advance", "train", "1"),
        ("open", "encode", "10"),
        ("advance", "encode", "5"),
        ("advance", "train", "1"),
        ("advance", "encode", "5"),
        ("close", "encode"),
        ("advance", "train", "1"),
        ("close", "train"),
        ("open", "tune", "4"),
        ("advance", "tune", "1"),
        ("close", "tune"),
    ]


def test_model_code_that_takes_progress_true_reports_to_the_stages_of_its_caller() -> None:
    assert resolve(True) is None and resolve(False) is None
    units = Units()
    with stages(units) as progress:
        assert resolve(True) is progress
        assert resolve(None) is None
    assert resolve(True) is None


def test_the_main_jobs_console_lines_come_at_growing_gaps_and_the_log_every_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1000.0]
    monkeypatch.setattr("api.progress.time.monotonic", lambda: clock[0])
    console, out = _console(terminal=False)
    reporter = ConsoleReporter(console, log_file=tmp_path / "run.log", interval=10.0, slowdown=2.0, max_gap=40.0)
    with reporter.progress("export", 200) as advance:
        for _ in range(200):
            clock[0] += 1.0
            advance(1)
    reporter.close()
    # Console: after 10 s, then gaps of 20, 40 and (capped) 40 s; and the closing line.
    assert [line.split(", ")[-1] for line in out.getvalue().splitlines()] == [
        "10s",
        "30s",
        "70s",
        "110s",
        "150s",
        "190s",
        "200s",
    ]
    logged = (tmp_path / "run.log").read_text(encoding="utf-8").splitlines()
    assert [line.split(", ")[-1] for line in logged] == [f"{k}s" for k in range(10, 201, 10)] + ["200s"]


def test_what_the_files_left_incomplete_is_one_warning_and_detail_lines_for_the_log(tmp_path: Path) -> None:
    from ontology.formats.common import MAX_NOTES, report_notes
    from ontology.records import CorpusBundle, CorpusRecord

    notes = [f"map.json: RA node {i} has no conclusion (no edge out of it); stored as it is" for i in range(25)]
    bundle = CorpusBundle(CorpusRecord(id="qt30", corpus="qt30", name="QT30"), [], notes=notes)
    console, out = _console(terminal=False)
    reporter = ConsoleReporter(console, details=False, log_file=tmp_path / "run.log")
    assert report_notes(bundle, reporter) is bundle
    reporter.close()
    # The main job's console: one line for the corpus, whatever the count.
    assert out.getvalue().splitlines() == [
        "qt30: 25 relation(s) incomplete in the files (no premise or no conclusion), stored as they are"
    ]
    logged = (tmp_path / "run.log").read_text(encoding="utf-8")
    assert all(f"partial: {note}" in logged for note in notes[:MAX_NOTES])
    assert f"partial: ... and {25 - MAX_NOTES} more note(s)" in logged
