"""Which loader reads which corpus, and where its files sit in a corpora directory.

A corpora directory is laid out like ``shared/corpora``: one folder per corpus
(``molweni/DP/*.json``, ``stac/*.json``, ``dialam-2024/**/*.json``, ...).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ontology.errors import LoaderError
from ontology.formats.aif import load_aif
from ontology.formats.arguebuf_maps import ARGUEBUF_FORMATS, load_arguebuf
from ontology.formats.common import expand, find_files, unique_files, walk_once
from ontology.formats.contextdep import load_contextdep
from ontology.formats.dialogue_json import load_dialogue_json
from ontology.formats.marg import load_marg
from ontology.formats.sciarg import load_sciarg
from ontology.formats.xaif import load_xaif
from ontology.records import CorpusBundle

SAMPLES: Path = Path(__file__).resolve().parents[2] / "graphstore" / "samples"
"""Small real excerpts of every corpus, laid out like a corpora directory, shipped in the package:
what the main job loads when no corpora directory is found, and what the tests load. They are
package data of ``graphstore`` (found by path, never imported), so reading them needs no Neo4j."""


@cache
def reader_digest() -> str:
    """Digest of the code that decides what a load writes: the ontology (records and the format
    readers of ``ontology.formats``) and the graphstore package (writers, Cypher).

    Part of every corpus' input digest, so that changed reading or writing code loads the files
    again (computed once per process).
    """
    h = hashlib.sha256()
    base = Path(__file__).resolve().parents[2]
    for folder in (base / "graphstore", base / "ontology"):
        for path in sorted(p for p in folder.rglob("*") if p.suffix in (".py", ".ttl") and p.is_file()):
            h.update(path.relative_to(base).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def folder_digest(folder: Path) -> str:
    """Digest of everything below ``folder``: relative names, and the contents of regular files.

    Links are followed; a directory reached twice (a link back to an ancestor) is walked once, a
    dangling link counts by its target's name, and what is neither a file nor a directory (a
    FIFO, a socket) by its name alone, never opened.

    Raises:
        LoaderError: A file cannot be read (naming it).
    """
    h = hashlib.sha256()
    entries: list[tuple[bytes, Path]] = []
    for here, _, files in walk_once(folder):
        for file in files:
            path = here / file
            entries.append((os.fsencode(path.relative_to(folder)), path))
    for name, path in sorted(entries):
        h.update(name + b"\0")
        try:
            if path.is_symlink() and not path.exists():
                h.update(b"link:" + os.fsencode(os.readlink(path)))
            elif stat.S_ISREG(path.stat().st_mode):
                with open(path, "rb") as fh:
                    while block := fh.read(1 << 20):
                        h.update(block)
            else:
                h.update(b"special")
        except OSError as e:
            raise LoaderError(f"{path}: cannot be read to tell whether the corpus changed: {e}") from e
        h.update(b"\0")
    return h.hexdigest()


@dataclass(frozen=True)
class CorpusSpec:
    """How to find and load one corpus.

    Attributes:
        name: Corpus id in the graph.
        folder: Folder name inside a corpora directory.
        pattern: Glob of the files to load inside that folder.
        load: Loader taking the list of files.
        command: Name of the ``argweb ingest`` command (default: ``name``).
        summary: What the files are (help of the ingest command).
    """

    name: str
    folder: str
    pattern: str
    load: Callable[[list[Path]], CorpusBundle]
    command: str = ""
    summary: str = ""

    @property
    def command_name(self) -> str:
        """Name of the ``argweb ingest`` command of this corpus."""
        return self.command or self.name

    def find(self, root: Path) -> list[Path]:
        """The corpus files under ``root`` (empty if the folder is absent), symbolic links followed.

        Raises:
            LoaderError: A dangling link, or the same file found twice (:func:`unique_files`).
        """
        folder = root / self.folder
        if not folder.is_dir():
            return []
        return unique_files(find_files(folder, self.pattern))

    def input_digest(self, root: Path) -> str:
        """Digest of what a load of this corpus from ``root`` reads and writes: the folder's place
        (the corpus records it as its source), every file of the folder (a loader may read
        companions of the matched files, such as Sci-Arg's ``.txt`` beside each ``.ann``) and
        the code (:func:`reader_digest`).

        Raises:
            LoaderError: A file of the folder cannot be read.
        """
        folder = root / self.folder
        parts = (self.name, str(folder.resolve()), reader_digest(), folder_digest(folder))
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()


CORPORA: dict[str, CorpusSpec] = {
    spec.name: spec
    for spec in (
        CorpusSpec(
            "molweni",
            "molweni",
            "DP/*.json",
            lambda paths: load_dialogue_json(paths, "molweni"),
            summary="Molweni discourse-parsing JSON (e.g. DP/dev.json).",
        ),
        CorpusSpec(
            "stac",
            "stac",
            "*.json",
            lambda paths: load_dialogue_json(paths, "stac"),
            summary="STAC discourse JSON (Molweni format).",
        ),
        CorpusSpec(
            "qt30",
            "dialam-2024",
            "**/*.json",
            lambda paths: load_aif(paths, "qt30"),
            command="aif",
            summary="AIF JSON argument maps (QT30 / DialAM-2024), files or directories.",
        ),
        CorpusSpec(
            "m-arg",
            "m-arg",
            "**/*.csv",
            load_marg,
            summary="M-Arg CSVs: sentence files, aeneas timestamp files and pair files (aggregated, full, reference, "
            "gold).",
        ),
        CorpusSpec(
            "sciarg",
            "sciarg",
            "compiled_corpus/*.ann",
            load_sciarg,
            summary="Sci-Arg brat papers: a directory (e.g. compiled_corpus/) or .ann files with their .txt.",
        ),
        CorpusSpec(
            "contextdep",
            "contextdep",
            "*.tsv",
            load_contextdep,
            summary="ContextDeP: *_TOKEN-annotations.tsv (UTF-8) plus per-annotator ANON_<split>.tsv (UTF-16) files.",
        ),
    )
}


def files_for(name: str, paths: list[Path]) -> list[Path]:
    """Expand user-given paths (files or directories) for corpus ``name``."""
    spec = CORPORA[name]
    return expand(paths, spec.pattern.rsplit("/", 1)[-1])


@dataclass(frozen=True)
class FormatSpec:
    """A reader of another tool's argument-map format, loaded into a corpus the user names.

    Unlike a :class:`CorpusSpec` (one annotated corpus in its own files), a format holds maps of
    any origin: ``argweb ingest <name> PATH... --corpus NAME`` loads them into ``NAME``.

    Attributes:
        name: Name of the ``argweb ingest`` command and the default corpus.
        pattern: Glob of the files read inside a directory.
        load: Reader taking the files and the corpus id (and ``variant=`` when ``variants``).
        summary: What the files are (help of the ingest command).
        variants: The names ``--format`` accepts (formats one reader handles); empty: no option.
    """

    name: str
    pattern: str
    load: Callable[..., CorpusBundle]
    summary: str
    variants: tuple[str, ...] = ()

    def files(self, paths: list[Path]) -> list[Path]:
        """Expand user-given paths (files or directories)."""
        return expand(paths, self.pattern)


FORMATS: dict[str, FormatSpec] = {
    spec.name: spec
    for spec in (
        FormatSpec("xaif", "*.json", load_xaif, "xAIF (oAMF), OVA3 or AIF JSON maps, told apart by their keys."),
        FormatSpec("ova", "*.json", load_xaif, "OVA3 analyses (layout kept), xAIF or AIF JSON maps."),
        FormatSpec(
            "arguebuf",
            "*.*",
            load_arguebuf,
            "SADFace or ArgDown JSON, Kialo .txt or brat .ann (essays) maps, read with arguebuf.",
            variants=ARGUEBUF_FORMATS,
        ),
    )
}
