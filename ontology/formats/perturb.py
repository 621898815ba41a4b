"""Equally valid ways of writing the same corpus file: the copies ``evaluate`` and the invariance tests score.

AIF gives node and edge order, the form of ids, the spacing around a locution's colon and the
optional keys (timestamps, schemes, the ``locutions`` list) no meaning, and the tools of the
Argument Web (AIFdb, OVA, oAMF) each write them their own way; :data:`AIF_VARIANTS` names those
rewritings. Molweni/STAC JSON (key order, id forms, optional keys), brat standoff (ids, line
order, line ends) and CSV/TSV tables (row and column order, quoting) have theirs below. A reader
or model that is right about a file must be right about every copy made here. Each helper returns
new data and leaves its input alone; the random ones take a seed, so a failure can be replayed.
"""

from __future__ import annotations

import copy
import csv
import io
import random
import re
from collections.abc import Callable
from typing import Any

Map = dict[str, Any]
# "Speaker : text" and "Anna: Speaker : text": the colon right after a speaker name.
_SPEAKER_COLON = re.compile(r"^([^:\n]{1,60}?)\s*:\s+")
_NESTED_COLON = re.compile(r"^([^:\n]{1,60}?)\s*:\s*([^:\n]{1,60}?)\s*:\s+")


def shuffled(data: Map, seed: int = 0) -> Map:
    """Nodes, edges and locutions in a seeded random order."""
    rng = random.Random(seed)
    out = copy.deepcopy(data)
    for key in ("nodes", "edges", "locutions"):
        if isinstance(out.get(key), list):
            rng.shuffle(out[key])
    return out


def _renumber(data: Map, new_id: Callable[[int], Any]) -> Map:
    """Every node and edge id replaced by ``new_id(k)`` (nodes first, then edges), references too."""
    out = copy.deepcopy(data)
    ids: dict[str, Any] = {}
    for k, node in enumerate(out["nodes"]):
        ids[str(node["nodeID"])] = new_id(k)
        node["nodeID"] = ids[str(node["nodeID"])]
    for k, edge in enumerate(out["edges"]):
        edge["edgeID"] = new_id(len(ids) + k)
        edge["fromID"] = ids[str(edge["fromID"])]
        edge["toID"] = ids[str(edge["toID"])]
    for loc in out.get("locutions") or []:
        if str(loc.get("nodeID")) in ids:
            loc["nodeID"] = ids[str(loc["nodeID"])]
    return out


def integer_ids(data: Map) -> Map:
    """Ids as JSON integers (as xAIF writes them)."""
    return _renumber(data, lambda k: 1000 + k)


def numeric_string_ids(data: Map) -> Map:
    """Ids as numeric strings in another range (as AIFdb writes them)."""
    return _renumber(data, lambda k: str(700000 + 7 * k))


def prefixed_ids(data: Map) -> Map:
    """Ids as ``N_<digits>`` strings (as the official DialAM test maps write them)."""
    return _renumber(data, lambda k: f"N_{163907070207948843 + 13 * k}")


def _respace(data: Map, pattern: re.Pattern[str], replacement: str) -> Map:
    out = copy.deepcopy(data)
    for node in out["nodes"]:
        if node.get("type") == "L" and isinstance(node.get("text"), str):
            node["text"] = pattern.sub(replacement, node["text"], count=1)
    return out


def tight_colons(data: Map) -> Map:
    """``Speaker: text`` instead of ``Speaker : text`` (annotators' copies ``Anna: Speaker: text``)."""
    return _respace(_respace(data, _NESTED_COLON, r"\1: \2: "), _SPEAKER_COLON, r"\1: ")


def wide_colons(data: Map) -> Map:
    """``Speaker   :  text``: the colon padded with several spaces, as some transcripts have it."""
    return _respace(_respace(data, _NESTED_COLON, r"\1  :  \2   :  "), _SPEAKER_COLON, r"\1   :  ")


def bare(data: Map) -> Map:
    """Only what AIF requires: no timestamps, schemes or scheme ids, and no ``locutions`` list."""
    out = copy.deepcopy(data)
    out.pop("locutions", None)
    for node in out["nodes"]:
        for key in ("timestamp", "scheme", "schemeID"):
            node.pop(key, None)
    return out


def everything(data: Map, seed: int = 0) -> Map:
    """Every change at once: shuffled, tight colons, ``N_`` ids, bare."""
    return shuffled(prefixed_ids(tight_colons(bare(data))), seed)


AIF_VARIANTS: dict[str, Callable[[Map], Map]] = {
    "shuffled": shuffled,
    "integer ids": integer_ids,
    "numeric-string ids": numeric_string_ids,
    "N_ ids": prefixed_ids,
    "Speaker: text": tight_colons,
    "Speaker   :  text": wide_colons,
    "no optional keys": bare,
    "all at once": everything,
}
"""The valid rewritings of an AIF map, by name."""


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
                    # An invariant of the variants this module defines (never user input): a
                    # variant without quoting is only asked of tables that need none.
                    raise ValueError(f"field {f[:40]!r} cannot be written without quoting")
        return "".join(delimiter.join(r) + newline for r in table)
    buf = io.StringIO()
    writer = csv.writer(
        buf,
        delimiter=delimiter,
        lineterminator=newline,
        quoting=csv.QUOTE_ALL if quoting == "all" else csv.QUOTE_MINIMAL,
    )
    writer.writerows(table)
    return buf.getvalue()


def _int_if_numeric(value: Any) -> Any:
    return int(value) if isinstance(value, str) and value.isdigit() else value


DIALOGUE_VARIANTS: dict[str, Callable[[list[dict[str, Any]]], list[dict[str, Any]]]] = {
    "keys shuffled": shuffle_keys,
    "integer ids": lambda ds: retype_ids(ds, _int_if_numeric),
    "string ids": lambda ds: retype_ids(ds, str),
}
"""The valid rewritings of a Molweni/STAC dialogue file, by name."""
