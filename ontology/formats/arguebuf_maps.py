"""Argument maps of other tools read through ``arguebuf`` (PyPI, MIT): SADFace, ArgDown, Kialo, brat.

`arguebuf <https://github.com/recap-utr/arguebuf-python>`_ reads many argument-graph formats into
one model of atom nodes (claims and premises), scheme nodes (support, attack, rephrase,
preference) and edges. This reader hands it the file and maps its graph onto the ontology:

* every atom node -> a Proposition (AIF I-node), its text as arguebuf reads it;
* every scheme node -> an AIF S-node: support -> RA (Support), attack -> CA (Attack), rephrase ->
  MA (Rephrase), with AIF's default scheme name or arguebuf's scheme (``Expert Opinion``, ...);
  a preference (AIF PA) or a scheme node without a scheme is refused, argweb models neither;
* every edge into or out of a scheme node -> an ``AIF_EDGE``; an edge straight from one atom to
  another is dropped when a scheme node links the same two atoms (arguebuf's ArgDown reader adds
  both), and refused otherwise.

Each file is one Document of the corpus (``<corpus>:<file stem>``), its ``source`` the file and its
``name`` the title the file gives (Kialo's discussion title, SADFace's title); the corpus record
names the formats and the arguebuf version. Node ids are the file's own where it has them (SADFace,
ArgDown, Kialo); the nodes arguebuf invents ids for (brat units, ArgDown's scheme nodes) are
numbered in file order, so the same file always gives the same graph.

arguebuf skips what it cannot link (an edge to an unknown node) and reads some labels it does not
know as support (brat's ``contradicts``, ArgDown's ``contrary``); so every file is checked here
first, and such input is refused naming the file and the record, before arguebuf sees it.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ontology.errors import LoaderError
from ontology.formats.aif_write import DEFAULT_TEXT
from ontology.formats.common import corpus_bundle, decode_utf8, parse_json, read_bytes, require
from ontology.records import (
    CorpusBundle,
    DiscourseRecord,
    EdgeRecord,
    NodeRecord,
    PropositionRecord,
    build,
    make_id,
    relation_from_scheme,
    scheme_term,
)
from ontology.terms import RelType

DEFAULT_CORPUS = "arguebuf"
AIF_SCHEME = "qt30"
ARGUEBUF_FORMATS = ("sadface", "argdown", "kialo", "brat")
SUFFIXES = {".json": ("sadface", "argdown"), ".txt": ("kialo",), ".ann": ("brat",)}
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_KIALO_LINE = re.compile(r"^(1\.(?:\d+\.)+) (?:(Con|Pro): )?(.*)")
_KIALO_REF = re.compile(r"^-> See ((?:\d+\.)+)")
_ARGDOWN = {"support": "RA", "entails": "RA", "attack": "CA", "contradictory": "CA"}
_SADFACE = ("support", "attack", "rephrase")
_BRAT_UNITS = ("MajorClaim", "Claim", "Premise")
_BRAT_RELATIONS = ("supports", "attacks")


def detect(path: Path, text: str) -> str:
    """The format of a file: by its extension, then (JSON) by its keys.

    Raises:
        LoaderError: An extension or a JSON shape arguebuf is not asked to read here.
    """
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise LoaderError(
            f"{path}: cannot tell the format from the extension {suffix or '(none)'!r}; give --format "
            f"({', '.join(ARGUEBUF_FORMATS)}): .json SADFace or ArgDown, .txt Kialo, .ann brat"
        )
    if suffix != ".json":
        return SUFFIXES[suffix][0]
    data = _json(path, text)
    if isinstance(data, dict) and isinstance(data.get("map"), dict):
        return "argdown"
    if isinstance(data, dict) and "nodes" in data and "edges" in data:
        return "sadface"
    raise LoaderError(f"{path}: neither SADFace (nodes, edges) nor ArgDown JSON (map); give --format")


def _json(path: Path, text: str) -> Any:
    return parse_json(path, text)


# -- checks: what arguebuf would skip or misread is refused here, naming the record -----------------


def _unique(path: Path, kind: str, ids: list[str]) -> set[str]:
    seen: set[str] = set()
    for local in ids:
        if local in seen:
            raise LoaderError(f"{path}: {kind} {local}: duplicate id")
        seen.add(local)
    return seen


def _sadface(path: Path, text: str) -> tuple[dict[str, Any], str | None]:
    """The SADFace document as arguebuf reads it, and its title.

    argweb keeps no SADFace metadata but the title, so absent metadata is filled in rather than
    refused (arguebuf requires every field of ``metadata.core``).
    """
    data = _json(path, text)
    nodes = require(data, "nodes", list, str(path))
    edges = require(data, "edges", list, str(path))
    ids = []
    for k, node in enumerate(nodes):
        where = f"{path}: node #{k}"
        local = str(require(node, "id", str, where))
        where = f"{path}: node {local}"
        kind = require(node, "type", str, where)
        if kind == "atom":
            require(node, "text", str, where)
        elif kind == "scheme":
            name = require(node, "name", str, where)
            if name not in _SADFACE:
                raise LoaderError(f"{where}: scheme name {name!r} is not one of {', '.join(_SADFACE)}")
        else:
            raise LoaderError(f"{where}: node type {kind!r} is not 'atom' or 'scheme'")
        ids.append(local)
    known = _unique(path, "node", ids)
    for k, edge in enumerate(edges):
        where = f"{path}: edge #{k}"
        eid = str(require(edge, "id", str, where))
        for end in ("source_id", "target_id"):
            value = require(edge, end, str, f"{path}: edge {eid}")
            if value not in known:
                raise LoaderError(f"{path}: edge {eid}: {end} {value!r} is not a node")
    core = ((data.get("metadata") or {}).get("core") or {}) if isinstance(data.get("metadata"), dict) else {}
    title = core.get("title") if isinstance(core.get("title"), str) else None
    filled = {
        "nodes": [{"metadata": {}, **n} for n in nodes],
        "edges": edges,
        "metadata": {
            "core": {
                "analyst_name": "",
                "analyst_email": "",
                "created": "1970-01-01T00:00:00",
                "edited": "1970-01-01T00:00:00",
                "notes": "",
                "description": "",
                "title": title or "",
                "version": "",
            }
        },
    }
    return filled, title


def _argdown(path: Path, text: str) -> dict[str, Any]:
    data = _json(path, text)
    graph = require(data, "map", dict, str(path))
    nodes = require(graph, "nodes", list, f"{path}: map")
    edges = require(graph, "edges", list, f"{path}: map")
    ids = []
    for k, node in enumerate(nodes):
        local = str(require(node, "id", str, f"{path}: node #{k}"))
        require(node, "labelText", str, f"{path}: node {local}")
        ids.append(local)
    known = _unique(path, "node", ids)
    for k, edge in enumerate(edges):
        eid = str(require(edge, "id", str, f"{path}: edge #{k}"))
        where = f"{path}: edge {eid}"
        kind = require(edge, "relationType", str, where)
        if kind not in _ARGDOWN:
            raise LoaderError(
                f"{where}: relationType {kind!r} is not one of {', '.join(_ARGDOWN)} "
                "(arguebuf would read it as a support)"
            )
        for names in (("from", "source"), ("to", "target")):
            value = next((edge[n] for n in names if n in edge), None)
            if value is None:
                raise LoaderError(f"{where}: missing field {names[1]!r}")
            if value not in known:
                raise LoaderError(f"{where}: {names[1]} {value!r} is not a node")
    return data


def _kialo(path: Path, text: str) -> str | None:
    """Check a Kialo export line by line; returns the discussion title."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("Discussion Title: "):
        raise LoaderError(f"{path}: line 1: a Kialo export starts with 'Discussion Title: '")
    if len(lines) < 3 or lines[1].strip():
        raise LoaderError(f"{path}: line 2: a Kialo export has an empty line after the title")
    if not re.match(r"^1\. \S", lines[2]):
        raise LoaderError(f"{path}: line 3: the thesis '1. ...' must follow the title")
    known = {"1."}
    references: set[str] = set()
    for number, line in enumerate(lines[3:], start=4):
        found = _KIALO_LINE.match(line)
        if not found:
            continue  # the text of the claim above goes on
        local, body = found.group(1), found.group(3)
        where = f"{path}: line {number} ({local})"
        if local in known or local in references:
            raise LoaderError(f"{where}: duplicate claim number")
        parent = local[:-1].rsplit(".", 1)[0] + "."
        if parent in references:
            raise LoaderError(f"{where}: its parent {parent} is a reference ('-> See ...'), not a claim")
        if parent not in known:
            raise LoaderError(f"{where}: its parent {parent} does not come before it")
        ref = _KIALO_REF.match(body)
        if ref and ref.group(1) not in known:
            raise LoaderError(f"{where}: refers to {ref.group(1)}, which does not come before it")
        (references if ref else known).add(local)
    return lines[0][len("Discussion Title: ") :].strip() or None


def _brat(path: Path, text: str) -> None:
    """Check argument-annotated-essay brat lines (T units, A stances, R supports/attacks)."""
    units: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        key = fields[0]
        where = f"{path}: line {number} ({key})"
        parts = fields[1].split() if len(fields) > 1 else []
        if key.startswith("T"):
            if len(fields) < 3 or not parts:
                raise LoaderError(f"{where}: a unit line is 'T<n> TAB <label> <start> <end> TAB <text>'")
            if parts[0] not in _BRAT_UNITS:
                raise LoaderError(
                    f"{where}: unit label {parts[0]!r} is not one of {', '.join(_BRAT_UNITS)} "
                    "(Sci-Arg papers load with `argweb ingest sciarg`)"
                )
            units.add(key)
        elif key.startswith("A"):
            if len(parts) != 3 or parts[0] != "Stance" or parts[2] not in ("For", "Against"):
                raise LoaderError(f"{where}: a stance line is 'A<n> TAB Stance T<n> For|Against'")
            if parts[1] not in units:
                raise LoaderError(f"{where}: refers to {parts[1]}, which is not a unit before it")
        elif key.startswith("R"):
            if len(parts) != 3 or parts[0] not in _BRAT_RELATIONS:
                label = parts[0] if parts else ""
                raise LoaderError(
                    f"{where}: relation {label!r} is not one of {', '.join(_BRAT_RELATIONS)} "
                    "(arguebuf would read it as a support)"
                )
            for arg in parts[1:]:
                unit = arg.partition(":")[2]
                if unit not in units:
                    raise LoaderError(f"{where}: refers to {unit or arg!r}, which is not a unit before it")
        elif not key.startswith("#"):
            raise LoaderError(f"{where}: not a T, A or R line")


# -- conversion ------------------------------------------------------------------------------------


def _convert(path: Path, fmt: str, text: str) -> tuple[Any, str | None]:
    """arguebuf's graph of a checked file, and the title the file gives."""
    try:
        import arguebuf as ab
    except ImportError as e:  # pragma: no cover - a dependency of argweb
        raise LoaderError(f"{path}: reading {fmt} needs the arguebuf package ({e})") from e
    title: str | None = None
    readers: dict[str, Callable[[], Any]] = {
        "sadface": lambda: ab.load.sadface(data, path.stem),
        "argdown": lambda: ab.load.argdown(data, path.stem),
        "kialo": lambda: ab.load.kialo(io.StringIO(text), path.stem),
        "brat": lambda: ab.load.brat(io.StringIO(text), path.stem),
    }
    data: Any = None
    if fmt == "sadface":
        data, title = _sadface(path, text)
    elif fmt == "argdown":
        data = _argdown(path, text)
    elif fmt == "kialo":
        title = _kialo(path, text)
    elif fmt == "brat":
        _brat(path, text)
    try:
        return readers[fmt](), title
    except Exception as e:  # arguebuf raises whatever its parser meets (KeyError, AssertionError, ...)
        raise LoaderError(f"{path}: arguebuf could not read it as {fmt}: {type(e).__name__}: {e}") from e


def _local_ids(graph: Any, text: str) -> dict[str, str]:
    """arguebuf node id -> local id: the file's own id, or (ids arguebuf invented) a number in file order."""
    out: dict[str, str] = {}
    counts = {"a": 0, "s": 0}
    for node_id in graph.nodes:
        prefix = "a" if node_id in graph.atom_nodes else "s"
        if _UUID.match(node_id) and node_id not in text:
            out[node_id] = f"{prefix}{counts[prefix]}"
            counts[prefix] += 1
        else:
            out[node_id] = node_id
    return out


def _scheme_of(node: Any, where: str) -> tuple[str, str]:
    """(AIF type, scheme name) of an arguebuf scheme node.

    Raises:
        LoaderError: A preference or a node without a scheme.
    """
    from arguebuf.model.scheme import scheme2aif

    scheme = node.scheme
    kind = scheme2aif.get(type(scheme)) if scheme is not None else None
    if kind not in ("RA", "CA", "MA"):
        what = "a preference (AIF PA)" if kind == "PA" else "a scheme node without a scheme"
        raise LoaderError(f"{where}: {what}, which argweb does not model")
    name = DEFAULT_TEXT[kind] if scheme.value == "Default" else str(scheme.value)
    return kind, name


def _records(path: Path, fmt: str, graph: Any, title: str | None, corpus: str, text: str) -> list[Any]:
    """The Document, its propositions and relation nodes, and their AIF edges."""
    stem = path.stem
    doc_id = make_id(corpus, stem)
    out: list[Any] = [
        build(
            DiscourseRecord,
            str(path),
            id=doc_id,
            corpus=corpus,
            kind="Document",
            local_id=stem,
            name=title,
            source=path.name,
        )
    ]
    ids = _local_ids(graph, text)
    linked = {e.source.id for e in graph.edges.values()} | {e.target.id for e in graph.edges.values()}
    proposition = scheme_term(AIF_SCHEME, "I").iri
    for pos, (node_id, node) in enumerate(graph.nodes.items()):
        local = ids[node_id]
        where = f"{path}: {'claim' if node_id in graph.atom_nodes else 'scheme node'} {local}"
        common = {"id": make_id(corpus, stem, local), "corpus": corpus, "discourse": doc_id, "local_id": local}
        if node_id in graph.atom_nodes:
            said = node.plain_text.strip()
            if fmt == "brat":
                said = said.removeprefix(". ")  # arguebuf joins MajorClaim spans with ". ", also before the first
            if not said and node_id not in linked:
                continue  # arguebuf's empty major-claim placeholder (a brat file without MajorClaim)
            out.append(build(PropositionRecord, where, scheme_class=proposition, position=pos, text=said, **common))
        else:
            kind, name = _scheme_of(node, where)
            out.append(
                relation_from_scheme(
                    AIF_SCHEME, kind, where, scheme_label=name, aif_type=kind, position=pos, text=name, **common
                )
            )
    for k, edge in enumerate(graph.edges.values()):
        src, dst = edge.source.id, edge.target.id
        if src in graph.atom_nodes and dst in graph.atom_nodes:
            if graph.scheme_between(edge.source, edge.target) is not None:
                continue  # the same link as the scheme node between them (arguebuf's ArgDown reading)
            raise LoaderError(f"{path}: edge {edge.id}: links two claims without a scheme node between them")
        out.append(
            EdgeRecord(
                type=RelType.AIF_EDGE,
                source=make_id(corpus, stem, ids[src]),
                target=make_id(corpus, stem, ids[dst]),
                corpus=corpus,
                id=make_id(corpus, stem, "e", k),
            )
        )
    return out


def load_arguebuf(paths: list[Path], corpus: str = DEFAULT_CORPUS, variant: str | None = None) -> CorpusBundle:
    """Load SADFace, ArgDown, Kialo and brat files through arguebuf into one bundle.

    Args:
        paths: The files.
        corpus: Corpus id for the graph.
        variant: The format of every file (one of :data:`ARGUEBUF_FORMATS`); None: told per file
            by its extension and, for JSON, its keys.

    Raises:
        LoaderError: Unknown format, or a malformed file (the message names the file and the record).
    """
    if variant is not None and variant not in ARGUEBUF_FORMATS:
        raise LoaderError(f"unknown arguebuf format {variant!r}; expected one of {', '.join(ARGUEBUF_FORMATS)}")
    from importlib.metadata import version

    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    formats: list[str] = []
    # A brat essay's text file sits beside its .ann; arguebuf reads the units' text from the .ann.
    annotated = {p.with_suffix("") for p in paths if p.suffix == ".ann"}
    paths = [p for p in paths if not (p.suffix == ".txt" and p.with_suffix("") in annotated)]
    for path in paths:
        text = decode_utf8(path, read_bytes(path))
        fmt = variant or detect(path, text)
        graph, title = _convert(path, fmt, text)
        records = _records(path, fmt, graph, title, corpus, text)
        if not any(isinstance(record, PropositionRecord) for record in records):
            # Its Document record alone: a file that loads nothing is refused, not recorded.
            raise LoaderError(f"{path}: no claim in the {fmt} map; a file that loads nothing is refused")
        for record in records:
            (edges if isinstance(record, EdgeRecord) else nodes).append(record)
        if fmt not in formats:
            formats.append(fmt)
    name = f"{', '.join(formats) or 'no'} argument maps read with arguebuf {version('arguebuf')}"
    origin = f"{len(paths)} file(s) read with arguebuf from {paths[0].parent}" if paths else "no files"
    return corpus_bundle(corpus, name, paths, nodes, edges, origin)
