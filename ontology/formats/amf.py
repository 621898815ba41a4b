"""xAIF documents of the open Argument Mining Framework (oAMF): reading them and adding to them.

An xAIF document is ``{"AIF": {nodes, edges, locutions, participants, ...}, "text", "dialog",
"ova"}``. argweb's oAMF modules (:mod:`api.services.amf`) return the document they were given with
their additions; this module is the pure half of that work, between JSON documents and the
predictions a model made, with no model and no graph:

* every node, edge, locution and participant of the input stays as it came (same ids, same values,
  same order), and every other key of the document too;
* :func:`add_units` (``turns`` / ``segments``): from the document's ``text`` (``Speaker: text``
  lines when ``dialog``), one locution (L-node, with its locution entry and participant) per
  speaker turn, or per sentence of each turn (pySBD), when the map has no L-node yet; then, for
  every L-node without one, a proposition (I-node) of its text anchored by a ``Default
  Illocuting`` YA-node;
* :func:`add_arguments` (``ari``): RA / CA / MA nodes between the I-nodes;
* :func:`add_discourse_links` (``discourse``): TA nodes between L-nodes, each named by its SDRT
  sense (``scheme``).

New ids are integers above the largest when the map's ids are integers (xAIF), else fresh strings.
What argweb added is listed in one top-level section that AIF and xAIF readers do not look at,
``"argweb": {"predictions": [{"nodeID", "type", "task", "model", "model_version", "run_id",
"score"?, "sense"?}], "runs": [...]}``: AIF nodes stay AIF nodes, and a later module's additions
are appended to the same lists. Rule-based steps (turns, segments) carry no score.
"""

from __future__ import annotations

import copy
import html
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from ontology.aiftext import split_speaker
from ontology.errors import ApiError, LoaderError
from ontology.formats.aif import AifMap, check_map
from ontology.formats.aif_write import add_relations, fresh_ids
from ontology.formats.common import FileRelation, parse_json
from ontology.formats.transcript import parse_turns, segment

XaifDocument: TypeAlias = dict[str, Any]
"""An oAMF xAIF document as JSON (``{"AIF": {...}, "text", "dialog", "ova", ...}``): an outside
format, kept as the JSON it is, with argweb's additions listed under :data:`SECTION`."""

AddedEntry: TypeAlias = dict[str, Any]
"""One entry of the :data:`SECTION` of an xAIF document (``nodeID``, ``type``, ``task``, ``model``,
``model_version``, ``run_id``, ``score``?, ``sense``?): JSON inside the outside document."""

SECTION = "argweb"
ILLOCUTION = "Default Illocuting"
UNIT_TASKS = ("turns", "segments")
_TAGS = re.compile(r"<[^>]*>")


# -- reading the document ---------------------------------------------------------------------------


def parse_document(body: bytes, where: str = "xAIF document") -> XaifDocument:
    """The xAIF document of a request body.

    Raises:
        ApiError: Not UTF-8 JSON, or not an object.
    """
    try:
        data = parse_json(where, body.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ApiError(f"{where}: byte {e.start}: not UTF-8") from e
    except LoaderError as e:
        # Invalid JSON, nesting past 64 levels or a 4,300-digit number: the request's mistake (400).
        raise ApiError(str(e)) from e
    if not isinstance(data, dict):
        raise ApiError(f"{where}: an xAIF document is a JSON object, not {type(data).__name__}")
    return data


def prepared(doc: XaifDocument, task: str) -> tuple[XaifDocument, AifMap]:
    """A copy of ``doc`` to add to, and its AIF section, checked (``doc`` itself is not changed).

    A turns/segments document may have no AIF section or no nodes yet: the map is made here.

    Raises:
        ApiError: The AIF section is not an object, or a rule of the AIF reader is broken.
    """
    out = copy.deepcopy(doc)
    aif = out.get("AIF")
    if aif is None and task in UNIT_TASKS:
        aif = {}
    if not isinstance(aif, dict):
        raise ApiError(f"xAIF document: field 'AIF' must be an object, not {type(aif).__name__}")
    if task in UNIT_TASKS and aif.get("nodes") is None:
        aif["nodes"] = []  # a bare text: the map is made here
    try:
        # The AIF reader's own checks (xAIF's rules), as for `argweb corpus ingest xaif` and POST /aif.
        check_map(aif, "xAIF document: AIF", lenient=True)
    except LoaderError as e:
        raise ApiError(str(e)) from e
    if aif.get("edges") is None:
        aif["edges"] = []  # xAIF may leave them out; the modules add to them
    out["AIF"] = aif
    return out, aif


def _entries(aif: AifMap, key: str) -> list[Any]:
    """``aif[key]`` (locutions, participants), which xAIF may leave out or null: read, never filled in."""
    return list(aif.get(key) or [])


def _append(aif: AifMap, key: str, item: dict[str, Any]) -> None:
    if aif.get(key) is None:
        aif[key] = []
    aif[key].append(item)


def document_text(doc: XaifDocument) -> str:
    """The document's text without markup (xAIF writes ``{"txt": ...}``, OVA3 a string).

    Raises:
        ApiError: ``text`` is neither a string nor ``{"txt": string}``.
    """
    raw = doc.get("text")
    if isinstance(raw, dict):
        raw = raw.get("txt")
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise ApiError(f"xAIF document: field 'text' must be a string or {{'txt': string}}, not {type(raw).__name__}")
    text = re.sub(r"<br\s*/?>|</p>|</div>", "\n", raw, flags=re.IGNORECASE)
    return html.unescape(_TAGS.sub("", text))


def _participants(aif: AifMap) -> list[tuple[Any, str]]:
    """``(participantID, "firstname surname")`` of each participant."""
    return [
        (p.get("participantID"), " ".join(str(p.get(k) or "").strip() for k in ("firstname", "surname")).strip())
        for p in _entries(aif, "participants")
        if isinstance(p, dict)
    ]


def speakers(aif: AifMap) -> dict[str, str]:
    """L-node id (as text) -> its speaker: the participant of its locution, else its ``Speaker :`` prefix."""
    names = {str(pid): name for pid, name in _participants(aif)}
    out = {}
    for loc in _entries(aif, "locutions"):
        name = names.get(str(loc.get("personID")))
        if name and str(loc["nodeID"]) not in out:
            out[str(loc["nodeID"])] = name
    for node in aif["nodes"]:
        if node["type"] == "L" and str(node["nodeID"]) not in out:
            out[str(node["nodeID"])] = split_speaker(str(node.get("text") or ""))[0] or ""
    return out


def check_size(doc: XaifDocument, max_nodes: int, max_chars: int) -> None:
    """Refuse a document of more than ``max_nodes`` nodes or ``max_chars`` characters of text.

    Raises:
        ApiError: Beyond either limit.
    """
    aif = doc.get("AIF")
    raw = aif.get("nodes") if isinstance(aif, dict) else None
    nodes: list[Any] = raw if isinstance(raw, list) else []
    text = len(document_text(doc)) + sum(len(str(n.get("text") or "")) for n in nodes if isinstance(n, dict))
    if len(nodes) > max_nodes:
        raise ApiError(f"an xAIF document may have at most {max_nodes} nodes, not {len(nodes)}")
    if text > max_chars:
        raise ApiError(f"an xAIF document may have at most {max_chars} characters of text, not {text}")


def predicted(doc: XaifDocument) -> Iterator[AddedEntry]:
    """The entries of the ``argweb`` section of a document (what argweb's modules added)."""
    section = doc.get(SECTION)
    yield from (section.get("predictions") or []) if isinstance(section, dict) else []


# -- provenance -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Producer:
    """What made the nodes a task adds: a model (name, version) or a rule-based step."""

    task: str
    model: str
    version: str


RunId = Callable[[Producer, AifMap], str]
"""The run id of a producer's additions to a map (computed from the map as it came)."""


def _record(doc: XaifDocument, producer: Producer, run_id: str, entries: list[AddedEntry]) -> None:
    """Append what a task added to the document's ``argweb`` section (kept from earlier modules)."""
    section = doc.get(SECTION)
    if not isinstance(section, dict):
        section = {}
    section = dict(section)
    section["predictions"] = [*list(section.get("predictions") or []), *entries]
    run = {"run_id": run_id, "task": producer.task, "model": producer.model, "model_version": producer.version}
    section["runs"] = [*list(section.get("runs") or []), {**run, "added": len(entries)}]
    doc[SECTION] = section


def _entry(node: dict[str, Any], producer: Producer, run_id: str, **extra: Any) -> AddedEntry:
    return {
        "nodeID": node["nodeID"],
        "type": node["type"],
        "task": producer.task,
        "model": producer.model,
        "model_version": producer.version,
        "run_id": run_id,
        **extra,
    }


class _Ids:
    """Fresh ids for the additions: integers (from 1) when the map's node ids are integers or it has
    none yet (xAIF's form), else strings unused in the map."""

    def __init__(self, aif: AifMap) -> None:
        self.aif = aif
        self.integers = all(isinstance(n["nodeID"], int) and not isinstance(n["nodeID"], bool) for n in aif["nodes"])

    def fresh(self, existing: list[Any], prefix: str, count: int) -> list[Any]:
        if not count:
            return []
        if self.integers and not [x for x in existing if x is not None]:
            return list(range(1, count + 1))
        return fresh_ids(existing, prefix, count)

    def nodes(self, count: int) -> list[Any]:
        return self.fresh([n["nodeID"] for n in self.aif["nodes"]], "argweb_n", count)

    def person(self) -> Any:
        people = [p.get("participantID") for p in _entries(self.aif, "participants") if isinstance(p, dict)]
        return self.fresh(people, "argweb_p", 1)[0]

    def link(self, source: Any, target: Any) -> None:
        (edge,) = self.fresh([e.get("edgeID") for e in self.aif["edges"]], "argweb_e", 1)
        self.aif["edges"].append({"edgeID": edge, "fromID": source, "toID": target})


# -- the additions ----------------------------------------------------------------------------------


def _turns(text: str, dialog: bool | None) -> list[tuple[str, str]]:
    """(speaker, text) of each turn of the document's text ('' speaker in a monologue).

    Raises:
        ApiError: ``dialog`` is true and the text has no ``Speaker: text`` line where it starts.
    """
    if not text.strip():
        raise ApiError("xAIF document: no L-nodes and no text to find turns in")
    if dialog is False:
        return [("", " ".join(text.split()))]
    try:
        return [(t.speaker, " ".join(" ".join(t.parts).split())) for t in parse_turns(Path("xAIF text"), text)]
    except LoaderError as e:
        if dialog:
            raise ApiError(f"{e} (the document says dialog: true)") from e
        return [("", " ".join(text.split()))]


def _locutions(doc: XaifDocument, aif: AifMap, task: str, ids: _Ids) -> list[dict[str, Any]]:
    """L-nodes (with locution entries and participants) for the turns or sentences of the text."""
    units = []
    for speaker, said in _turns(document_text(doc), doc.get("dialog") if isinstance(doc.get("dialog"), bool) else None):
        units += [(speaker, s) for s in (segment(said) if task == "segments" else [said])]
    person_ids = {name: pid for pid, name in _participants(aif)}
    added = []
    for (speaker, said), nid in zip(units, ids.nodes(len(units)), strict=True):
        node = {"nodeID": nid, "text": said, "type": "L"}
        aif["nodes"].append(node)
        added.append(node)
        if speaker:
            if speaker not in person_ids:
                pid = ids.person()
                first, _, rest = speaker.partition(" ")
                _append(aif, "participants", {"participantID": pid, "firstname": first, "surname": rest})
                person_ids[speaker] = pid
            _append(aif, "locutions", {"nodeID": nid, "personID": person_ids[speaker]})
    return added


def add_units(doc: XaifDocument, task: str, producer: Producer, run_id: RunId) -> XaifDocument:
    """``turns`` / ``segments``: locutions from the text when the map has none, propositions where absent.

    Raises:
        ApiError: A malformed document, or no L-node and no text.
    """
    out, aif = prepared(doc, task)
    ids = _Ids(aif)
    run = run_id(producer, aif)
    added = [] if any(n["type"] == "L" for n in aif["nodes"]) else _locutions(out, aif, task, ids)
    types = {str(n["nodeID"]): n["type"] for n in aif["nodes"]}
    after: dict[str, list[str]] = defaultdict(list)
    for e in aif["edges"]:
        after[str(e["fromID"])].append(str(e["toID"]))
    anchored = {
        l_id
        for l_id, kind in types.items()
        if kind == "L" and any(types.get(ya) == "YA" and "I" in {types.get(i) for i in after[ya]} for ya in after[l_id])
    }
    for node in [n for n in aif["nodes"] if n["type"] == "L" and str(n["nodeID"]) not in anchored]:
        i_id, ya_id = ids.nodes(2)
        said = split_speaker(str(node.get("text") or ""))[1]
        proposition = {"nodeID": i_id, "text": said, "type": "I"}
        illocution = {"nodeID": ya_id, "text": ILLOCUTION, "type": "YA", "scheme": ILLOCUTION}
        aif["nodes"] += [proposition, illocution]
        ids.link(node["nodeID"], ya_id)
        ids.link(ya_id, i_id)
        added += [proposition, illocution]
    _record(out, producer, run, [_entry(n, producer, run) for n in added])
    return out


def add_arguments(
    out: XaifDocument, aif: AifMap, relations: Sequence[FileRelation], producer: Producer, run_id: str
) -> XaifDocument:
    """``ari``: the predicted RA / CA / MA ``relations`` between the I-nodes of ``aif`` (of :func:`prepared`).

    Raises:
        ApiError: A relation the map cannot hold (an unknown end node).
    """
    try:
        before = len(aif["nodes"])
        with_relations = add_relations(aif, relations, "xAIF document")
    except LoaderError as e:
        raise ApiError(str(e)) from e
    out["AIF"] = {**aif, "nodes": with_relations["nodes"], "edges": with_relations["edges"]}
    added = with_relations["nodes"][before:]
    _record(
        out,
        producer,
        run_id,
        [_entry(n, producer, run_id, score=r.score) for n, r in zip(added, relations, strict=True)],
    )
    return out


def locution_nodes(aif: AifMap) -> list[dict[str, Any]]:
    """The L-nodes of a map, in map order.

    Raises:
        ApiError: The map has none (a discourse module needs a turns or segments module first).
    """
    locutions = [n for n in aif["nodes"] if n["type"] == "L"]
    if not locutions:
        raise ApiError("xAIF document: no L-nodes to link (run a turns or segments module first)")
    return locutions


def add_discourse_links(
    out: XaifDocument,
    aif: AifMap,
    links: Sequence[tuple[int, int, str, float]],
    producer: Producer,
    run_id: str,
) -> XaifDocument:
    """``discourse``: a TA node named by its sense for each ``(x, y, sense, score)`` link between the
    ``x``-th and ``y``-th L-nodes of ``aif`` (of :func:`prepared`)."""
    locutions = locution_nodes(aif)
    ids = _Ids(aif)
    entries = []
    for (x, y, sense, score), nid in zip(links, ids.nodes(len(links)), strict=True):
        node = {"nodeID": nid, "text": sense, "type": "TA", "scheme": sense}
        aif["nodes"].append(node)
        ids.link(locutions[x]["nodeID"], nid)
        ids.link(nid, locutions[y]["nodeID"])
        entries.append(_entry(node, producer, run_id, score=score, sense=sense))
    _record(out, producer, run_id, entries)
    return out
