"""AIF JSON out: the DialAM-2024 test-input form and maps with predicted RA / CA / MA relations.

:func:`strip_relations` turns any AIF map into the official task-A input form: L, I and TA nodes
(and every other node type except YA, RA, CA, MA), with all edges that touch a dropped node
removed; every kept node, edge and locution stays byte-for-byte the same JSON value, and keys
beyond ``nodes`` / ``edges`` / ``locutions`` are kept. :func:`add_relations` appends predicted
S-nodes with one edge from each premise and one to the conclusion, under fresh ids, which is
what the official scorer reads.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ontology.errors import LoaderError
from ontology.formats.common import FileRelation, read_json, require

DROPPED_TYPES = frozenset({"YA", "RA", "CA", "MA"})
# AIFdb's default scheme names of the three relation node types.
DEFAULT_TEXT = {"RA": "Default Inference", "CA": "Default Conflict", "MA": "Default Rephrase"}


def read_map(path: Path) -> dict[str, Any]:
    """Read and check an AIF map (``nodes`` and ``edges`` lists, every edge between known nodes).

    Raises:
        LoaderError: Not JSON, not a map, a node without id or type, a dangling edge; the message
            names the file and the record.
    """
    data = read_json(path)
    check_map(data, str(path))
    return data


def check_map(data: Any, where: str) -> None:
    """Check a parsed AIF map: ``nodes`` and ``edges`` lists, ids and types, every edge between known nodes.

    Raises:
        LoaderError: Not a map, a node without id or type, a dangling edge; the message starts with ``where``.
    """
    nodes = require(data, "nodes", list, where)
    edges = require(data, "edges", list, where)
    ids = set()
    for k, node in enumerate(nodes):
        ids.add(str(require(node, "nodeID", (str, int), f"{where}: node #{k}")))
        require(node, "type", str, f"{where}: node #{k}")
    for k, edge in enumerate(edges):
        ewhere = f"{where}: edge #{k}"
        for end in ("fromID", "toID"):
            if str(require(edge, end, (str, int), ewhere)) not in ids:
                raise LoaderError(f"{ewhere}: {end} {edge[end]!r} is not a node of the map")


def strip_relations(data: dict[str, Any]) -> dict[str, Any]:
    """The map in test-input form: YA/RA/CA/MA nodes and the edges touching them removed."""
    dropped = {str(n["nodeID"]) for n in data["nodes"] if n.get("type") in DROPPED_TYPES}
    out = dict(data)
    out["nodes"] = [n for n in data["nodes"] if str(n["nodeID"]) not in dropped]
    out["edges"] = [e for e in data["edges"] if str(e["fromID"]) not in dropped and str(e["toID"]) not in dropped]
    return out


def fresh_ids(existing: list[Any], prefix: str, count: int) -> list[str | int]:
    """``count`` ids unused in ``existing``: integers above the largest when every id is an integer
    (xAIF's form), else ``<prefix><k>`` strings."""
    if existing and all(isinstance(x, int) and not isinstance(x, bool) for x in existing):
        top = max(existing)
        return list(range(top + 1, top + 1 + count))
    taken = {str(x) for x in existing}
    out: list[str | int] = []
    k = 0
    while len(out) < count:
        candidate = f"{prefix}{k}"
        if candidate not in taken:
            out.append(candidate)
            taken.add(candidate)
        k += 1
    return out


def add_relations(data: dict[str, Any], relations: Iterable[FileRelation], where: str = "map") -> dict[str, Any]:
    """A copy of ``data`` with one S-node per relation and its two edges appended.

    Raises:
        LoaderError: A relation names a node that is not an I-node of the map, or an unknown type.
    """
    rels = list(relations)
    inodes = {str(n["nodeID"]) for n in data["nodes"] if n.get("type") == "I"}
    for rel in rels:
        if rel.type not in DEFAULT_TEXT:
            raise LoaderError(f"{where}: relation type {rel.type!r} is not one of {sorted(DEFAULT_TEXT)}")
        for end in (rel.source, rel.target):
            if end not in inodes:
                raise LoaderError(f"{where}: predicted relation refers to {end!r}, which is not an I-node of the map")
    node_ids = fresh_ids([n["nodeID"] for n in data["nodes"]], "pred_s", len(rels))
    edge_ids = fresh_ids([e.get("edgeID") for e in data["edges"]], "pred_e", 2 * len(rels))
    if not data["edges"] and node_ids and isinstance(node_ids[0], int):
        # A map without edges still says by its node ids that its ids are integers.
        edge_ids = list(range(1, 2 * len(rels) + 1))
    # Relations name nodes by their id as text; the edges use the id as the map wrote it (an
    # integer id stays an integer), so the output lines up with the input node for node.
    as_written = {str(n["nodeID"]): n["nodeID"] for n in data["nodes"]}
    nodes = list(data["nodes"])
    edges = list(data["edges"])
    for k, rel in enumerate(rels):
        src, dst = as_written[rel.source], as_written[rel.target]
        nodes.append({"nodeID": node_ids[k], "text": DEFAULT_TEXT[rel.type], "type": rel.type})
        edges.append({"edgeID": edge_ids[2 * k], "fromID": src, "toID": node_ids[k], "formEdgeID": None})
        edges.append({"edgeID": edge_ids[2 * k + 1], "fromID": node_ids[k], "toID": dst, "formEdgeID": None})
    out = dict(data)
    out["nodes"] = nodes
    out["edges"] = edges
    return out


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON through a temporary file and a rename (readers never see half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=1)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_maps(out_dir: Path, maps: Sequence[tuple[str, dict[str, Any]]]) -> list[Path]:
    """Write ``(file name, map)`` pairs into ``out_dir``; all maps are built before the first write."""
    paths = []
    for name, data in maps:
        path = out_dir / name
        write_json_atomic(path, data)
        paths.append(path)
    return paths
