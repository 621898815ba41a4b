"""Which loader reads which corpus, and where its files sit in a corpora directory.

A corpora directory is laid out like ``shared/corpora``: one folder per corpus
(``molweni/DP/*.json``, ``stac/*.json``, ``dialam-2024/**/*.json``, ...).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ontology.errors import ApiError, LoaderError
from ontology.formats.aif import load_aif
from ontology.formats.arguebuf_maps import ARGUEBUF_FORMATS, load_arguebuf
from ontology.formats.common import expand, find_files, unique_files, walk_once
from ontology.formats.contextdep import load_contextdep
from ontology.formats.dialogue_json import load_dialogue_files, load_dialogue_json
from ontology.formats.marg import load_marg
from ontology.formats.sciarg import load_sciarg
from ontology.formats.xaif import load_xaif
from ontology.names import check_corpus_name
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


# -- what a client may read and write -------------------------------------------------------------

SHARED_CORPORA = Path("../shared/corpora")
"""Where a checkout next to the shared data finds the corpora."""
FETCHED_CORPORA = Path("corpora")
"""Where ``argweb fetch`` puts corpora when neither ``--dest`` nor ``ARGWEB_CORPORA`` says otherwise."""


def corpora_root(configured: Path | None) -> Path:
    """The corpora directory: ``configured`` (``ARGWEB_CORPORA``), else what ``argweb fetch`` fetched
    (``./corpora``), else ``../shared/corpora``, else the samples.

    A candidate counts only when it exists and holds files of at least one known corpus.
    """
    for candidate in (configured, FETCHED_CORPORA, SHARED_CORPORA):
        if candidate is not None and candidate.is_dir() and any(spec.find(candidate) for spec in CORPORA.values()):
            return candidate
    return SAMPLES


_MAP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def read_corpus(spec: CorpusSpec, files: list[Path], digest: str) -> CorpusBundle:
    """Parse ``files`` of corpus ``spec`` into a bundle carrying ``digest`` (its input digest, which a
    completed load records on the corpus marker).

    Raises:
        LoaderError: A file is malformed.
    """
    bundle = spec.load(files)
    bundle.input_digest = digest
    return bundle


def check_name(label: str, value: str) -> None:
    """Refuse a corpus or map name that is not 1-100 letters, digits, ``.``, ``_`` or ``-``.

    Raises:
        ApiError: Naming ``label``.
    """
    if not _MAP_NAME.match(value):
        raise ApiError(f"{label} must be 1-100 letters, digits, '.', '_' or '-' (starting with a letter or digit)")


def refuse_gold(corpus: str, instead: str) -> None:
    """Refuse a write into a gold corpus (one the registry loads from annotation), or under a name
    outside the corpus-name grammar or that differs from a gold corpus only in case or punctuation
    (:func:`ontology.names.check_corpus_name`).

    Every write path of the API, the command line and the live mining calls this one check: gold
    corpora change only through their own ingest, never through a client.

    Args:
        corpus: The corpus a client asked to write into.
        instead: The corpus to suggest (the caller's default).

    Raises:
        ApiError: ``corpus`` is gold.
    """
    if corpus in CORPORA:
        raise ApiError(f"corpus {corpus!r} holds gold annotation; write into another corpus (default {instead!r})")
    check_corpus_name(corpus, CORPORA)


def load_corpus(corpus: str, paths: list[Path]) -> CorpusBundle:
    """Parse and validate the files of ``corpus`` (files or directories); nothing is written.

    Raises:
        ApiError: Unknown corpus.
        LoaderError: A file is malformed (the message names the file and the record).
    """
    if corpus not in CORPORA:
        raise ApiError(f"unknown corpus {corpus!r}; known: {', '.join(CORPORA)}")
    return CORPORA[corpus].load(files_for(corpus, paths))


def load_format(name: str, paths: list[Path], corpus: str | None = None, variant: str | None = None) -> CorpusBundle:
    """Parse and validate maps in another tool's format (files or directories); nothing is written.

    Args:
        name: A format of :data:`FORMATS` (``xaif``, ``ova``, ...).
        paths: Files or directories.
        corpus: The corpus to load them into (default: the format's name); never a gold corpus.
        variant: ``--format`` of a reader of several formats (``arguebuf``); None: detected per file.

    Raises:
        ApiError: Unknown format or variant, a bad corpus name, or a gold corpus.
        LoaderError: A file is malformed (the message names the file and the record).
    """
    if name not in FORMATS:
        raise ApiError(f"unknown format {name!r}; known: {', '.join(FORMATS)}")
    spec = FORMATS[name]
    target = corpus or spec.name
    refuse_gold(target, spec.name)
    files = spec.files(paths)
    if not spec.variants:
        if variant is not None:
            raise ApiError(f"ingest {name} reads one format; --format is for ingest arguebuf")
        return spec.load(files, target)
    if variant is not None and variant not in spec.variants:
        raise ApiError(f"--format must be one of {', '.join(spec.variants)}, not {variant!r}")
    return spec.load(files, target, variant=variant)


# -- what a model task reads ----------------------------------------------------------------------

RECORD_READERS: dict[str, tuple[str, Callable[[list[Path]], CorpusBundle]]] = {
    "aif": ("*.json", load_aif),
    "marg": ("*.csv", load_marg),
    "contextdep": ("*_TOKEN-annotations.tsv", load_contextdep),
    "sciarg": ("*.ann", load_sciarg),
    "dialogues": ("*.json", load_dialogue_files),
}
"""The corpus formats a model task may read: format -> (the files it reads inside a folder, its reader)."""


def _files(paths: Sequence[Path], pattern: str) -> list[Path]:
    """The files of ``paths`` (folders searched recursively for ``pattern``).

    Raises:
        LoaderError: A path that does not exist.
    """
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out += sorted(p for p in path.rglob(pattern) if p.is_file())
        elif path.is_file():
            out.append(path)
        else:
            raise LoaderError(f"{path}: no such file or directory")
    return out


def read_records(fmt: str, paths: Sequence[Path]) -> CorpusBundle:
    """The records of the ``fmt`` files under ``paths``.

    Raises:
        LoaderError: No such files, or a malformed one (file and record named).
    """
    pattern, reader = RECORD_READERS[fmt]
    files = _files(paths, pattern)
    if not files:
        raise LoaderError(f"no {fmt} files ({pattern}) in {', '.join(map(str, paths))}")
    return reader(files)
