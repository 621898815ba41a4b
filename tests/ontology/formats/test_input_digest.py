"""The input digest that lets the main job skip a corpus whose files and reader are unchanged."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ontology.errors import LoaderError
from ontology.formats import registry
from ontology.formats.registry import CORPORA, SAMPLES, folder_digest, reader_digest

pytestmark = pytest.mark.unit


def test_the_digest_follows_every_file_of_the_folder_and_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "corpora"
    shutil.copytree(SAMPLES, root)
    sciarg, stac = CORPORA["sciarg"], CORPORA["stac"]
    # The same files elsewhere differ: the corpus records where it was read from.
    assert sciarg.input_digest(root) != sciarg.input_digest(SAMPLES)
    assert folder_digest(root / sciarg.folder) == folder_digest(SAMPLES / sciarg.folder)
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


def test_links_loops_and_special_files_neither_crash_nor_hang(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    (folder / "DP").mkdir(parents=True)
    (folder / "DP" / "a.json").write_text("{}", encoding="utf-8")
    plain = folder_digest(folder)
    # A link back to an ancestor is walked once: it adds no file.
    (folder / "DP" / "loop").symlink_to(folder, target_is_directory=True)
    (folder / "again").symlink_to(folder, target_is_directory=True)
    assert folder_digest(folder) == plain
    # A dangling link counts by its target's name; a FIFO by its name, never opened.
    (folder / "README").symlink_to(tmp_path / "nowhere")
    dangling = folder_digest(folder)
    os.mkfifo(folder / "pipe")
    special = folder_digest(folder)
    assert len({plain, dangling, special}) == 3
    (folder / "README").unlink()
    (folder / "README").symlink_to(tmp_path / "elsewhere")
    assert folder_digest(folder) != special
    # A name that is not UTF-8.
    (folder / os.fsdecode(b"caf\xe9.json")).write_text("{}", encoding="utf-8")
    assert folder_digest(folder) != special


def test_an_unreadable_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "secret.json").write_text("{}", encoding="utf-8")

    def refuse(path: object, mode: str = "r") -> None:
        raise PermissionError(13, "Permission denied", str(path))

    # What a file without read permission gives a user other than root.
    monkeypatch.setattr(registry, "open", refuse, raising=False)
    with pytest.raises(LoaderError, match=r"secret\.json: cannot be read"):
        folder_digest(tmp_path)
