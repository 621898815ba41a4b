"""xAIF (oAMF) and OVA3 argument maps: AIF inside a wrapper that also carries the text and OVA's layout.

Three forms are read, told apart by their keys (a file need not say which it is):

* **xAIF**, what oAMF modules exchange: ``{"AIF": {nodes, edges, locutions, participants,
  schemefulfillments, ...}, "text": {"txt": ...} | "...", "dialog": bool, "ova": [...] | {...}}``,
  integer ids; partial graphs are allowed (``edges``, ``locutions``, ``participants`` may be absent
  or null, a relation node may lack its premise or its conclusion);
* **OVA3**, what OVA saves: ``{"AIF": {...}, "OVA": {"firstname", "surname", "url", "nodes":
  [{"nodeID", "visible", "x", "y", "timestamp"}], "edges": [...]}, "text": "..."}``;
* plain **AIF** (AIFdb, ``{"nodes", "edges", "locutions"}``), string ids.

The map itself is read by the AIF reader (:func:`ontology.formats.aif.read_map`), so a map is
the same graph in every wrapper; the layout (``x``, ``y`` per node, from ``OVA`` or ``ova``) is
kept on the nodes (``layout_x`` / ``layout_y``). Relation nodes without all their ends are stored as
they are and reported (:attr:`~ontology.records.CorpusBundle.notes`); an edge to a node that is not
in the map is still an error.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ontology.errors import LoaderError
from ontology.formats.aif import Layout, MapSpeaker, load_maps, read_map
from ontology.formats.common import read_json, require
from ontology.records import CorpusBundle, EdgeRecord, NodeRecord

DEFAULT_CORPUS = "xaif"


def map_form(data: Any) -> str:
    """``xaif``, ``ova`` (OVA3) or ``aif`` (plain AIF), by the keys of a parsed file; ``""`` for none."""
    if isinstance(data, dict) and "AIF" in data:
        return "ova" if isinstance(data.get("OVA"), dict) else "xaif"
    if isinstance(data, dict) and "nodes" in data:
        return "aif"
    return ""


def _coordinate(value: Any, where: str, axis: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise LoaderError(f"{where}: field {axis!r} has type {type(value).__name__}")
    try:
        number = float(value)
    except ValueError as e:
        raise LoaderError(f"{where}: field {axis!r} is not a number: {value!r}") from e
    if not math.isfinite(number):
        raise LoaderError(f"{where}: field {axis!r} is not a finite number: {value!r}")
    return number


def read_layout(path: Path, data: dict[str, Any]) -> Layout:
    """The node positions of an OVA3 (``OVA``) or xAIF (``ova``) section: local node id -> (x, y).

    Nodes without ``x``/``y`` (an xAIF ``ova`` list of anything else) have no position.

    Raises:
        LoaderError: A layout entry without ``nodeID``, or a coordinate that is not a number.
    """
    section = data.get("OVA") if isinstance(data.get("OVA"), dict) else data.get("ova")
    entries = section.get("nodes") if isinstance(section, dict) else section
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise LoaderError(f"{path}: OVA field 'nodes' has type {type(entries).__name__}")
    layout: dict[str, tuple[float, float]] = {}
    for k, entry in enumerate(entries):
        where = f"{path}: OVA node #{k}"
        if not isinstance(entry, dict) or "x" not in entry or "y" not in entry:
            continue
        local = str(require(entry, "nodeID", (str, int), where))
        where = f"{path}: OVA node {local}"
        if local in layout:
            raise LoaderError(f"{where}: laid out twice")
        layout[local] = (_coordinate(entry["x"], where, "x"), _coordinate(entry["y"], where, "y"))
    return layout


def load_xaif_map(
    path: Path, corpus: str, nodes: list[NodeRecord], edges: list[EdgeRecord], speakers: dict[str, MapSpeaker]
) -> list[str]:
    """Append the records of one xAIF / OVA3 / AIF file; returns what the map leaves out (see the module docstring).

    Raises:
        LoaderError: Not JSON, none of the three forms, or a malformed map or layout (file and record named).
    """
    data = read_json(path)
    form = map_form(data)
    if not form:
        raise LoaderError(
            f"{path}: neither an xAIF / OVA3 file (an object with 'AIF') nor an AIF map (an object with 'nodes')"
        )
    if form == "aif":
        return read_map(data, path, corpus, nodes, edges, speakers)
    aif = require(data, "AIF", dict, str(path))
    return read_map(aif, path, corpus, nodes, edges, speakers, layout=read_layout(path, data), lenient=True)


def load_xaif(paths: list[Path], corpus: str = DEFAULT_CORPUS) -> CorpusBundle:
    """Load xAIF, OVA3 and AIF map files (told apart per file by their keys) into one bundle.

    Args:
        paths: Map files.
        corpus: Corpus id for the graph.

    Raises:
        LoaderError: Malformed file; the message names the file and the node, edge or layout entry.
    """
    return load_maps(paths, corpus, load_xaif_map, "xAIF / OVA3 argument maps", "xAIF / OVA3 map(s)")
