"""brat standoff out for Sci-Arg: the same ``T`` lines, predicted ``R`` lines.

Every line of the input ``.ann`` that is not a relation (``R``) line is written back unchanged and
in its place (span lines, comments, notes, attributes); the gold ``R`` lines are dropped, and so
are the notes, attributes and normalisations of those relations (they would name a relation the
file no longer has); the predicted ones are appended as ``R<k><TAB><type> Arg1:<T> Arg2:<T>``.
The ``.txt`` is copied byte for byte.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from ontology.errors import LoaderError
from ontology.formats.common import FileRelation, decode_utf8, read_bytes
from ontology.formats.sciarg import METADATA_LINES
from ontology.system import atomic_write_bytes


def span_ids(ann_text: str) -> list[str]:
    """The ``T`` ids of an annotation text, in order."""
    return [line.split("\t", 1)[0] for line in ann_text.split("\n") if line.startswith("T") and "\t" in line]


def _target(line: str) -> str | None:
    """The annotation a note, attribute or normalisation line qualifies (``A1<TAB>Negated R3``: ``R3``)."""
    if line[:1] not in ("#", *METADATA_LINES):
        return None
    fields = line.split("\t")
    parts = fields[1].split() if len(fields) > 1 else []
    return parts[1] if len(parts) > 1 else None


def with_relations(ann: Path, relations: Iterable[FileRelation]) -> str:
    """The text of ``ann`` with its ``R`` lines replaced by ``relations``.

    Raises:
        LoaderError: A relation names a span the file does not define.
    """
    text = decode_utf8(ann, read_bytes(ann))
    known = set(span_ids(text))
    newline = "\r\n" if "\r\n" in text else "\n"
    lines_in = text.split(newline)
    gold = {line.split("\t", 1)[0] for line in lines_in if line.startswith("R")}
    kept = [line for line in lines_in if not line.startswith("R") and _target(line) not in gold]
    while kept and kept[-1] == "":
        kept.pop()
    lines = list(kept)
    for k, rel in enumerate(relations, start=1):
        for arg in (rel.source, rel.target):
            if arg not in known:
                raise LoaderError(f"{ann}: predicted relation refers to span {arg!r}, which the file does not define")
        lines.append(f"R{k}\t{rel.type} Arg1:{rel.source} Arg2:{rel.target}")
    return newline.join(lines) + newline if lines else ""


def write_paper(ann: Path, out_dir: Path, relations: Iterable[FileRelation]) -> tuple[Path, Path]:
    """Write ``<stem>.ann`` (spans kept, predicted relations) and a copy of ``<stem>.txt`` into ``out_dir``."""
    content = with_relations(ann, relations)
    txt = ann.with_suffix(".txt")
    out_ann = out_dir / ann.name
    out_txt = out_dir / txt.name
    atomic_write_bytes(out_ann, content.encode("utf-8"))
    if txt.is_file():
        out_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(txt, out_txt)
    return out_ann, out_txt
