"""Helpers shared by the format readers and writers."""

from __future__ import annotations

import contextlib
import csv
import fnmatch
import hashlib
import io
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ontology.errors import LoaderError
from ontology.progress import Reporter
from ontology.records import (
    AnnotatorRecord,
    CorpusBundle,
    CorpusRecord,
    EdgeRecord,
    JudgementRecord,
    NodeRecord,
    build,
    make_id,
)

#: Deepest nesting of arrays and objects a JSON input may have. Every supported format needs
#: fewer than ten levels; far deeper input exhausts Python's recursion (in the parser, or later in
#: whatever walks the data) and is refused with a message instead.
MAX_JSON_DEPTH = 64
_LONG_NUMBER = re.compile(r"\d{4300,}")


def json_depth_exceeds(data: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether arrays and objects in ``data`` nest deeper than ``limit`` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


def parse_json(path: Path | str, text: str) -> Any:
    """Parse JSON text read from ``path`` (or what ``path`` names: a request body); every failure is a
    :class:`LoaderError` naming it.

    Besides invalid JSON: nesting deeper than :data:`MAX_JSON_DEPTH` (Python's parser would run out
    of recursion first on very deep input) and integers longer than Python converts (4,300 digits).

    Raises:
        LoaderError: Naming the file, and the line and column where the parser can tell.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise LoaderError(f"{path}: line {e.lineno}, column {e.colno}: invalid JSON ({e.msg})") from e
    except RecursionError:
        raise LoaderError(
            f"{path}: arrays or objects nested too deeply to read (at most {MAX_JSON_DEPTH} levels)"
        ) from None
    except ValueError as e:
        # Python refuses to convert an integer of more than 4,300 digits (int_max_str_digits).
        found = _LONG_NUMBER.search(text)
        at = ""
        if found is not None:
            line = text.count("\n", 0, found.start()) + 1
            at = f" line {line}, column {found.start() - text.rfind(chr(10), 0, found.start())}:"
        raise LoaderError(f"{path}:{at} a number of more than 4,300 digits, which Python does not read") from e
    if isinstance(data, dict | list) and json_depth_exceeds(data):
        raise LoaderError(f"{path}: arrays or objects nested more than {MAX_JSON_DEPTH} levels deep")
    return data


@contextlib.contextmanager
def named_as(names: Mapping[Path, str]) -> Iterator[None]:
    """Within the block, a :class:`LoaderError` names each scratch file of ``names`` by its name instead.

    For inputs a client sent (an API body) that are read through a temporary file: the message must
    name what the client knows, never the server's scratch path.
    """
    try:
        yield
    except LoaderError as e:
        message = str(e)
        for path, name in names.items():
            message = message.replace(str(path), name)
        raise LoaderError(message) from e


def read_json(path: Path) -> Any:
    """Parse a JSON file (a UTF-8 byte order mark is dropped, as in CSV and TSV files); errors name the
    file, line and column (:func:`parse_json`)."""
    return parse_json(path, decode_utf8(path, read_bytes(path)))


def _dangling(path: Path) -> LoaderError:
    return LoaderError(f"{path}: a symbolic link to {os.readlink(path)}, which does not exist")


def walk_once(folder: Path) -> Iterator[tuple[Path, list[str], list[str]]]:
    """``os.walk`` of ``folder`` following links, each directory once (a directory reached twice,
    or a link back to an ancestor, is not walked again), subdirectories in name order."""
    seen: set[tuple[int, int]] = set()
    for root, dirs, files in os.walk(folder, followlinks=True):
        info = os.stat(root)
        if (info.st_dev, info.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        dirs.sort()
        yield Path(root), dirs, files


def find_files(folder: Path, pattern: str) -> list[Path]:
    """The files under ``folder`` matching ``pattern`` (``*.json``, ``DP/*.json``, ``**/*.csv``), sorted.

    Symbolic links are followed, to files and to directories alike (a directory reached twice, or a
    link back to an ancestor, is walked once); a link whose target does not exist is an error, not a
    file silently left out.

    Raises:
        LoaderError: A dangling link matches the pattern or lies in a walked directory.
    """
    folder = Path(folder)
    head, _, name = pattern.rpartition("/")
    if not head.startswith("**"):
        out = []
        for path in sorted(folder.glob(pattern)):
            if path.is_symlink() and not path.exists():
                raise _dangling(path)
            if path.is_file():
                out.append(path)
        return out
    # "**/<rest>": every directory at any depth, symbolic links included.
    rest = head[2:].strip("/")
    found: list[Path] = []
    for here, dirs, files in walk_once(folder):
        for entry in dirs + files:
            path = here / entry
            if path.is_symlink() and not path.exists():
                raise _dangling(path)
        base = here / rest if rest else here
        if rest and not base.is_dir():
            continue
        for path in sorted(base.glob(name)) if rest else (here / f for f in files if fnmatch.fnmatch(f, name)):
            if path.is_file():
                found.append(path)
    return sorted(set(found))


def unique_files(paths: Sequence[Path]) -> list[Path]:
    """``paths`` unchanged, once it is certain that no file is among them twice.

    The same file given twice (twice the same path, a path and a link to it, or two copies with the
    same content) would be loaded twice, its records doubled or numbered apart: refused, naming
    both.

    Raises:
        LoaderError: Naming the two paths.
    """
    real: dict[str, Path] = {}
    by_size: dict[int, list[Path]] = {}
    for path in paths:
        key = os.path.realpath(path)
        if key in real:
            same = "the same path" if str(real[key]) == str(path) else f"the same file as {real[key]}"
            raise LoaderError(f"{path}: given twice ({same}); each file may be loaded once")
        real[key] = path
        with contextlib.suppress(OSError):
            by_size.setdefault(path.stat().st_size, []).append(path)
    for group in by_size.values():
        if len(group) < 2:
            continue
        digests: dict[str, Path] = {}
        for path in group:
            digest = hashlib.sha256(read_bytes(path)).hexdigest()
            if digest in digests:
                raise LoaderError(
                    f"{path}: the same content as {digests[digest]}; a copy of a file would be loaded twice "
                    "(give each file once)"
                )
            digests[digest] = path
    return list(paths)


def expand(paths: Iterable[Path | str], pattern: str) -> list[Path]:
    """Files given directly plus files matching ``pattern`` under given directories (links followed,
    :func:`find_files`), in order, each file once (:func:`unique_files`).

    Raises:
        LoaderError: A path that does not exist, a dangling link, no file at all, or a file given twice.
    """
    given = list(paths)
    out: list[Path] = []
    for raw in given:
        path = Path(raw)
        if path.is_dir():
            out.extend(find_files(path, f"**/{pattern}"))
        elif path.is_file():
            out.append(path)
        elif path.is_symlink():
            raise _dangling(path)
        else:
            raise LoaderError(f"{path}: no such file or directory")
    if not out:
        raise LoaderError(f"no {pattern} files found in {', '.join(str(p) for p in given)}")
    return unique_files(out)


def require(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``obj[key]`` checked for presence and type; errors name ``where``."""
    if not isinstance(obj, dict):
        raise LoaderError(f"{where}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise LoaderError(f"{where}: missing field {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise LoaderError(f"{where}: field {key!r} has type {type(value).__name__}")
    return value


# -- delimited files --------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileRelation:
    """A predicted relation written back into a corpus file, between two units named by the file's own ids.

    Attributes:
        source: The unit the relation starts at (AIF premise I-node, brat ``Arg1``).
        target: The unit it points to (AIF conclusion I-node, brat ``Arg2``).
        type: The relation type in the file's vocabulary (``RA`` / ``CA`` / ``MA``, a brat relation type).
        score: The model's score.
    """

    source: str
    target: str
    type: str
    score: float = 1.0


@dataclass(frozen=True)
class Row:
    """One record of a delimited file: its first physical line and its fields by column."""

    line: int
    values: dict[str, str]

    def get(self, column: str) -> str:
        """The field of ``column`` ('' when the file has no such column)."""
        return self.values.get(column, "")


def decode_utf8(path: Path, data: bytes, keep_bom: bool = False) -> str:
    """Decode UTF-8 (an optional BOM is dropped unless ``keep_bom``); errors name the file and line."""
    try:
        return data.decode("utf-8" if keep_bom else "utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise LoaderError(f"{path}: line {line}: not UTF-8 (byte {e.start}: {e.reason})") from e


def read_bytes(path: Path) -> bytes:
    """The raw bytes of a file; errors name the file."""
    try:
        return path.read_bytes()
    except OSError as e:
        raise LoaderError(f"{path}: cannot read ({e.strerror})") from e


def normalise_header(name: str) -> str:
    """``"Sentence 1 ID"`` -> ``"sentence_1_id"`` (the documentation and the files differ in style)."""
    return re.sub(r"\s+", "_", name.strip().lower())


def parse_delimited(path: Path, text: str, delimiter: str = ",") -> tuple[list[str], list[Row]]:
    """Split decoded text into a normalised header and rows keyed by it.

    Raises:
        LoaderError: Empty file, a header without rows (a file that loads nothing), malformed
            quoting or a row with the wrong number of fields.
    """
    # Token lists and HTML contexts exceed the default 128 KiB field limit.
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 28))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = [normalise_header(h) for h in next(reader)]
    except StopIteration:
        raise LoaderError(f"{path}: empty file") from None
    except csv.Error as e:
        raise LoaderError(f"{path}: line 1: {e}") from e
    rows: list[Row] = []
    start = reader.line_num + 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            raise LoaderError(f"{path}: line {start}: {e}") from e
        if fields:
            if len(fields) != len(header):
                raise LoaderError(f"{path}: line {start}: {len(fields)} fields, the header has {len(header)}")
            rows.append(Row(start, dict(zip(header, fields, strict=True))))
        start = reader.line_num + 1
    if not rows:
        raise LoaderError(f"{path}: line 1: a header and no rows; a file that loads nothing is refused")
    return header, rows


def require_columns(path: Path, header: Iterable[str], required: Iterable[str], what: str) -> None:
    """Raise naming the file and the first missing column."""
    present = set(header)
    missing = [c for c in required if c not in present]
    if missing:
        raise LoaderError(f"{path}: line 1: {what} file lacks column(s) {missing}")


def parse_bool(value: str, where: str) -> bool:
    """Figure-Eight booleans (``true``/``FALSE``/``1``...)."""
    v = value.strip().lower()
    if v in ("true", "1", "yes", "t"):
        return True
    if v in ("false", "0", "no", "f"):
        return False
    raise LoaderError(f"{where}: expected a boolean, got {value!r}")


def parse_float(value: str, where: str, column: str) -> float:
    """A number field; errors name the record and the column."""
    try:
        return float(value)
    except ValueError as e:
        raise LoaderError(f"{where}: column {column!r} is not a number: {value!r}") from e


def mismatch(found: str, expected: str, context: int = 30) -> str:
    """Where two strings first differ, as a phrase for an error message.

    Both strings are shown from a few characters before the first difference (cutting both at the
    start would print two identical prefixes).
    """
    pos = next((i for i, (a, b) in enumerate(zip(found, expected, strict=False)) if a != b), None)
    if pos is None:
        pos = min(len(found), len(expected))
    start = max(0, pos - context)

    def excerpt(text: str) -> str:
        cut = text[start : pos + context]
        return ("…" if start else "") + repr(cut) + ("…" if pos + context < len(text) else "")

    return (
        f"differ from character {pos} on ({len(found)} vs {len(expected)} characters): "
        f"the text has {excerpt(found)}, the annotation says {excerpt(expected)}"
    )


def describe_sources(paths: Sequence[Path]) -> str:
    """The files of one load as one phrase: the file, or their common directory and how many."""
    if not paths:
        return "no files"
    if len(paths) == 1:
        return str(paths[0])
    try:
        common = Path(os.path.commonpath([str(p.resolve()) for p in paths]))
    except ValueError:
        common = paths[0].parent
    return f"{common} ({len(paths)} files)"


REMARK = "as in the gold maps: "
"""The start of a note on data the annotated corpora themselves hold (an L-node linked to itself, a
locution entry of a node that is no L-node): logged with the other notes, never a warning."""

MAX_NOTES = 20
"""Notes of one bundle said one by one; the rest are counted."""


def report_notes(bundle: CorpusBundle, reporter: Reporter) -> CorpusBundle:
    """Say what the files of ``bundle`` left incomplete: the first :data:`MAX_NOTES` notes as detail
    lines (the log; the console too when the reporter shows details) and one warning with the count,
    whichever path (transactional or bulk) writes the bundle. Returns ``bundle``."""
    if not bundle.notes:
        return bundle
    for note in bundle.notes[:MAX_NOTES]:
        reporter.log(f"partial: {note}")
    if len(bundle.notes) > MAX_NOTES:
        reporter.log(f"partial: ... and {len(bundle.notes) - MAX_NOTES} more note(s)")
    # What the annotated corpora themselves hold (REMARK) is logged only: a warning on every load
    # of the gold data would say nothing the user can act on.
    incomplete = sum(not note.startswith(REMARK) for note in bundle.notes)
    if incomplete:
        reporter.warn(
            f"{bundle.corpus.id}: {incomplete} relation(s) incomplete in the files (no premise or no "
            "conclusion), stored as they are"
        )
    return bundle


def corpus_bundle(
    corpus: str,
    name: str,
    paths: Sequence[Path],
    nodes: list[NodeRecord],
    edges: list[EdgeRecord],
    origin: str,
    source: str | None = None,
    notes: Sequence[str] = (),
) -> CorpusBundle:
    """What one load hands to the store: the corpus record and the records read.

    Args:
        corpus: Corpus id.
        name: Corpus name.
        paths: The files read (the record's ``source`` describes them unless ``source`` is given).
        nodes: Node records.
        edges: Explicit edges.
        origin: Where the records came from, for error messages.
        source: The record's ``source`` as the loader spells it.
        notes: What the files leave out but was accepted (see :class:`~ontology.records.CorpusBundle`).
    """
    record = CorpusRecord(
        id=corpus, corpus=corpus, name=name, source=describe_sources(paths) if source is None else source
    )
    return CorpusBundle(record, nodes, edges, origin=origin, notes=notes)


def vote_fields(votes: int | None, annotators: int | None) -> dict[str, Any]:
    """The crowd-vote fields of a relation record; ``vote_share`` is derived here and nowhere else.

    Args:
        votes: Annotators who chose the relation's label (None: not known).
        annotators: Annotators who judged the pair (None: not known).

    Returns:
        ``votes``, ``annotator_count`` and ``vote_share`` (None unless both counts are known and
        ``annotators`` is not 0).
    """
    share = votes / annotators if votes is not None and annotators else None
    return {"votes": votes, "annotator_count": annotators, "vote_share": share}


class Annotators:
    """The annotators of one load, each recorded once, and the judgements they made.

    Args:
        corpus: Corpus id (of the annotator and judgement records).
    """

    def __init__(self, corpus: str) -> None:
        self.corpus = corpus
        self.records: dict[str, AnnotatorRecord] = {}

    def judgement(self, where: str, name: str, **fields: Any) -> JudgementRecord:
        """A judgement by the annotator called ``name`` (recorded at first sight), with ``fields``.

        Raises:
            LoaderError: A field is invalid; the message starts with ``where``.
        """
        annotator = make_id(self.corpus, "annotator", name)
        if annotator not in self.records:
            self.records[annotator] = build(AnnotatorRecord, where, id=annotator, corpus=self.corpus, name=name)
        return build(JudgementRecord, where, corpus=self.corpus, annotator=annotator, **fields)
