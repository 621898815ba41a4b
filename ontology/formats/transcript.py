"""Plain speaker-turn transcripts and AIF locutions as new dialogues (the input of live mining).

A transcript is UTF-8 text, one turn per ``Speaker: text`` line:

* a speaker name starts with a letter and has at most four words (``Fiona Bruce: ...``);
* a line that starts with whitespace, or does not look like ``Speaker: text``, continues the
  previous turn (a line before the first speaker is an error);
* ``[00:01:02] Speaker: text``, ``(01:02) Speaker: text`` and ``00:01:02 Speaker: text`` carry a
  time stamp (kept on the utterances of that turn); a line holding only a time stamp dates the
  next turn;
* blank lines and ``#`` comment lines are skipped.

A ``.json`` file (or text starting with ``{``) is read as an AIF map: its L-nodes in file order are
the utterances, the speaker taken from the map's ``locutions`` (``personID``) or the ``Speaker :``
prefix of the L text; the map's own I-nodes and relations are not read (mining predicts them).

Turns are segmented into sentence-level utterances with pySBD (rule-based sentence boundary
disambiguation, Sadvilkar & Neumann 2020: deterministic, no model, the "Golden Rules" of English
sentence splitting); AIF locutions are already segmented and are kept as they are.

The dialogue is built as AIF models it: one Locution per utterance, one Proposition with the same
text, and an Illocution (YA, ``Default Illocuting``) from the locution to the proposition, all
gold structure because it is the input. Ids are ``<corpus>:<name>-<digest>:...``: the digest of
the utterances makes the same transcript map to the same ids (re-mining merges, never duplicates),
and an edited transcript to a new dialogue.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ontology import records as rec
from ontology.errors import ApiError, LoaderError
from ontology.formats.common import decode_utf8, parse_json, read_bytes, require

AIF_SCHEME = "qt30"
ILLOCUTION = "Default Illocuting"
SEGMENTER = "pysbd"
MAX_SPEAKER_WORDS = 4

# Line breaks of a transcript: LF, CRLF, CR. Not the other characters str.splitlines() breaks at
# (U+2028, U+2029, U+0085, form feeds...): inside a turn they are text, and splitting there would
# make a second turn of whatever follows.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class TranscriptLimits:
    """What one transcript may hold, checked before anything expensive (parsing, segmenting, models).

    Attributes:
        bytes: Size of the file, checked before it is read.
        turns: Speaker turns (AIF: L-nodes), checked before any is segmented.
        turn_chars: Characters of one turn (sentence splitting grows faster than a turn's length).
        utterances: Utterances after segmentation (each is a unit the models read).
    """

    bytes: int = 1_000_000
    turns: int = 2_000
    turn_chars: int = 20_000
    utterances: int = 2_000


_STAMP = r"\d{1,2}(?::\d{2}){1,2}(?:[.,]\d+)?"
_STAMP_PREFIX = re.compile(rf"^(?:\[(?P<a>{_STAMP})\]|\((?P<b>{_STAMP})\)|(?P<c>{_STAMP})(?=\s|$))\s*")
# "Name: text" -- the colon must be followed by whitespace or the line end ("http://x" is text).
_SPEAKER = re.compile(r"^(?P<speaker>[^\W\d_][\w.'’\- ]{0,59}?)\s*:(?:\s+(?P<text>.*))?$")


@dataclass(frozen=True)
class Utterance:
    """One sentence-level unit of a transcript.

    Attributes:
        speaker: Who said it.
        text: What was said.
        line: Line of the file where its turn starts (AIF: position of the L-node).
        turn: Index of its turn.
        timestamp: Time stamp of the turn, as written, if any.
    """

    speaker: str
    text: str
    line: int
    turn: int
    timestamp: str | None = None


@dataclass
class _Turn:
    speaker: str
    line: int
    timestamp: str | None
    parts: list[str]


def parse_turns(path: Path, text: str) -> list[_Turn]:
    """The speaker turns of a plain transcript (see the module docstring for the format).

    Raises:
        LoaderError: Text before the first speaker, or no turn at all; naming file and line.
    """
    turns: list[_Turn] = []
    pending_stamp: str | None = None
    for number, raw in enumerate(_LINE_BREAK.split(text), start=1):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if "\x00" in line:
            raise LoaderError(f"{path}: line {number}: holds a NUL character (a binary file?)")
        stamp = None
        body = stripped
        if not raw[:1].isspace():
            found = _STAMP_PREFIX.match(stripped)
            if found:
                stamp = found.group("a") or found.group("b") or found.group("c")
                body = stripped[found.end() :]
                if not body:
                    pending_stamp = stamp
                    continue
        head = None if raw[:1].isspace() else _SPEAKER.match(body)
        if head and len(head.group("speaker").split()) <= MAX_SPEAKER_WORDS:
            turns.append(_Turn(head.group("speaker").strip(), number, stamp or pending_stamp, []))
            pending_stamp = None
            if head.group("text"):
                turns[-1].parts.append(head.group("text").strip())
        elif not turns:
            raise LoaderError(
                f"{path}: line {number}: text before the first speaker; a transcript has 'Speaker: text' lines"
            )
        else:
            turns[-1].parts.append(body)
    turns = [t for t in turns if t.parts]
    if not turns:
        raise LoaderError(f"{path}: no 'Speaker: text' turn found")
    return turns


@lru_cache(maxsize=1)
def _segmenter() -> Any:
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def segment(text: str) -> list[str]:
    """Sentence-level units of one turn (pySBD, English rules), stripped, empty ones dropped."""
    try:
        parts = _segmenter().segment(text)
    except Exception:
        # pySBD's rules raise on a few odd inputs (regex edge cases); such a turn stays one unit
        # rather than failing the whole transcript.
        parts = [text]
    return [s.strip() for s in parts if s.strip()]


def read_utterances(path: Path, limits: TranscriptLimits | None = None) -> list[Utterance]:
    """The utterances of a transcript file or an AIF map, in order.

    ``limits`` are checked as early as each can be: the file's size before it is read, the number
    and length of turns before any is segmented, the utterances after.

    Raises:
        LoaderError: Over a limit, not UTF-8, malformed, or empty; the message names the file and the
            line (AIF: the node).
    """
    limits = limits or TranscriptLimits()
    try:
        size = path.stat().st_size
    except OSError as e:
        raise LoaderError(f"{path}: cannot read ({e.strerror})") from e
    if size > limits.bytes:
        raise LoaderError(f"{path}: {size:,} bytes; a transcript may have at most {limits.bytes:,}")
    data = read_bytes(path)
    text = decode_utf8(path, data)
    if path.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        out = _aif_utterances(path, text, limits)
    else:
        turns = parse_turns(path, text)
        _check_turns(path, [(t.line, " ".join(t.parts)) for t in turns], limits, "line")
        out = []
        for k, turn in enumerate(turns):
            for sentence in segment(" ".join(turn.parts)):
                out.append(Utterance(turn.speaker, sentence, turn.line, k, turn.timestamp))
    if len(out) > limits.utterances:
        raise LoaderError(f"{path}: {len(out):,} utterances; a transcript may have at most {limits.utterances:,}")
    return out


def _check_turns(path: Path, turns: list[tuple[int | str, str]], limits: TranscriptLimits, unit: str) -> None:
    """Refuse too many turns, or one too long, before any is segmented."""
    if len(turns) > limits.turns:
        raise LoaderError(f"{path}: {len(turns):,} turns; a transcript may have at most {limits.turns:,}")
    for where, said in turns:
        if len(said) > limits.turn_chars:
            raise LoaderError(
                f"{path}: {unit} {where}: a turn of {len(said):,} characters; one turn may have at most "
                f"{limits.turn_chars:,}"
            )


def _aif_utterances(path: Path, text: str, limits: TranscriptLimits) -> list[Utterance]:
    data = parse_json(path, text)
    nodes = require(data, "nodes", list, str(path))
    l_nodes = [(pos, node) for pos, node in enumerate(nodes) if isinstance(node, dict) and node.get("type") == "L"]
    _check_turns(path, [(f"#{pos}", str(node.get("text") or "")) for pos, node in l_nodes], limits, "node")
    persons: dict[str, str] = {}
    for k, loc in enumerate(data.get("locutions") or []):
        where = f"{path}: locution #{k}"
        node_id = str(require(loc, "nodeID", (str, int), where))
        if loc.get("personID") is not None:
            persons.setdefault(node_id, str(loc["personID"]))
    out: list[Utterance] = []
    for pos, node in enumerate(nodes):
        where = f"{path}: node #{pos}"
        if require(node, "type", str, where) != "L":
            continue
        local = str(require(node, "nodeID", (str, int), where))
        rec.check_fields([("nodeID", local)], where)
        said = str(require(node, "text", str, f"{path}: node {local}"))
        speaker, _, rest = said.partition(" : ")
        if not rest:
            speaker, rest = "", said
        speaker = persons.get(local) or speaker.strip()
        if not speaker:
            raise LoaderError(f"{path}: node {local}: a locution without a speaker (no personID, no 'Speaker : ')")
        if rest.strip():
            stamp = node.get("timestamp")
            out.append(Utterance(speaker, rest.strip(), pos, len(out), None if stamp is None else str(stamp)))
    if not out:
        raise LoaderError(f"{path}: an AIF map without locutions (L-nodes)")
    return out


def transcript_key(name: str, utterances: list[Utterance]) -> str:
    """The local id of a transcript's dialogue: its name plus a digest of its utterances."""
    digest = hashlib.sha1()
    for u in utterances:
        digest.update(f"{u.speaker}\t{u.text}\n".encode())
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "transcript"
    return f"{stem}-{digest.hexdigest()[:10]}"


def transcript_bundle(utterances: list[Utterance], corpus: str, name: str, source: str = "") -> rec.CorpusBundle:
    """The dialogue of ``utterances`` as a corpus bundle (validated; nothing written).

    Args:
        utterances: In order (at least one).
        corpus: Corpus id in the graph.
        name: Dialogue name (the file stem).
        source: Where the utterances came from (file name), stored on the dialogue.

    Raises:
        LoaderError: No utterances, or a field is invalid (over the size limit, NUL).
    """
    if not utterances:
        raise LoaderError(f"{source or name}: no utterances")
    key = transcript_key(name, utterances)
    dlg_id = rec.make_id(corpus, key)
    where = source or name
    nodes: list[rec.NodeRecord] = [
        rec.build(
            rec.DiscourseRecord,
            where,
            id=dlg_id,
            corpus=corpus,
            kind="Dialogue",
            local_id=key,
            name=name,
            source=source,
        )
    ]
    edges: list[rec.EdgeRecord] = []
    speakers: dict[str, rec.SpeakerRecord] = {}
    prop_class = rec.scheme_term(AIF_SCHEME, "I").iri
    for i, u in enumerate(utterances):
        uwhere = f"{where}: line {u.line}"
        sid = rec.make_id(corpus, "speaker", u.speaker)
        if sid not in speakers:
            speakers[sid] = rec.build(rec.SpeakerRecord, uwhere, id=sid, corpus=corpus, name=u.speaker)
        unit = {"corpus": corpus, "discourse": dlg_id, "local_id": str(i), "position": i, "text": u.text}
        loc = rec.build(
            rec.LocutionRecord,
            uwhere,
            id=rec.make_id(corpus, key, "L", i),
            speaker=u.speaker,
            speaker_id=sid,
            timestamp=u.timestamp,
            **unit,
        )
        prop = rec.build(
            rec.PropositionRecord, uwhere, id=rec.make_id(corpus, key, "I", i), scheme_class=prop_class, **unit
        )
        ya = rec.relation_from_scheme(
            AIF_SCHEME,
            "YA",
            uwhere,
            scheme_label=ILLOCUTION,
            aif_type="YA",
            id=rec.make_id(corpus, key, "YA", i),
            corpus=corpus,
            discourse=dlg_id,
            local_id=f"YA{i}",
            position=i,
        )
        nodes += [loc, prop, ya]
        edges += rec.link(ya, [loc.id], [prop.id])
    nodes.extend(speakers.values())
    record = rec.CorpusRecord(id=corpus, corpus=corpus, name=f"mined transcripts ({corpus})", source=source or name)
    bundle = rec.CorpusBundle(record, nodes, edges, origin=where)
    bundle.validate()
    return bundle


@dataclass
class TranscriptDialogue:
    """A transcript's dialogue ready to be mined: its bundle and its units in order.

    Attributes:
        bundle: The dialogue as a corpus bundle (:func:`transcript_bundle`).
        dialogue_id: Graph id of the dialogue.
        utterances: The utterances it was made of.
        locutions: Locution ids, in order.
        propositions: Proposition ids, in order (one per locution).
    """

    bundle: rec.CorpusBundle
    dialogue_id: str
    utterances: list[Utterance]
    locutions: list[str]
    propositions: list[str]


def transcript_dialogue(utterances: list[Utterance], corpus: str, name: str, source: str = "") -> TranscriptDialogue:
    """The dialogue bundle of ``utterances`` and the ids of its locutions and propositions.

    Raises:
        LoaderError: No utterances or an invalid field.
    """
    bundle = transcript_bundle(utterances, corpus, name, source)
    dialogue = next(n for n in bundle.nodes if isinstance(n, rec.DiscourseRecord))
    locs = [n.id for n in bundle.nodes if isinstance(n, rec.LocutionRecord)]
    props = [n.id for n in bundle.nodes if isinstance(n, rec.PropositionRecord)]
    return TranscriptDialogue(bundle, dialogue.id, utterances, locs, props)


def utterances_of(turns: Sequence[dict[str, str]]) -> list[Utterance]:
    """Utterances of ``[{"speaker", "text"}]`` turns (API), each turn segmented like a transcript's.

    Raises:
        ApiError: A turn without speaker or text.
    """
    out: list[Utterance] = []
    for k, turn in enumerate(turns):
        speaker, text = (turn.get("speaker") or "").strip(), (turn.get("text") or "").strip()
        if not speaker or not text:
            raise ApiError(f"utterance #{k}: needs a non-empty speaker and text")
        out.extend(Utterance(speaker, s, k, k) for s in segment(text))
    if not out:
        raise ApiError("no utterances")
    return out
