"""Equally valid rewrites of corpus files, and a normal form of loaded records to compare them by.

A reader is invariant when every rewrite made here loads to the same :func:`canonical` records; a
model is invariant when it predicts the same for both. Each helper returns new data and leaves its
input alone; the random ones take a seed, so a failure can be replayed.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ontology.records import CorpusBundle, CorpusRecord, NodeRecord

# -- JSON -------------------------------------------------------------------------------------------


def shuffle_keys(value: Any, seed: int = 0) -> Any:
    """``value`` with the keys of every JSON object in it, at any depth, in a seeded random order."""
    rng = random.Random(seed)

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            keys = list(v)
            rng.shuffle(keys)
            return {k: walk(v[k]) for k in keys}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    return walk(value)


def retype_ids(dialogues: list[dict[str, Any]], convert: Callable[[Any], Any]) -> list[dict[str, Any]]:
    """A copy of a Molweni/STAC dialogue list with each dialogue's ``id`` replaced by ``convert(id)``."""
    out = copy.deepcopy(dialogues)
    for d in out:
        d["id"] = convert(d["id"])
    return out


def without_key(dialogues: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """A copy of a dialogue list with ``key`` left out of every dialogue (an optional field absent)."""
    return [{k: v for k, v in d.items() if k != key} for d in dialogues]


# -- brat standoff ----------------------------------------------------------------------------------

_BRAT_ID = re.compile(r"\b([TRAMN])(\d+)\b")


def renumber_brat(text: str, seed: int = 0) -> tuple[str, dict[str, str]]:
    """An ``.ann`` text with its annotation ids renumbered, and the map from old id to new id.

    Each kind (``T``, ``R``, ``A``, ``M``, ``N``) gets the numbers it used in a seeded random order,
    everywhere an id appears: at the start of its line, as ``Arg1:``/``Arg2:`` of a relation and as
    the annotation an attribute, note or normalisation qualifies.
    """
    rng = random.Random(seed)
    lines = text.split("\n")
    ids: dict[str, list[str]] = {}
    for line in lines:
        key = line.split("\t", 1)[0]
        m = _BRAT_ID.fullmatch(key)
        if m is not None:
            ids.setdefault(m.group(1), []).append(key)
    mapping: dict[str, str] = {}
    for kind, old in ids.items():
        numbers = [int(i[1:]) for i in old]
        rng.shuffle(numbers)
        mapping.update({o: f"{kind}{n}" for o, n in zip(old, numbers, strict=True)})

    def rewrite(line: str) -> str:
        head, tab, rest = line.partition("\t")
        if not tab:
            return line
        fields = rest.split("\t")
        # The text field of a span line is the paper's text, never an id.
        fields[0] = _BRAT_ID.sub(lambda m: mapping.get(m.group(0), m.group(0)), fields[0])
        return mapping.get(head, head) + "\t" + "\t".join(fields)

    return "\n".join(rewrite(line) for line in lines), mapping


def shuffle_lines(text: str, seed: int = 0) -> str:
    """The non-blank lines of a line-based file (brat ``.ann``) in a seeded random order."""
    lines = [line for line in text.split("\n") if line.strip()]
    random.Random(seed).shuffle(lines)
    return "\n".join(lines) + "\n"


def crlf(text: str) -> str:
    """``text`` with Windows line ends."""
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


# -- delimited files --------------------------------------------------------------------------------

QUOTING = {"minimal": csv.QUOTE_MINIMAL, "all": csv.QUOTE_ALL}


def rewrite_table(
    text: str,
    *,
    delimiter: str = ",",
    row_seed: int | None = None,
    column_seed: int | None = None,
    quoting: str = "minimal",
    newline: str = "\n",
    field: Callable[[str, str], str] | None = None,
) -> str:
    """A CSV/TSV text (header first) written again another valid way.

    Args:
        text: The decoded file.
        delimiter: Its field separator.
        row_seed: Shuffle the records (the header stays first) with this seed.
        column_seed: Shuffle the columns, header and records alike, with this seed.
        quoting: ``minimal`` or ``all`` (as Python's csv writer quotes), or ``none``:
            plain TSV without any quoting (IANA ``text/tab-separated-values``), for files whose
            fields hold no delimiter, line break or leading quote.
        newline: Line terminator.
        field: ``field(column, value)`` writes a record's field another way (the header as it is).
    """
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    header, body = rows[0], [r for r in rows[1:] if r]
    if field is not None:
        body = [[field(c, v) for c, v in zip(header, r, strict=True)] for r in body]
    if row_seed is not None:
        random.Random(row_seed).shuffle(body)
    order = list(range(len(header)))
    if column_seed is not None:
        random.Random(column_seed).shuffle(order)
    table = [[r[i] for i in order] for r in [header, *body]]
    if quoting == "none":
        for r in table:
            for f in r:
                if delimiter in f or "\n" in f or "\r" in f or f.startswith('"'):
                    raise ValueError(f"field {f[:40]!r} cannot be written without quoting")
        return "".join(delimiter.join(r) + newline for r in table)
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator=newline, quoting=QUOTING[quoting])
    writer.writerows(table)
    return buf.getvalue()


# -- the normal form --------------------------------------------------------------------------------

# AIF edge ids are their relation's id plus a direction and a number (records.link).
_EDGE_ID = re.compile(r"(.+)([<>]\d+)")
# Record fields that hold the id of another record.
_REFERENCES = ("discourse", "speaker_id", "relation", "annotator", "sentences", "source", "target")


def canonical(bundle: CorpusBundle, name: Callable[[NodeRecord], str | None] = lambda _: None) -> list[str]:
    """The records of a bundle as a sorted list of JSON lines, independent of record order and ids.

    Args:
        bundle: What a loader returned.
        name: For a record whose ids depend on how the file was written (renumbered brat ids,
            another form of dialogue id), a name made from its content; ``None`` keeps the record's
            ids. A named record's ``id`` and ``local_id`` become the name, and so does every
            reference to it in other records and in edges.
    """
    names = {n.id: given for n in bundle.nodes if (given := name(n)) is not None}

    def rename(value: Any) -> Any:
        if isinstance(value, str):
            m = _EDGE_ID.fullmatch(value)
            if value not in names and m is not None and m.group(1) in names:
                return names[m.group(1)] + m.group(2)
            return names.get(value, value)
        if isinstance(value, list):
            return [rename(v) for v in value]
        return value

    lines: list[str] = []
    for node in bundle.nodes:
        fields = node.model_dump(mode="json")
        if isinstance(node, CorpusRecord):
            # Where the files lay, not what they say.
            fields.pop("source", None)
        if node.id in names:
            fields["id"] = names[node.id]
            if "local_id" in fields:
                fields["local_id"] = names[node.id]
        for key in _REFERENCES:
            if key in fields:
                fields[key] = rename(fields[key])
        lines.append(json.dumps([type(node).__name__, fields], sort_keys=True))
    for edge in bundle.edges:
        fields = edge.model_dump(mode="json")
        for key in ("source", "target", "id"):
            fields[key] = rename(fields[key])
        lines.append(json.dumps(["edge", fields], sort_keys=True))
    return sorted(lines)


def differences(a: Sequence[str], b: Sequence[str], limit: int = 5) -> str:
    """The first few lines of two :func:`canonical` forms that only one of them has (for messages)."""
    ca, cb = Counter(a), Counter(b)
    lines = [f"- {x}" for x in sorted((ca - cb).elements())[:limit]]
    lines += [f"+ {x}" for x in sorted((cb - ca).elements())[:limit]]
    return "\n".join(lines)
