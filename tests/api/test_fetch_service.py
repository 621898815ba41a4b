"""``argweb fetch`` puts corpora where ``argweb run`` looks for them, and says so when told otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.services.corpora import corpora_root
from api.services.fetch import fetch
from api.settings import Settings
from ontology.formats.registry import CORPORA, FETCHED_CORPORA, SAMPLES
from tests.conftest import shared_corpora

pytestmark = pytest.mark.corpora


class Lines:
    """A reporter that keeps its lines."""

    def __init__(self) -> None:
        self.logged: list[str] = []
        self.warned: list[str] = []

    def log(self, message: str) -> None:
        self.logged.append(message)

    def warn(self, message: str) -> None:
        self.warned.append(message)

    def progress(self, title: str, total: int):  # type: ignore[no-untyped-def]
        from ontology.progress import SILENT

        return SILENT.progress(title, total)


def test_the_main_job_loads_what_fetch_fetched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = shared_corpora()
    assert shared is not None, "the shared corpora (../shared/corpora or ARGWEB_CORPORA) are needed as the mirror"
    mirror = shared.resolve()
    work = tmp_path / "work"  # no ./corpora and no ../shared/corpora here
    work.mkdir()
    monkeypatch.chdir(work)
    settings = Settings(corpora=None, data_dir=work / ".argweb")
    assert corpora_root(settings) == SAMPLES

    lines = Lines()
    target, reports = fetch(settings, "stac", from_dir=mirror, reporter=lines)
    assert target == FETCHED_CORPORA and [name for name, _ in reports] == ["stac"]
    assert corpora_root(settings) == FETCHED_CORPORA and CORPORA["stac"].find(FETCHED_CORPORA)
    assert lines.warned == []

    # Somewhere else on request: the run would not see it, and fetch says how to make it.
    elsewhere = tmp_path / "elsewhere"
    fetch(settings, "stac", dest=elsewhere, from_dir=mirror, reporter=lines)
    assert lines.warned == [
        f"argweb run loads the corpora of {FETCHED_CORPORA}; ARGWEB_CORPORA={elsewhere} makes it load these"
    ]
