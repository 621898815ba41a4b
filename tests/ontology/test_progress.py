"""The one progress protocol: a stage's counts reach a staged callback, and the block's callback is found."""

from __future__ import annotations

from ontology.progress import Advance, Progress, advancing, each, reporting_to, resolve


def test_advancing_reports_the_running_count_of_one_stage() -> None:
    heard: list[tuple[str, int, int]] = []

    def progress(stage: str, done: int, total: int, /) -> None:
        heard.append((stage, done, total))

    advance: Advance = advancing(progress, "writing", 10)
    advance(4)
    advance(6)
    assert heard == [("writing", 4, 10), ("writing", 10, 10)]


def test_each_reports_after_every_item_and_keeps_the_order() -> None:
    heard: list[tuple[str, int, int]] = []
    assert each("square", [3, 1, 2], lambda x: x * x, lambda *call: heard.append(call)) == [9, 1, 4]
    assert heard == [("square", 1, 3), ("square", 2, 3), ("square", 3, 3)]


def test_true_means_the_callback_of_the_enclosing_block() -> None:
    def outer(stage: str, done: int, total: int, /) -> None:
        """A callback set around a block."""

    given: Progress = outer
    assert resolve(True) is None and resolve(False) is None
    with reporting_to(given):
        assert resolve(True) is given and resolve(False) is None and resolve(given) is given
    assert resolve(True) is None
