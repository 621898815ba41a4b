"""Equally valid ways of writing the same AIF map: the copies ``evaluate`` and the invariance tests score.

AIF gives node and edge order, the form of ids, the spacing around a locution's colon and the
optional keys (timestamps, schemes, the ``locutions`` list) no meaning, and the tools of the
Argument Web (AIFdb, OVA, oAMF) each write them their own way. A reader or model that is right
about a map must be right about every copy made here; :data:`AIF_VARIANTS` names them.
"""

from __future__ import annotations

import copy
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
