"""AIF maps written as xAIF (oAMF) or OVA3 files, with the layout a mapping tool gave the nodes.

Both wrap the AIF map of :func:`graphstore.aif_export.build_aif` (read with ``with_layout``):

* **xAIF** ``{"AIF", "text": {"txt"}, "dialog", "ova"}``: ids written as integers, as oAMF modules
  and ARG-tech's ``xaif`` package expect (numeric ids as their number; other ids renumbered from 1
  in map order, consistently in nodes, edges, locutions and participants); ``ova`` holds the stored
  layout in OVA's form (an empty list when no node has one);
* **OVA3** ``{"AIF", "OVA", "text"}``: ids as the map has them; ``OVA.nodes`` places every node,
  where it was when the map was read from OVA, else on a generated grid below the placed nodes
  (locutions, illocutions, propositions and relations in columns, in map order), so that OVA draws
  the whole map; ``schemefulfillments`` name each relation node's scheme, which OVA reads.

The ``text`` of both is the locutions in map order (propositions in a monologue), each in a
``<span class="highlighted" id="<nodeID>">`` OVA links to its node.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ontology.errors import ApiError

FORMATS = ("aif", "xaif", "ova")
# Columns of the generated grid, by node type; rows are SPACING apart.
_COLUMN = {"L": 0, "TA": 0, "YA": 1, "I": 2, "RA": 3, "CA": 3, "MA": 3}
_SPACING = (380, 140)


def _is_int(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, str) and value.isdigit())


def _integer_ids(values: Sequence[Any]) -> dict[Any, int]:
    """Each distinct value -> an integer: its own number when every value is one, else 1, 2, ... in order."""
    distinct = list(dict.fromkeys(v for v in values if v is not None))
    if all(_is_int(v) for v in distinct) and len({int(v) for v in distinct}) == len(distinct):
        return {v: int(v) for v in distinct}
    return {v: k for k, v in enumerate(distinct, start=1)}


def _text(aif: Mapping[str, Any], ids: Callable[[Any], Any] = lambda x: x) -> tuple[str, bool]:
    """The map's text (locutions, else propositions, in map order) and whether it is a dialogue."""
    locutions = [n for n in aif["nodes"] if n.get("type") == "L"]
    units = locutions or [n for n in aif["nodes"] if n.get("type") == "I"]
    parts = [
        f'<span class="highlighted" id="{ids(n["nodeID"])}">{html.escape(str(n.get("text") or ""))}</span><br>'
        for n in units
    ]
    return "\n".join(parts), bool(locutions)


def _scheme_fulfillments(nodes: Sequence[Mapping[str, Any]], ids: Callable[[Any], Any]) -> list[dict[str, Any]]:
    return [
        {"nodeID": ids(n["nodeID"]), "schemeID": n["schemeID"]} for n in nodes if n.get("schemeID") not in (None, "")
    ]


def _coordinate(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _placed(aif: Mapping[str, Any]) -> dict[Any, tuple[int | float, int | float]]:
    """Every node's position: the stored one, else a cell of a grid below the stored ones."""
    stored = {e["nodeID"]: (_coordinate(e["x"]), _coordinate(e["y"])) for e in aif.get("layout", [])}
    top = max((y for _, y in stored.values()), default=-_SPACING[1]) + _SPACING[1]
    rows: dict[int, int] = {}
    out = {}
    for node in aif["nodes"]:
        nid = node["nodeID"]
        if nid in stored:
            out[nid] = stored[nid]
            continue
        column = _COLUMN.get(str(node.get("type")), 4)
        row = rows.get(column, 0)
        rows[column] = row + 1
        out[nid] = (column * _SPACING[0], top + row * _SPACING[1])
    return out


def _ova_section(
    nodes: Sequence[Mapping[str, Any]],
    edges: Sequence[Mapping[str, Any]],
    places: Mapping[Any, tuple[int | float, int | float]],
    ids: Callable[[Any], Any],
) -> dict[str, Any]:
    return {
        "firstname": "",
        "surname": "",
        "url": "",
        "nodes": [
            {
                "nodeID": ids(n["nodeID"]),
                "visible": True,
                "x": places[n["nodeID"]][0],
                "y": places[n["nodeID"]][1],
                "timestamp": n.get("timestamp") or "",
            }
            for n in nodes
            if n["nodeID"] in places
        ],
        "edges": [{"fromID": ids(e["fromID"]), "toID": ids(e["toID"]), "visible": True} for e in edges],
    }


def to_xaif(aif: Mapping[str, Any]) -> dict[str, Any]:
    """The xAIF form of an exported map (see the module docstring)."""
    node_ids = _integer_ids([n["nodeID"] for n in aif["nodes"]])
    edge_ids = _integer_ids([e["edgeID"] for e in aif["edges"]])
    people = [loc.get("personID") for loc in aif["locutions"]] + [p["participantID"] for p in aif["participants"]]
    person_ids = _integer_ids(people)

    def node(x: Any) -> Any:
        return node_ids[x]

    nodes = [{**n, "nodeID": node(n["nodeID"])} for n in aif["nodes"]]
    edges = [
        {**e, "edgeID": edge_ids[e["edgeID"]], "fromID": node(e["fromID"]), "toID": node(e["toID"])}
        for e in aif["edges"]
    ]
    locutions = [
        {**loc, "nodeID": node(loc["nodeID"]), "personID": person_ids.get(loc.get("personID"))}
        for loc in aif["locutions"]
    ]
    participants = [{**p, "participantID": person_ids[p["participantID"]]} for p in aif["participants"]]
    text, dialog = _text(aif, node)
    stored = {e["nodeID"] for e in aif.get("layout", [])}
    places = {nid: xy for nid, xy in _placed(aif).items() if nid in stored}
    return {
        "AIF": {
            "nodes": nodes,
            "edges": edges,
            "locutions": locutions,
            "participants": participants,
            "schemefulfillments": _scheme_fulfillments(aif["nodes"], node),
            "descriptorfulfillments": list(aif.get("descriptorfulfillments", [])),
        },
        "text": {"txt": text},
        "dialog": dialog,
        "ova": _ova_section(aif["nodes"], aif["edges"], places, node) if places else [],
    }


def to_ova(aif: Mapping[str, Any]) -> dict[str, Any]:
    """The OVA3 form of an exported map (see the module docstring)."""
    plain = {key: value for key, value in aif.items() if key != "layout"}
    plain["schemefulfillments"] = _scheme_fulfillments(aif["nodes"], lambda x: x)
    plain.setdefault("descriptorfulfillments", [])
    plain["cqdescriptorfulfillments"] = []
    text, _ = _text(aif)
    return {"AIF": plain, "OVA": _ova_section(aif["nodes"], aif["edges"], _placed(aif), lambda x: x), "text": text}


def map_format(fmt: str) -> str:
    """``fmt`` if it is a map format argweb writes (:data:`FORMATS`: ``aif``, ``xaif``, ``ova``).

    Raises:
        ApiError: Another name.
    """
    if fmt not in FORMATS:
        raise ApiError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    return fmt


def convert(aif: Mapping[str, Any], fmt: str) -> dict[str, Any]:
    """An exported map in ``fmt``: ``aif`` (as it is, without layout), ``xaif`` or ``ova``.

    Raises:
        ApiError: Unknown format (callers check :data:`FORMATS` first).
    """
    if fmt == "aif":
        return {key: value for key, value in aif.items() if key != "layout"}
    if fmt == "xaif":
        return to_xaif(aif)
    if fmt == "ova":
        return to_ova(aif)
    raise ApiError(f"unknown map format {fmt!r}; expected one of {', '.join(FORMATS)}")
