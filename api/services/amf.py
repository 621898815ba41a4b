"""argweb's models as modules of the open Argument Mining Framework (oAMF): xAIF in, xAIF out.

Each task takes an xAIF document (``{"AIF": {nodes, edges, locutions, participants, ...},
"text", "dialog", "ova"}``) and returns it with argweb's predictions added; every node, edge,
locution and participant of the input stays as it came (same ids, same values, same order), and
every other key of the document too. What argweb adds:

* ``turns`` / ``segments``: from the document's ``text`` (``Speaker: text`` lines when ``dialog``),
  one locution (L-node, with its locution entry and participant) per speaker turn, or per sentence
  of each turn (pySBD, :func:`ontology.formats.transcript.segment`), when the map has no L-node
  yet; then, for every L-node without one, a proposition (I-node) of its text anchored by a
  ``Default Illocuting`` YA-node;
* ``ari``: RA / CA / MA nodes between the I-nodes, predicted by the QT30 relation model through the
  one AIF prediction path (:func:`api.services.relations.map_relations`, as ``argweb predict
  aif``): the model reads the map in DialAM's test-input form (YA, RA, CA, MA left out), and the
  relations go into the map as it came;
* ``discourse``: TA nodes between L-nodes, the discourse parser's links, each named by its SDRT
  sense (``scheme``, as argweb's AIF export writes discourse relations).

New ids are integers above the largest when the map's ids are integers (xAIF), else fresh strings.
What argweb added is listed in one top-level section that AIF and xAIF readers do not look at,
``"argweb": {"predictions": [{"nodeID", "type", "task", "model", "model_version", "run_id",
"score"?, "sense"?}], "runs": [...]}``: AIF nodes stay AIF nodes, and a later module's additions
are appended to the same lists. Rule-based steps (turns, segments) carry no score.

Nothing is written to the graph; the models are loaded on first use and kept.
"""

from __future__ import annotations

import copy
import hashlib
import html
import json
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from api.services.predict import Limits, running_slot
from api.settings import Settings
from ontology.aiftext import split_speaker
from ontology.errors import ApiError, LoaderError
from ontology.formats.aif import check_map
from ontology.formats.aif_write import add_relations, fresh_ids, strip_relations
from ontology.formats.common import parse_json
from ontology.formats.transcript import SEGMENTER, parse_turns, segment

TASKS = ("turns", "segments", "ari", "discourse")
SECTION = "argweb"
MODULES = Path(__file__).resolve().parent.parent / "amf"
ILLOCUTION = "Default Illocuting"
_TAGS = re.compile(r"<[^>]*>")


def check_task(task: str) -> str:
    """``task`` if it is one of :data:`TASKS`.

    Raises:
        ApiError: Another name.
    """
    if task not in TASKS:
        raise ApiError(f"unknown oAMF task {task!r}; argweb's modules are {', '.join(TASKS)}")
    return task


def readme(task: str) -> str:
    """The README of the module of ``task`` (what ``GET /amf/{task}`` serves)."""
    return (MODULES / check_task(task) / "README.md").read_text(encoding="utf-8")


def metadata(task: str) -> str:
    """The oAMF ``metadata.yaml`` of the module of ``task``."""
    return (MODULES / check_task(task) / "metadata.yaml").read_text(encoding="utf-8")


# -- reading the document ---------------------------------------------------------------------------


def parse_document(body: bytes, where: str = "xAIF document") -> dict[str, Any]:
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


def _aif(doc: dict[str, Any], task: str) -> dict[str, Any]:
    """The document's AIF section, checked (a turns/segments document may have none yet)."""
    aif = doc.get("AIF")
    if aif is None and task in ("turns", "segments"):
        aif = {}
    if not isinstance(aif, dict):
        raise ApiError(f"xAIF document: field 'AIF' must be an object, not {type(aif).__name__}")
    if task in ("turns", "segments") and aif.get("nodes") is None:
        aif["nodes"] = []  # a bare text: the map is made here
    try:
        # The AIF reader's own checks (xAIF's rules), as for `argweb corpus ingest xaif` and POST /aif.
        check_map(aif, "xAIF document: AIF", lenient=True)
    except LoaderError as e:
        raise ApiError(str(e)) from e
    if aif.get("edges") is None:
        aif["edges"] = []  # xAIF may leave them out; the modules add to them
    return aif


def _entries(aif: dict[str, Any], key: str) -> list[Any]:
    """``aif[key]`` (locutions, participants), which xAIF may leave out or null: read, never filled in."""
    return list(aif.get(key) or [])


def _append(aif: dict[str, Any], key: str, item: dict[str, Any]) -> None:
    if aif.get(key) is None:
        aif[key] = []
    aif[key].append(item)


def _text(doc: dict[str, Any]) -> str:
    """The document's text without markup (xAIF writes ``{"txt": ...}``, OVA3 a string)."""
    raw = doc.get("text")
    if isinstance(raw, dict):
        raw = raw.get("txt")
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise ApiError(f"xAIF document: field 'text' must be a string or {{'txt': string}}, not {type(raw).__name__}")
    text = re.sub(r"<br\s*/?>|</p>|</div>", "\n", raw, flags=re.IGNORECASE)
    return html.unescape(_TAGS.sub("", text))


def _participants(aif: dict[str, Any]) -> list[tuple[Any, str]]:
    """``(participantID, "firstname surname")`` of each participant."""
    return [
        (p.get("participantID"), " ".join(str(p.get(k) or "").strip() for k in ("firstname", "surname")).strip())
        for p in _entries(aif, "participants")
        if isinstance(p, dict)
    ]


def _speakers(aif: dict[str, Any]) -> dict[str, str]:
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


# -- provenance -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Producer:
    """What made the nodes a task adds: a model (name, version) or a rule-based step."""

    task: str
    model: str
    version: str


def _run_id(producer: Producer, aif: dict[str, Any]) -> str:
    from api.services.predictions import PredictionJob

    digest = hashlib.sha256(json.dumps(aif, sort_keys=True, default=str).encode()).hexdigest()[:16]
    parts = (f"amf-{producer.task}", producer.model, producer.version, digest)
    return PredictionJob(producer.task, producer.model, producer.version, parts).run().run_id


def _record(doc: dict[str, Any], producer: Producer, run_id: str, entries: list[dict[str, Any]]) -> None:
    """Append what a task added to the document's ``argweb`` section (kept from earlier modules)."""
    section = doc.get(SECTION)
    if not isinstance(section, dict):
        section = {}
    section = dict(section)
    section["predictions"] = [*list(section.get("predictions") or []), *entries]
    run = {"run_id": run_id, "task": producer.task, "model": producer.model, "model_version": producer.version}
    section["runs"] = [*list(section.get("runs") or []), {**run, "added": len(entries)}]
    doc[SECTION] = section


def _entry(node: dict[str, Any], producer: Producer, run_id: str, **extra: Any) -> dict[str, Any]:
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

    def __init__(self, aif: dict[str, Any]) -> None:
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


# -- tasks --------------------------------------------------------------------------------------------


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


def _locutions(doc: dict[str, Any], aif: dict[str, Any], task: str, ids: _Ids) -> list[dict[str, Any]]:
    """L-nodes (with locution entries and participants) for the turns or sentences of the text."""
    units = []
    for speaker, said in _turns(_text(doc), doc.get("dialog") if isinstance(doc.get("dialog"), bool) else None):
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


def segment_task(doc: dict[str, Any], task: str) -> dict[str, Any]:
    """``turns`` / ``segments``: locutions from the text when the map has none, propositions where absent."""
    out = copy.deepcopy(doc)
    aif = _aif(out, task)
    out["AIF"] = aif
    ids = _Ids(aif)
    rule = "speaker-turns" if task == "turns" else SEGMENTER
    producer = Producer(task, rule, version("argweb") if task == "turns" else version("pysbd"))
    run_id = _run_id(producer, aif)
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
    _record(out, producer, run_id, [_entry(n, producer, run_id) for n in added])
    return out


def ari_task(doc: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """``ari``: RA / CA / MA between the I-nodes, as ``argweb predict aif`` predicts them."""
    from api.services import mine
    from api.services.relations import FORMAT_OBJECTIVE, map_relations

    out = copy.deepcopy(doc)
    aif = _aif(out, "ari")
    loaded = mine.relation_model(settings)
    producer = Producer("ari", loaded.name, loaded.version)
    run_id = _run_id(producer, aif)
    try:
        (relations,) = map_relations(loaded.model, [("xAIF document", strip_relations(aif))], FORMAT_OBJECTIVE)
        before = len(aif["nodes"])
        with_relations = add_relations(aif, relations, "xAIF document")
    except LoaderError as e:
        raise ApiError(str(e)) from e
    out["AIF"] = {**aif, "nodes": with_relations["nodes"], "edges": with_relations["edges"]}
    added = with_relations["nodes"][before:]
    entries = [_entry(n, producer, run_id, score=rel.score) for n, rel in zip(added, relations, strict=True)]
    _record(out, producer, run_id, entries)
    return out


def discourse_task(doc: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """``discourse``: the discourse parser's links between the L-nodes, as TA nodes named by their sense."""
    from api.services import mine

    out = copy.deepcopy(doc)
    aif = _aif(out, "discourse")
    locutions = [n for n in aif["nodes"] if n["type"] == "L"]
    if not locutions:
        raise ApiError("xAIF document: no L-nodes to link (run a turns or segments module first)")
    loaded = mine.discourse_model(settings)
    producer = Producer("discourse", loaded.name, loaded.version)
    run_id = _run_id(producer, aif)
    speakers = _speakers(aif)
    texts = [split_speaker(str(n.get("text") or ""))[1] for n in locutions]
    links = mine.discourse_links(settings, texts, [speakers[str(n["nodeID"])] for n in locutions])
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


def _size(doc: dict[str, Any], limits: Limits) -> None:
    """Refuse a document beyond the prediction limits before any model runs."""
    aif = doc.get("AIF")
    raw = aif.get("nodes") if isinstance(aif, dict) else None
    nodes: list[Any] = raw if isinstance(raw, list) else []
    text = len(_text(doc)) + sum(len(str(n.get("text") or "")) for n in nodes if isinstance(n, dict))
    if len(nodes) > 10 * limits.utterances:
        raise ApiError(f"an xAIF document may have at most {10 * limits.utterances} nodes, not {len(nodes)}")
    if text > 2 * limits.chars:
        raise ApiError(f"an xAIF document may have at most {2 * limits.chars} characters of text, not {text}")


def run_task(task: str, doc: dict[str, Any], settings: Settings, limits: Limits | None = None) -> dict[str, Any]:
    """Run one oAMF task on an xAIF document (see the module docstring); nothing is stored.

    Args:
        task: One of :data:`TASKS`.
        doc: The xAIF document (not changed; a changed copy is returned).
        settings: Where the models are.
        limits: The prediction limits (size, requests at once); default: the settings'.

    Raises:
        ApiError: Unknown task, a malformed document (the record named), or beyond the limits.
        BusyError: As many model requests running as the limits allow (503, retry).
    """
    check_task(task)
    limits = limits or Limits(settings.predict_max_utterances, settings.predict_max_chars, settings.predict_max_running)
    _size(doc, limits)
    with running_slot(limits):
        if task in ("turns", "segments"):
            return segment_task(doc, task)
        if task == "ari":
            return ari_task(doc, settings)
        return discourse_task(doc, settings)


def predicted(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The entries of the ``argweb`` section of a document (what argweb's modules added)."""
    section = doc.get(SECTION)
    yield from (section.get("predictions") or []) if isinstance(section, dict) else []
