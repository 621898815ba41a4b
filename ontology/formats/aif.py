"""AIF JSON argument maps (QT30 / DialAM-2024, AIFdb exports).

A map is ``{"nodes": [...], "edges": [...], "locutions": [...]}``. Every node is kept with its
AIF type (L -> Locution, I -> Proposition, RA/CA/MA/TA/YA -> reified relations), every edge as an
``AIF_EDGE`` and every locution's speaker as a Speaker, so that a map exported again equals the
original up to ids. Node ids are scoped by map (the same AIFdb node can occur in several maps).

Speakers are named by the map's participants (xAIF, OVA3) or else from the locution text
(``Fiona Bruce : ...``): one Speaker per name in the corpus, with the
``personID`` values of its locutions kept on it (``person_ids``). AIFdb person ids do not name
people in QT30: one id is several speakers' (an annotation slot) and one speaker has several ids.
A locution nobody names is spoken by no Speaker; its person id stays in its stored locutions.

:func:`read_map` is the one validation of an AIF map: every door that takes a map (``argweb
corpus ingest aif|xaif|ova``, ``POST /aif``, the bulk load and the oAMF modules) goes through it,
so a map refused at one is refused at all, with the file and the record named. Every node's
``text`` is a string; a ``timestamp`` is a string or absent; a file whose map holds no node is
refused (it would load nothing). What gold maps hold and AIF allows is kept and reported instead
(:func:`read_map`'s notes): relation nodes without a premise or a conclusion, an edge from a node
to itself (seven L -> L edges in the DialAM-2024 training maps) and a locution entry of a node that
is not an L-node (five in the same maps; not stored, as no locution holds it).
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from ontology.aiftext import speaker_of
from ontology.errors import LoaderError
from ontology.formats.common import (
    MAX_JSON_DEPTH,
    REMARK,
    corpus_bundle,
    json_depth_exceeds,
    named_as,
    read_json,
    require,
)
from ontology.records import (
    CorpusBundle,
    DiscourseRecord,
    EdgeRecord,
    LocutionRecord,
    NodeRecord,
    PropositionRecord,
    SpeakerRecord,
    build,
    check_fields,
    make_id,
    relation_from_scheme,
    scheme_term,
)
from ontology.terms import RelType

AifMap: TypeAlias = dict[str, Any]
"""An argument map as AIF JSON (AIFdb's ``{"nodes", "edges", "locutions", "participants"}``), or
the xAIF or OVA3 form argweb writes of it: an outside format, kept as the JSON it is."""

AIF_SCHEME = "qt30"
S_TYPES = ("RA", "CA", "MA", "TA", "YA")


@dataclass
class MapSpeaker:
    """A speaker named by the maps of one load so far, with the person ids of their locutions."""

    name: str
    where: str
    person_ids: set[str] = field(default_factory=set)

    def record(self, sid: str, corpus: str) -> SpeakerRecord:
        """The Speaker record (person ids in number order, the same however the maps are read)."""
        ids = sorted(self.person_ids, key=lambda p: (0, int(p), p) if p.isdigit() else (1, 0, p))
        return build(SpeakerRecord, self.where, id=sid, corpus=corpus, name=self.name, person_ids=ids)


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _with_ids(path: Path, entries: list[Any], key: str, kind: str) -> Iterator[tuple[int, Any, str, str]]:
    """Each entry with its position, its id (field ``key``, unique in the file) and where it stands."""
    seen: dict[str, int] = {}
    for pos, entry in enumerate(entries):
        local = str(require(entry, key, (str, int), f"{path}: {kind} #{pos}"))
        # Checked before the id names the record in any message (it may hold NUL or a lone surrogate).
        check_fields([(key, local)], f"{path}: {kind} #{pos}")
        where = f"{path}: {kind} {local}"
        if local in seen:
            raise LoaderError(f"{where}: duplicate {key} ({kind}s #{seen[local]} and #{pos})")
        seen[local] = pos
        yield pos, entry, local, where


Layout = Mapping[str, tuple[float, float]]
"""Where a mapping tool drew each node: local node id -> (x, y)."""


def _list_field(data: Any, key: str, where: str, required: bool) -> list[Any]:
    """``data[key]`` as a list; absent or null is an empty list unless ``required``."""
    if required:
        return list(require(data, key, list, where))
    value = data.get(key) if isinstance(data, dict) else None
    if value is None:
        return []
    if not isinstance(value, list):
        raise LoaderError(f"{where}: field {key!r} has type {type(value).__name__}")
    return value


def _participants(path: Path, raw: list[Any]) -> dict[str, str]:
    """personID -> "firstname surname" of the map's participants (xAIF, OVA3, AIFdb exports); a
    participant without a name maps to ``""``."""
    names: dict[str, str] = {}
    for k, person in enumerate(raw):
        where = f"{path}: participant #{k}"
        pid = str(require(person, "participantID", (str, int), where))
        name = " ".join(str(person.get(part) or "").strip() for part in ("firstname", "surname")).strip()
        if name or pid not in names:
            names[pid] = names.get(pid) or name
    return names


def _node_fields(node: Any, where: str) -> tuple[str, str, str | None]:
    """A node's type, text and timestamp, checked: the text a string, the timestamp a string or absent.

    A list or a number would be stored as its Python spelling (``"['a', 'b']"``, ``"inf"``), and a
    node without text is no statement at all: each is refused, naming the node.
    """
    ntype = require(node, "type", str, where)
    text = require(node, "text", str, where)
    stamp = node.get("timestamp")
    if stamp is not None and not isinstance(stamp, str):
        raise LoaderError(f"{where}: field 'timestamp' is {stamp!r} ({type(stamp).__name__}); a timestamp is a string")
    return ntype, text, stamp


def _gaps(path: Path, kinds: Mapping[str, str], ins: Counter[str], outs: Counter[str]) -> list[str]:
    """The relation nodes of a map without one of their ends, one line each (file and node named)."""
    notes = []
    for local, kind in kinds.items():
        missing = [end for end, count in (("premise", ins[local]), ("conclusion", outs[local])) if count == 0]
        if missing:
            ends = " and ".join(
                f"no {end} ({'no edge into it' if end == 'premise' else 'no edge out of it'})" for end in missing
            )
            notes.append(f"{path}: {kind} node {local} has {ends}; stored as it is")
    return notes


def read_map(
    data: Any,
    path: Path,
    corpus: str,
    nodes: list[NodeRecord],
    edges: list[EdgeRecord],
    speakers: dict[str, MapSpeaker],
    *,
    layout: Layout | None = None,
    lenient: bool = False,
) -> list[str]:
    """Append the records of one parsed AIF map to ``nodes`` / ``edges`` / ``speakers``.

    Args:
        data: The map: ``{"nodes", "edges", "locutions"?, "participants"?}``.
        path: The file it came from (names the dialogue and every error).
        corpus: Corpus id.
        nodes: Receives the node records.
        edges: Receives the AIF edges.
        speakers: Speakers by id, shared by the maps of one load (the records are made at its end).
        layout: Where a mapping tool drew the nodes (OVA3), by local node id.
        lenient: xAIF's rules: ``edges``, ``locutions`` and ``participants`` may be absent or null.

    Returns:
        What the map holds that gold holds too, one line each naming the file and the record:
        relation nodes (RA, CA, MA, TA, YA) without a premise or a conclusion and edges from a node
        to itself (stored as they are), locution entries of nodes that are not L-nodes (not stored).

    Raises:
        LoaderError: Malformed map (among others: a node's ``text`` missing or not a string, a
            ``timestamp`` that is not a string, a locution's ``personID`` not among the listed
            participants); the message names the file and the node or edge.
    """
    where = f"{path}"
    raw_nodes = _list_field(data, "nodes", where, required=True)
    raw_edges = _list_field(data, "edges", where, required=not lenient)
    raw_locs = _list_field(data, "locutions", where, required=False)
    persons = _participants(path, _list_field(data, "participants", where, required=False))
    # OVA3 and AIFdb name a relation node's scheme in "schemefulfillments" rather than on the node.
    fulfilled: dict[str, str] = {}
    for k, entry in enumerate(_list_field(data, "schemefulfillments", where, required=False)):
        swhere = f"{path}: schemefulfillment #{k}"
        node_id = str(require(entry, "nodeID", (str, int), swhere))
        fulfilled.setdefault(node_id, str(require(entry, "schemeID", (str, int), swhere)))
    notes: list[str] = []
    stem = path.stem
    dlg_id = make_id(corpus, stem)
    nodes.append(
        build(DiscourseRecord, where, id=dlg_id, corpus=corpus, kind="Dialogue", local_id=stem, source=path.name)
    )

    locs: dict[str, list[dict[str, Any]]] = {}
    for k, loc in enumerate(raw_locs):
        lwhere = f"{path}: locution #{k}"
        node_id = str(require(loc, "nodeID", (str, int), lwhere))
        check_fields([("nodeID", node_id)], lwhere)
        person = loc.get("personID")
        if persons and person is not None and str(person) not in persons:
            raise LoaderError(f"{lwhere} (node {node_id}): personID {person!r} is not a participant of the map")
        locs.setdefault(node_id, []).append({key: value for key, value in loc.items() if key != "nodeID"})

    # Speakers from the L-node texts of the whole map, however the colon is spaced; an annotator's
    # copy ("Anna: Fiona Bruce : ...") is spoken by the speaker of the locution it copies.
    l_nodes = [n for n in raw_nodes if isinstance(n, dict) and n.get("type") == "L"]
    l_speakers = speaker_of([n.get("text") if isinstance(n.get("text"), str) else None for n in l_nodes])
    speaker_by_node = {id(n): spk for n, spk in zip(l_nodes, l_speakers, strict=True)}

    local_ids: set[str] = set()
    types: dict[str, str] = {}
    relation_kinds: dict[str, str] = {}
    for pos, node, local, nwhere in _with_ids(path, raw_nodes, "nodeID", "node"):
        local_ids.add(local)
        ntype, text, stamp = _node_fields(node, nwhere)
        types[local] = ntype
        common: dict[str, Any] = {
            "id": make_id(corpus, stem, local),
            "corpus": corpus,
            "discourse": dlg_id,
            "local_id": local,
            "position": pos,
            "text": text,
            "timestamp": stamp,
        }
        if layout and local in layout:
            common["layout_x"], common["layout_y"] = layout[local]
        if ntype == "L":
            entries = locs.get(local)
            extra: dict[str, Any] = {}
            speaker = speaker_by_node[id(node)]
            if entries:
                person = entries[0].get("personID")
                # A participant's full name (xAIF, OVA3) names the Speaker; else the text's.
                listed = (persons.get(str(person)) or None) if person is not None else None
                name = listed or speaker
                speaker = speaker or listed
                if name is not None:
                    sid = make_id(corpus, "speaker", name)
                    named = speakers.setdefault(sid, MapSpeaker(name, nwhere))
                    named.person_ids.update(str(e["personID"]) for e in entries if e.get("personID") is not None)
                    extra["speaker_id"] = sid
                extra["aif_locutions"] = json.dumps(entries, ensure_ascii=False)
            nodes.append(build(LocutionRecord, nwhere, speaker=speaker, **common, **extra))
        elif ntype == "I":
            nodes.append(build(PropositionRecord, nwhere, scheme_class=scheme_term(AIF_SCHEME, "I").iri, **common))
        elif ntype in S_TYPES:
            relation_kinds[local] = ntype
            nodes.append(
                relation_from_scheme(
                    AIF_SCHEME,
                    ntype,
                    nwhere,
                    scheme_label=_opt_str(node.get("scheme")),
                    aif_type=ntype,
                    scheme_id=_opt_str(node.get("schemeID")) or fulfilled.get(local),
                    **common,
                )
            )
        else:
            raise LoaderError(f"{nwhere}: unknown AIF node type {ntype!r}; expected I, L, {', '.join(S_TYPES)}")
    missing_locs = set(locs) - local_ids
    if missing_locs:
        raise LoaderError(f"{path}: locution for missing node {sorted(missing_locs)[0]!r}")
    notes += [
        f"{REMARK}{path}: locution of {types[local]} node {local}, which is not an L-node; not stored"
        for local in sorted(locs)
        if types[local] != "L"
    ]
    if layout:
        strays = sorted(set(layout) - local_ids)
        if strays:
            raise LoaderError(f"{path}: layout of node {strays[0]!r}, which is not a node of the map")

    ins: Counter[str] = Counter()
    outs: Counter[str] = Counter()
    ends: dict[tuple[str, str], str] = {}
    for _k, edge, eid, ewhere in _with_ids(path, raw_edges, "edgeID", "edge"):
        src = str(require(edge, "fromID", (str, int), ewhere))
        dst = str(require(edge, "toID", (str, int), ewhere))
        for end in (src, dst):
            if end not in local_ids:
                raise LoaderError(f"{ewhere}: refers to missing node {end!r}")
        if src == dst:
            notes.append(f"{REMARK}{ewhere}: links {types[src]} node {src} to itself; stored as it is")
        outs[src] += 1
        ins[dst] += 1
        if (src, dst) in ends:
            # The graph holds one edge per pair of nodes: the second id would be lost.
            raise LoaderError(f"{ewhere}: links {src} -> {dst} like edge {ends[(src, dst)]}; an edge is given once")
        ends[(src, dst)] = eid
        edges.append(
            EdgeRecord(
                type=RelType.AIF_EDGE,
                source=make_id(corpus, stem, src),
                target=make_id(corpus, stem, dst),
                corpus=corpus,
                id=make_id(corpus, stem, "e", eid),
            )
        )
    return _gaps(path, relation_kinds, ins, outs) + notes


def check_map(data: Any, where: str, *, lenient: bool = False) -> list[str]:
    """Validate one parsed AIF map by reading it (:func:`read_map`), for a door that stores nothing.

    The oAMF modules answer with a changed copy of the map they are sent; they check it here, so a
    map they take is one that ``argweb corpus ingest`` and ``POST /aif`` take too.

    Args:
        data: The map.
        where: What names the map in messages (``xAIF document: AIF``).
        lenient: xAIF's rules (see :func:`read_map`).

    Returns:
        The notes :func:`read_map` returns.

    Raises:
        LoaderError: Malformed map; the message starts with ``where`` and names the record.
    """
    return read_map(data, Path(where), "check", [], [], {}, lenient=lenient)


def load_aif_map(
    path: Path, corpus: str, nodes: list[NodeRecord], edges: list[EdgeRecord], speakers: dict[str, MapSpeaker]
) -> list[str]:
    """Append the records of one map file to ``nodes`` / ``edges`` / ``speakers``; see :func:`read_map`."""
    return read_map(read_json(path), path, corpus, nodes, edges, speakers)


def load_aif(paths: list[Path], corpus: str = AIF_SCHEME) -> CorpusBundle:
    """Load AIF JSON map files into one bundle.

    Args:
        paths: Map files.
        corpus: Corpus id for the graph.

    Raises:
        LoaderError: Malformed map; the message names the file and the node or edge.
    """
    return load_maps(paths, corpus, load_aif_map, "AIF argument maps (QT30 / DialAM-2024)", "AIF map(s)")


def load_map_object(aif: AifMap, corpus: str, name: str) -> CorpusBundle:
    """Load one map given as JSON (a request body) as the file ``<name>.json`` would load.

    The map goes through the AIF reader alone, with the same checks as a file: what one door
    refuses, the other refuses too. Its errors name it ``AIF map <name>``.

    Raises:
        LoaderError: The map is nested too deeply or malformed (names the node or edge).
    """
    if json_depth_exceeds(aif):
        raise LoaderError(f"AIF map {name}: arrays or objects nested more than {MAX_JSON_DEPTH} levels deep")
    with tempfile.TemporaryDirectory(prefix="argweb-aif-") as tmp:
        path = Path(tmp) / f"{name}.json"
        # ASCII escapes: a lone surrogate in the map stays an escape here, and the loader names it.
        path.write_text(json.dumps(aif), encoding="utf-8")
        with named_as({path: f"AIF map {name}"}):
            return load_aif([path], corpus)


MapReader = Callable[[Path, str, list[NodeRecord], list[EdgeRecord], dict[str, MapSpeaker]], list[str]]
"""Reads one map file into the node, edge and speaker lists of a load; returns its notes (:func:`read_map`)."""


def load_maps(paths: list[Path], corpus: str, read: MapReader, name: str, what: str) -> CorpusBundle:
    """Load map files with ``read`` into one bundle (speakers shared by the maps, notes gathered).

    Args:
        paths: Map files.
        corpus: Corpus id for the graph.
        read: The reader of one file (:func:`load_aif_map`, the xAIF / OVA3 reader).
        name: The corpus record's name.
        what: What the files are, for error messages (``AIF map(s)``).

    Raises:
        LoaderError: Malformed map; the message names the file and the record.
    """
    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    speakers: dict[str, MapSpeaker] = {}
    notes: list[str] = []
    maps: dict[str, Path] = {}
    for path in paths:
        # A map is the dialogue named by its file name: two files of one name would be one dialogue.
        if path.stem in maps:
            raise LoaderError(
                f"{path}: a map named {path.stem!r} is also given as {maps[path.stem]}; "
                "map names (file names) must differ within one load"
            )
        maps[path.stem] = path
    for path in paths:
        notes += read(path, corpus, nodes, edges, speakers)
    # A load of maps that hold no nodes at all loads nothing and is refused; an empty map beside
    # others is an empty dialogue (DialAM's maps are written back as they came, empty ones too).
    if paths and len(nodes) <= len(paths):  # each map's Dialogue record alone
        if len(paths) == 1:
            raise LoaderError(f"{paths[0]}: the map holds no nodes; a file that loads nothing is refused")
        raise LoaderError(f"{paths[0].parent}: none of the {len(paths)} maps holds a node; nothing to load is refused")
    nodes.extend(speaker.record(sid, corpus) for sid, speaker in speakers.items())
    origin = f"{len(paths)} {what} from {paths[0].parent}" if paths else "no files"
    return corpus_bundle(corpus, name, paths, nodes, edges, origin, notes=notes)
