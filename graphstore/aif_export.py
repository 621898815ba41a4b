"""Export dialogues and documents of the graph as AIF JSON argument maps.

An exported map is ``{"nodes", "edges", "locutions", "participants", "schemefulfillments",
"descriptorfulfillments"}`` as AIFdb writes it:

* node ``{"nodeID", "text", "type", "timestamp"?, "scheme"?, "schemeID"?}`` -- Locutions become
  ``L``, Propositions ``I``, and the reified relations their AIF S-node: Support ``RA``, Attack
  ``CA``, Rephrase ``MA``, Transition/DiscourseRelation ``TA`` and Illocution ``YA``; a relation
  loaded from an AIF map keeps its original type, text, scheme and schemeID.
* edge ``{"edgeID", "fromID", "toID", "formEdgeID": null}`` -- every ``AIF_EDGE`` between exported
  nodes.
* locution ``{"nodeID", "personID", "timestamp", "start", "end", "source"}`` -- for maps ingested
  from AIF the stored originals (``aif_locutions``); for other corpora one per spoken L-node,
  generated from its Speaker.
* participant ``{"participantID", "firstname", "surname"}`` -- one per person of the locutions.

How each corpus comes out:

* QT30 / DialAM maps: the original map, node and edge ids included (they are unique in a map), so
  that an exported map lines up with AIFdb; nodes and edges the map did not have (predicted
  S-nodes and their edges) get fresh ids beside them (``pred_s0``, ``pred_e0`` ...).
* Molweni / STAC: EDUs as L-nodes, each discourse relation as a TA node between them whose
  ``scheme`` (and text) is the unified SDRT sense (e.g. ``QuestionAnswerPair``).
* M-Arg: sentences as L- and I-nodes, Support/Attack pairs as RA/CA between the I-nodes.
* ContextDeP: the Rephrase between guest and host utterance as an MA node.
* Sci-Arg: argument components as I-nodes with RA (supports), CA (contradicts), MA
  (semantically_same).

Relations whose endpoints are L-nodes but whose AIF type needs propositions (RA/CA/MA not loaded
from an AIF map, e.g. a ContextDeP Rephrase between two utterances) get, per L-node, a generated
I-node with the utterance text anchored by a ``Default Illocuting`` YA node, as AIF requires.

**Not exported:** NonRelation (M-Arg ``Neither``, ContextDeP non-paraphrases) and SameUnit (Sci-Arg
``parts_of_same``) nodes, and their edges: they are annotations *about* pairs of units, not AIF
nodes (AIF has no "no relation" or "fragment of" scheme). Judgements and annotators are not part of
AIF either. Predicted relations are left out unless asked for; asked for, each predicted S-node
carries its provenance beside the AIF keys (tools that do not know them ignore them):
``"origin": "predicted"``, ``"score"``, ``"model"``, ``"modelVersion"`` and ``"runID"``.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphstore import cypher
from graphstore.reads import edge_view, unit_view
from graphstore.store import GraphStore, require_whole
from ontology.aiftext import split_speaker
from ontology.errors import ClientError, GraphStoreError, NotFoundError
from ontology.formats.aif import AifMap
from ontology.formats.aif_write import fresh_ids
from ontology.formats.xaif_write import convert
from ontology.progress import Advance
from ontology.records import scheme_term
from ontology.system import PRIVATE_FILE
from ontology.terms import Label, Prop, RelType
from ontology.views import EdgeView, UnitView

AIF_SCHEME = "qt30"

S_TYPES = ("RA", "CA", "MA", "TA", "YA")
NODE_TYPES = ("I", "L", *S_TYPES)
# AIFdb's default schemes (ids as in the QT30 / DialAM-2024 maps).
DEFAULT_SCHEMES: dict[str, tuple[str, str]] = {
    "RA": ("Default Inference", "72"),
    "CA": ("Default Conflict", "71"),
    "MA": ("Default Rephrase", "144"),
    "TA": ("Default Transition", "82"),
    "YA": ("Default Illocuting", "168"),
}
# Most specific first: DiscourseRelation is also a Transition.
_CLASS_TYPES: tuple[tuple[Label, str], ...] = (
    (Label.Support, "RA"),
    (Label.Attack, "CA"),
    (Label.Rephrase, "MA"),
    (Label.Illocution, "YA"),
    (Label.Transition, "TA"),
)
NOT_AIF: frozenset[str] = frozenset({Label.NonRelation.value, Label.SameUnit.value})
_TYPE_RANK = {"L": 0, "I": 1, "YA": 2, "TA": 3, "RA": 4, "CA": 5, "MA": 6}


@dataclass
class _Node:
    key: str
    type: str
    text: str
    unit: UnitView | None
    local: str | None
    order: tuple[Any, ...]
    extra: dict[str, Any] = field(default_factory=dict)


def aif_type(unit: UnitView, include_predicted: bool = False) -> str | None:
    """The AIF node type of a graph unit, or None when it is not exported."""
    labels = unit.node.labels
    if NOT_AIF.intersection(labels):
        return None
    if Label.Locution.value in labels:
        return "L"
    if Label.Proposition.value in labels:
        return "I"
    if Label.Relation.value not in labels:
        return None
    if unit.node.get(Prop.ORIGIN) == "predicted" and not include_predicted:
        return None
    stored = unit.node.get(Prop.AIF_TYPE)
    if stored in S_TYPES:
        return str(stored)
    for label, kind in _CLASS_TYPES:
        if label.value in labels:
            return kind
    return None


def from_aif_map(unit: UnitView) -> bool:
    """Whether a relation node was read from an AIF map (its type, text and scheme are kept as is)."""
    kind = unit.node.get(Prop.AIF_TYPE)
    return kind in S_TYPES and unit.node.get(Prop.SCHEME_CLASS) == scheme_term(AIF_SCHEME, str(kind)).iri


def _split_name(name: str) -> tuple[str, str]:
    first, _, rest = name.strip().partition(" ")
    return first, rest


def _edge_local(edge: EdgeView, discourse: str | None) -> str | None:
    # The AIF loader stores edge ids as "<discourse id>:e:<edgeID>".
    if edge.id and discourse and edge.id.startswith(f"{discourse}:e:"):
        return edge.id[len(discourse) + 3 :]
    return None


def build_aif(
    units: Iterable[UnitView],
    edges: Iterable[EdgeView],
    discourse: str | None = None,
    include_predicted: bool = False,
    with_layout: bool = False,
) -> dict[str, Any]:
    """Assemble an AIF map from graph units and AIF edges (pure; see the module docstring).

    Args:
        units: Locutions, propositions and relations to export.
        edges: AIF edges; those touching a unit that is not exported are dropped.
        discourse: Graph id of the discourse, used to recover original edge ids.
        include_predicted: Also export relations with ``origin = "predicted"``.
        with_layout: Add ``"layout": [{"nodeID", "x", "y"}]``, where a mapping tool drew the nodes
            that have a stored position (for the xAIF and OVA3 writers, which move it into their
            own section; plain AIF has no layout).
    """
    nodes: dict[str, _Node] = {}
    for unit in units:
        kind = aif_type(unit, include_predicted)
        if kind is None or unit.id in nodes:
            continue
        node = unit.node
        pos = node.get(Prop.POSITION)
        order = (pos is None, pos if isinstance(pos, int) else 0, _TYPE_RANK.get(kind, 9), unit.id)
        if kind in S_TYPES:
            default_scheme, default_id = DEFAULT_SCHEMES[kind]
            if from_aif_map(unit):
                scheme, scheme_id = node.get(Prop.SCHEME_LABEL), node.get(Prop.SCHEME_ID)
            elif kind == "TA" and node.get(Prop.SENSE):
                scheme, scheme_id = str(node.get(Prop.SENSE)), None
            else:
                scheme, scheme_id = default_scheme, default_id
            text = node.text or scheme or default_scheme
            extra = {k: v for k, v in (("scheme", scheme), ("schemeID", scheme_id)) if v is not None}
            if node.get(Prop.ORIGIN) == "predicted":
                extra.update(_provenance(unit))
        else:
            text = node.text or ""
            extra = {}
        nodes[unit.id] = _Node(unit.id, kind, str(text), unit, node.get(Prop.LOCAL_ID), order, extra)

    kept = [e for e in edges if e.source in nodes and e.target in nodes]
    kept = list({(e.source, e.target, e.id): e for e in kept}.values())
    kept, synthetic_edges = _anchor_propositions(nodes, kept)

    ordered = sorted(nodes.values(), key=lambda n: n.order)
    ids = _node_ids(ordered)
    edge_rows = _edge_rows(kept, synthetic_edges, discourse, preserve=ids is not None)
    if ids is None:
        ids = {n.key: str(i) for i, n in enumerate(ordered, start=1)}

    out_nodes = []
    for n in ordered:
        row: dict[str, Any] = {"nodeID": ids[n.key], "text": n.text, "type": n.type}
        stamp = n.unit.node.get(Prop.TIMESTAMP) if n.unit else None
        if stamp is not None:
            row["timestamp"] = stamp
        row.update(n.extra)
        out_nodes.append(row)
    out_edges = [
        {"edgeID": eid, "fromID": ids[src], "toID": ids[dst], "formEdgeID": None} for eid, src, dst in edge_rows
    ]
    locutions, participants = _locutions(ordered, ids)
    aif: dict[str, Any] = {
        "nodes": out_nodes,
        "edges": out_edges,
        "locutions": locutions,
        "participants": participants,
        "schemefulfillments": [],
        "descriptorfulfillments": [],
    }
    if with_layout:
        aif["layout"] = [
            {"nodeID": ids[n.key], "x": n.unit.node.get(Prop.LAYOUT_X), "y": n.unit.node.get(Prop.LAYOUT_Y)}
            for n in ordered
            if n.unit is not None and n.unit.node.get(Prop.LAYOUT_X) is not None
        ]
    return aif


def _anchor_propositions(
    nodes: dict[str, _Node], edges: list[EdgeView]
) -> tuple[list[EdgeView], list[tuple[str, str]]]:
    """Reroute RA/CA/MA edges that end at L-nodes to generated, YA-anchored I-nodes."""
    synthetic: list[tuple[str, str]] = []
    made: dict[str, str] = {}

    def proposition_for(loc: _Node) -> str:
        if loc.key not in made:
            i_key, ya_key = f"{loc.key}#I", f"{loc.key}#YA"
            text = split_speaker(loc.text)[1]
            nodes[i_key] = _Node(i_key, "I", text, None, f"{loc.local}-I" if loc.local else None, (*loc.order, 1))
            scheme, scheme_id = DEFAULT_SCHEMES["YA"]
            nodes[ya_key] = _Node(
                ya_key,
                "YA",
                scheme,
                None,
                f"{loc.local}-YA" if loc.local else None,
                (*loc.order, 2),
                {"scheme": scheme, "schemeID": scheme_id},
            )
            synthetic.extend([(loc.key, ya_key), (ya_key, i_key)])
            made[loc.key] = i_key
        return made[loc.key]

    out = []
    for e in edges:
        src, dst = nodes[e.source], nodes[e.target]
        for rel, other in ((dst, src), (src, dst)):
            needs_props = rel.type in ("RA", "CA", "MA") and other.type == "L"
            if needs_props and rel.unit is not None and not from_aif_map(rel.unit):
                replacement = proposition_for(other)
                e = EdgeView(
                    source=replacement if other is src else e.source,
                    type=e.type,
                    target=replacement if other is dst else e.target,
                )
        out.append(e)
    return out, synthetic


def _provenance(unit: UnitView) -> dict[str, Any]:
    """The provenance keys of a predicted S-node (see the module docstring)."""
    node = unit.node
    fields = (
        ("origin", node.get(Prop.ORIGIN)),
        ("score", node.get(Prop.SCORE)),
        ("model", node.get(Prop.MODEL)),
        ("modelVersion", node.get(Prop.MODEL_VERSION)),
        ("runID", node.get(Prop.RUN_ID)),
    )
    return {key: value for key, value in fields if value is not None}


def _node_ids(ordered: Sequence[_Node]) -> dict[str, str] | None:
    """Each node's id: its own local id, a fresh one for nodes without (predicted S-nodes); None
    (number them all) when the local ids are not unique, as in corpora that share one local id
    between the locution and the proposition of a sentence."""
    locals_ = [n.local for n in ordered if n.local]
    if not locals_ or len(set(locals_)) != len(locals_):
        return None
    fresh = iter(fresh_ids(locals_, "pred_s", sum(1 for n in ordered if not n.local)))
    return {n.key: str(n.local) if n.local else str(next(fresh)) for n in ordered}


def _edge_rows(
    edges: Sequence[EdgeView],
    synthetic: Sequence[tuple[str, str]],
    discourse: str | None,
    preserve: bool,
) -> list[tuple[str, str, str]]:
    """``(edge id, source key, target key)`` rows: with ``preserve`` the map's own edge ids where
    they are known and unique and fresh ones for the others (a predicted S-node's edges), else
    numbered from 1."""
    pairs = [(e, e.source, e.target) for e in edges] + [(None, s, t) for s, t in synthetic]
    if preserve:
        originals = [_edge_local(e, discourse) if e is not None else None for e, _, _ in pairs]
        known = [o for o in originals if o]
        if known and len(set(known)) == len(known):
            fresh = iter(fresh_ids(known, "pred_e", len(originals) - len(known)))
            rows = [(str(o) if o else str(next(fresh)), s, t) for o, (_, s, t) in zip(originals, pairs, strict=True)]
            return sorted(rows, key=lambda r: (len(r[0]), r[0]))
    return [(str(i), s, t) for i, (_, s, t) in enumerate(pairs, start=1)]


def _locutions(ordered: Sequence[_Node], ids: dict[str, str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    locutions: list[dict[str, Any]] = []
    people: dict[str, str] = {}
    written: dict[str, Any] = {}
    generated: dict[str, str] = {}
    # In maps read from AIF, L-nodes without stored locutions (e.g. annotators' copies) get none.
    from_aif = any(n.type == "L" and n.unit is not None and n.unit.node.get(Prop.AIF_LOCUTIONS) for n in ordered)
    for n in ordered:
        if n.type != "L" or n.unit is None:
            continue
        node = n.unit.node
        stored = node.get(Prop.AIF_LOCUTIONS)
        speaker = node.get(Prop.SPEAKER) or n.unit.speaker
        if stored:
            try:
                entries = json.loads(stored)
            except json.JSONDecodeError as e:
                raise GraphStoreError(f"node {n.key}: stored aif_locutions is not JSON ({e})") from e
            for entry in entries:
                locutions.append({"nodeID": ids[n.key], **entry})
                person = entry.get("personID")
                if person is not None and str(person) not in people:
                    # The speaker the locution is spoken by is named as the map's participant
                    # (xAIF, OVA3) or else its text named them.
                    people[str(person)] = n.unit.speaker or speaker or str(person)
                    # The participant's id as the locution writes it (xAIF: an integer).
                    written[str(person)] = person
            continue
        key = n.unit.speaker_id or (f"name:{speaker}" if speaker and not from_aif else None)
        if key is None:
            continue
        if key not in generated:
            generated[key] = str(len(generated) + 1)
            people[generated[key]] = speaker or n.unit.speaker or generated[key]
        locutions.append(
            {
                "nodeID": ids[n.key],
                "personID": generated[key],
                "timestamp": node.get(Prop.TIMESTAMP),
                "start": None,
                "end": None,
                "source": None,
            }
        )
    participants = []
    for pid, name in people.items():
        first, rest = _split_name(name)
        participants.append({"participantID": written.get(pid, pid), "firstname": first, "surname": rest})
    return locutions, participants


def validate_aif(aif: dict[str, Any], where: str = "AIF map") -> None:
    """Check an AIF map's integrity: types, unique ids, edge ends, locutions (optional) and participants.

    Raises:
        GraphStoreError: Listing the first problems found.
    """
    problems: list[str] = []
    for key in ("nodes", "edges"):
        if not isinstance(aif.get(key), list):
            raise GraphStoreError(f"{where}: '{key}' must be a list")
    # Optional, as for `argweb ingest aif`: a map of propositions alone has no locutions.
    if not isinstance(aif.get("locutions", []), list):
        raise GraphStoreError(f"{where}: 'locutions' must be a list")
    types: dict[Any, str] = {}
    for node in aif["nodes"]:
        nid = node.get("nodeID")
        if nid in types:
            problems.append(f"duplicate nodeID {nid!r}")
        if node.get("type") not in NODE_TYPES:
            problems.append(f"node {nid!r}: unknown type {node.get('type')!r}")
        if not isinstance(node.get("text"), str):
            problems.append(f"node {nid!r}: text is not a string")
        types[nid] = node.get("type")
    edge_ids = set()
    for edge in aif["edges"]:
        eid = edge.get("edgeID")
        if eid in edge_ids:
            problems.append(f"duplicate edgeID {eid!r}")
        edge_ids.add(eid)
        for end in ("fromID", "toID"):
            if edge.get(end) not in types:
                problems.append(f"edge {eid!r}: {end} {edge.get(end)!r} is not a node")
    persons = {p.get("participantID") for p in aif.get("participants", [])}
    for loc in aif.get("locutions", []):
        if types.get(loc.get("nodeID")) != "L":
            problems.append(f"locution of {loc.get('nodeID')!r}: not an L-node")
        if persons and loc.get("personID") not in persons:
            problems.append(f"locution of {loc.get('nodeID')!r}: person {loc.get('personID')!r} is no participant")
    if problems:
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise GraphStoreError(f"{where}: invalid AIF: {'; '.join(problems[:10])}{more}")


# -- reading from the graph ------------------------------------------------------------------------


def _chunks(items: Sequence[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def read_discourses(
    store: GraphStore, discourse_ids: Sequence[str], id_batch: int = 5000
) -> tuple[dict[str, UnitView], list[EdgeView]]:
    """Units PART_OF the discourses, the AIF edges touching them and the units at their far ends."""
    units = {row["id"]: unit_view(row) for row in store.read(cypher.discourse_units(), ids=list(discourse_ids))}
    edges: dict[str, EdgeView] = {}
    for chunk in _chunks(sorted(units), id_batch):
        for row in store.read(cypher.aif_edges_touching(), ids=chunk):
            edges[row["key"]] = edge_view(row, RelType.AIF_EDGE.value)
    missing = sorted({end for e in edges.values() for end in (e.source, e.target)} - set(units))
    for chunk in _chunks(missing, id_batch):
        for row in store.read(cypher.units_by_id(), ids=chunk):
            units[row["id"]] = unit_view(row)
    return units, list(edges.values())


def resolve_discourse(store: GraphStore, ref: str, corpus: str | None = None) -> str:
    """The graph id of the discourse named ``ref`` (its id or its local id).

    Raises:
        NotFoundError: No such discourse.
        ClientError: The local id is ambiguous across corpora.
    """
    rows = store.read(cypher.discourse_refs(), ref=ref, corpus=corpus)
    if not rows:
        scope = f" in corpus {corpus}" if corpus else ""
        raise NotFoundError(f"no dialogue or document {ref!r}{scope} in the graph")
    if len(rows) > 1:
        exact = [r for r in rows if r["id"] == ref]
        if len(exact) == 1:
            return str(exact[0]["id"])
        raise ClientError(
            f"{ref!r} names {len(rows)} discourses ({', '.join(r['id'] for r in rows[:5])}); "
            "give the full id or a corpus"
        )
    return str(rows[0]["id"])


def _maps(
    discourse_ids: Sequence[str],
    units: dict[str, UnitView],
    edges: Sequence[EdgeView],
    include_predicted: bool,
    with_layout: bool = False,
) -> dict[str, dict[str, Any]]:
    out = {}
    for did in discourse_ids:
        core = {uid for uid, u in units.items() if u.discourse == did}
        mine = [e for e in edges if e.source in core or e.target in core]
        members = core | {end for e in mine for end in (e.source, e.target)}
        out[did] = build_aif(
            [units[m] for m in sorted(members) if m in units],
            mine,
            discourse=did,
            include_predicted=include_predicted,
            with_layout=with_layout,
        )
    return out


def export_discourse(
    store: GraphStore, ref: str, corpus: str | None = None, include_predicted: bool = False, with_layout: bool = False
) -> dict[str, Any]:
    """The AIF map of one dialogue or document.

    Args:
        store: The graph.
        ref: Graph id (``qt30:nodeset21318``) or local id (``nodeset21318``) of the discourse.
        corpus: Restrict the lookup of a local id to one corpus.
        include_predicted: Also export predicted relations.
        with_layout: Add the stored node positions (see :func:`build_aif`).

    Raises:
        NotFoundError: Unknown discourse.
        ClientError: Ambiguous discourse reference.
        GraphStoreError: Neo4j failed.
    """
    did = resolve_discourse(store, ref, corpus)
    units, edges = read_discourses(store, [did])
    return _maps([did], units, edges, include_predicted, with_layout)[did]


def _file_name(discourse_id: str, corpus: str) -> str:
    local = discourse_id[len(corpus) + 1 :] if discourse_id.startswith(f"{corpus}:") else discourse_id
    return re.sub(r"[^A-Za-z0-9._~-]+", "_", local) or "discourse"


def export_corpus(
    store: GraphStore,
    corpus: str,
    out_dir: Path,
    batch_size: int = 50,
    include_predicted: bool = False,
    progress: Advance | None = None,
    convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> list[Path]:
    """Write one AIF map per dialogue/document of ``corpus`` to ``out_dir/<local id>.json``.

    Discourses are read ``batch_size`` at a time. With ``convert`` each map is read with its layout
    (:func:`build_aif`) and written as ``convert`` turns it (another wrapper: xAIF, OVA3).

    Raises:
        NotFoundError: The corpus has no discourse in the graph.
        GraphStoreError: Neo4j failed.
    """
    ids = [row["id"] for row in store.read(cypher.corpus_discourses(), corpus=corpus)]
    if not ids:
        raise NotFoundError(f"corpus {corpus!r} has no dialogue or document in the graph")
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    used: set[str] = set()
    for chunk in _chunks(ids, batch_size):
        units, edges = read_discourses(store, chunk)
        for did, aif in _maps(chunk, units, edges, include_predicted, with_layout=convert is not None).items():
            name = _file_name(did, corpus)
            while name in used:
                name += "_"
            used.add(name)
            path = out_dir / f"{name}.json"
            write_aif(aif if convert is None else convert(aif), path)
            written.append(path)
        if progress:
            progress(len(chunk))
    return written


def write_aif(aif: dict[str, Any], path: Path) -> None:
    """Write an AIF map as UTF-8 JSON, readable by its owner only (mode 0600, like every export).

    Raises:
        GraphStoreError: The file cannot be written (naming it; a full disk says so).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        if stat.S_ISREG(os.fstat(fd).st_mode):  # a file written before keeps no wider mode; a device is not ours
            os.fchmod(fd, PRIVATE_FILE)
        with open(fd, "w", encoding="utf-8") as fh:
            json.dump(aif, fh, ensure_ascii=False, indent=2)
            fh.write("\n")
    except OSError as e:
        raise GraphStoreError(f"{path}: cannot write the AIF map: {e.strerror or e}") from e


def discourse_map(
    store: GraphStore,
    ref: str,
    *,
    include_predicted: bool = False,
    fmt: str = "aif",
    undo: Callable[[list[str]], object] | None = None,
) -> AifMap:
    """The validated map of one discourse (its id or local id) as AIF, xAIF or OVA3.

    Args:
        store: The store read (a read-only one for the API).
        ref: The dialogue or document.
        include_predicted: Also export predicted relations.
        fmt: ``aif``, ``xaif`` or ``ova`` (:func:`ontology.formats.xaif_write.map_format`).
        undo: Given the interrupted ingests of a half-loaded corpus (see :func:`graphstore.store.require_whole`).

    Raises:
        NotFoundError: Unknown discourse. ClientError: Ambiguous reference.
        CorpusIncompleteError: Its corpus is still marked ``loading`` (an ingest running or killed):
            a half-loaded corpus is never served as if whole.
    """
    touched = store.corpora_of(ref)
    if touched:
        require_whole(store.read(cypher.incomplete_corpora(), corpus=None), touched, "refusing to export it", undo)
    aif = export_discourse(store, ref, include_predicted=include_predicted, with_layout=fmt != "aif")
    validate_aif(aif, ref)
    return convert(aif, fmt)
