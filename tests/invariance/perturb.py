"""A normal form of loaded records, to compare the rewrites of :mod:`ontology.formats.perturb` by.

A reader is invariant when every rewrite of a file loads to the same :func:`canonical` records; a
model is invariant when it predicts the same for both.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ontology.records import CorpusBundle, CorpusRecord, NodeRecord

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
