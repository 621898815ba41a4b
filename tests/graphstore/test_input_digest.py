"""The input digest that lets the main job skip a corpus whose files and reader are unchanged."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from graphstore.loaders.registry import CORPORA, SAMPLES, folder_digest, reader_digest

pytestmark = pytest.mark.unit


def test_the_digest_follows_every_file_of_the_folder_and_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "corpora"
    shutil.copytree(SAMPLES, root)
    sciarg, stac = CORPORA["sciarg"], CORPORA["stac"]
    # A copy elsewhere reads the same: names are taken relative to the corpus folder.
    assert sciarg.input_digest(root) == sciarg.input_digest(SAMPLES)
    before = {name: spec.input_digest(root) for name, spec in CORPORA.items() if spec.find(root)}
    # A companion file the pattern does not match (Sci-Arg's text beside its .ann) counts.
    text = next((root / sciarg.folder).rglob("*.txt"))
    text.write_text(text.read_text(encoding="utf-8") + " ", encoding="utf-8")
    assert sciarg.input_digest(root) != before["sciarg"]
    # A renamed file counts (ids may come from file names); other corpora are not affected.
    first = stac.find(root)[0]
    first.rename(first.with_name("renamed-" + first.name))
    assert stac.input_digest(root) != before["stac"]
    after = {name: spec.input_digest(root) for name, spec in CORPORA.items() if spec.find(root)}
    assert {n for n in before if before[n] != after[n]} == {"sciarg", "stac"}


def test_the_folder_digest_is_of_names_and_contents(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.json").write_text("{}", encoding="utf-8")
    one = folder_digest(tmp_path)
    assert folder_digest(tmp_path) == one
    (tmp_path / "a" / "x.json").write_text("{} ", encoding="utf-8")
    assert folder_digest(tmp_path) != one
    assert len(reader_digest()) == 64 and reader_digest() == reader_digest()
