"""Which loader reads which corpus, and where its files sit in a corpora directory.

A corpora directory is laid out like ``shared/corpora``: one folder per corpus
(``molweni/DP/*.json``, ``stac/*.json``, ``dialam-2024/**/*.json``, ...).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from graphstore.loaders.aif import load_aif
from graphstore.loaders.arguebuf_maps import ARGUEBUF_FORMATS, load_arguebuf
from graphstore.loaders.common import expand, find_files, unique_files
from graphstore.loaders.contextdep import load_contextdep
from graphstore.loaders.dialogue_json import load_dialogue_json
from graphstore.loaders.marg import load_marg
from graphstore.loaders.sciarg import load_sciarg
from graphstore.loaders.xaif import load_xaif
from ontology.records import CorpusBundle

SAMPLES: Path = Path(__file__).resolve().parent.parent / "samples"
"""Small real excerpts of every corpus, laid out like a corpora directory, shipped in the package:
what the main job loads when no corpora directory is found, and what the tests load."""


@cache
def reader_digest() -> str:
    """Digest of the code that turns corpus files into records: the loaders and the ontology.

    Part of every corpus' input digest, so that a changed reader or ontology reads the files again
    (computed once per process).
    """
    h = hashlib.sha256()
    base = Path(__file__).resolve().parents[2]
    for folder in (base / "graphstore" / "loaders", base / "ontology"):
        for path in sorted(p for p in folder.rglob("*") if p.suffix in (".py", ".ttl") and p.is_file()):
            h.update(path.relative_to(base).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def folder_digest(folder: Path) -> str:
    """Digest of every file below ``folder`` (links followed): relative names and contents."""
    h = hashlib.sha256()
    found = []
    for here, dirs, files in os.walk(folder, followlinks=True):
        dirs.sort()
        found += [Path(here) / name for name in files]
    for path in sorted(found, key=lambda p: p.relative_to(folder).as_posix()):
        h.update(path.relative_to(folder).as_posix().encode() + b"\0")
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
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
        """Digest of what a load of this corpus from ``root`` reads: every file of its folder (a
        loader may read companions of the matched files, such as Sci-Arg's ``.txt`` beside each
        ``.ann``) and the reading code (:func:`reader_digest`)."""
        parts = (self.name, reader_digest(), folder_digest(root / self.folder))
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
