"""M-Arg (Mestre et al., ArgMining 2021): US 2020 debates with crowd support/attack/neither pairs.

Files (CSV, UTF-8; see ``files_explanation.md`` of the corpus), recognised by their header:

* sentence files ``dataset_context_definition.csv`` / ``full_feature_extraction_dataset.csv``
  (``id, text, speaker, speaker_id, audio_file, context, debate[, timestamp]``): one row per
  sentence ``nDDXXXX`` (debate part ``DD``, sentence number ``XXXX`` within the part). Each sentence
  becomes a Locution and a Proposition with the same text, joined by an Illocution (AIF YA) node;
  each debate part a Dialogue.
* aeneas timestamp files (no header: ``fNNNNNN, start s, end s, text``), one per debate part;
  row ``k`` is sentence ``k`` of the part. They set ``start_time`` / ``end_time`` on the locutions.
* pair files: ``aggregated_dataset.csv`` (one row per pair: ``relation``, ``relation:confidence``,
  ``_trusted_judgements``...), ``full_dataset.csv`` (one row per crowd judgement: ``_worker_id``,
  ``_trust``, ``_tainted``, ``_golden``, ``confidence``, ``relation``...),
  ``annotated_sentences_reference.csv`` (pair id -> sentence ids, used as a cross-check) and the
  gold-question file ``full_dataset_processing.csv`` (``relation_gold``, ``relation_gold_reason``).

Pair ids ``nDDXXXXbYYpZZWW`` name the centre sentence ``XXXX`` of a +-``YY`` context window and
the last two digits ``ZZ`` / ``WW`` of sentence 1 / sentence 2; each is the one sentence number in
``[XXXX-YY, XXXX+YY]`` ending in those digits (checked against all gold rows of the corpus).

Every annotated pair becomes one relation node between the two propositions (``sentence_1 ->
rel -> sentence_2``; the annotation task itself is undirected): Support / Attack, or a NonRelation
for Neither. Its label is the gold answer when the pair was a gold question, else the aggregated
crowd label, else the trust-weighted majority of the untainted judgements. Every crowd judgement
is a Judgement node (JUDGES the pair's relation node, JUDGED_BY its Annotator).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ontology import records
from ontology.errors import LoaderError
from ontology.formats.common import (
    Annotators,
    Row,
    corpus_bundle,
    decode_utf8,
    parse_bool,
    parse_delimited,
    parse_float,
    read_bytes,
    require_columns,
    vote_fields,
)
from ontology.records import build, link, make_id, relation_from_scheme
from ontology.terms import Label

CORPUS = "m-arg"
NAME = "M-Arg: multimodal argument mining dataset of the US 2020 debates (Mestre et al. 2021)"

# Debate part id -> name of its split audio / timestamp file (from the corpus' M-arg_preprocessing.py).
PART_NAMES: dict[str, str] = {
    "00": "us_election_2020_1st_presidential_debate_part1",
    "01": "us_election_2020_1st_presidential_debate_part2",
    "02": "us_election_2020_2nd_presidential_debate_part1",
    "03": "us_election_2020_2nd_presidential_debate_part2",
    "04": "us_election_2020_biden_town_hall_part1",
    "05": "us_election_2020_biden_town_hall_part2",
    "06": "us_election_2020_biden_town_hall_part3",
    "07": "us_election_2020_biden_town_hall_part4",
    "08": "us_election_2020_biden_town_hall_part5",
    "09": "us_election_2020_biden_town_hall_part6",
    "10": "us_election_2020_biden_town_hall_part7",
    "11": "us_election_2020_trump_town_hall_1",
    "12": "us_election_2020_trump_town_hall_2",
    "13": "us_election_2020_trump_town_hall_3",
    "14": "us_election_2020_trump_town_hall_4",
    "15": "us_election_2020_vice_presidential_debate_1",
    "16": "us_election_2020_vice_presidential_debate_2",
}
_PART_BY_NAME = {name: part for part, name in PART_NAMES.items()}

SENTENCE_ID = re.compile(r"^n(\d{2})(\d{4})$")
PAIR_ID = re.compile(r"^n(\d{2})(\d{4})b(\d{2})p(\d{2})(\d{2})$")
TIMESTAMP_ID = re.compile(r"^f\d{6}$")
# Topics that mean "no topic" (moderator turns etc.); the feature file leaves them empty.
NO_TOPIC = frozenset({"", "Ignore"})
LABELS = {"support": "Support", "attack": "Attack", "neither": "Neither"}
# Tie-break of the trust-weighted majority: the more cautious label first.
_LABEL_ORDER = {"Neither": 0, "Support": 1, "Attack": 2}

SENTENCE_COLUMNS = ("id", "text", "speaker", "speaker_id", "audio_file", "context", "debate")
FULL_COLUMNS = ("_unit_id", "_worker_id", "_trust", "_tainted", "_golden", "confidence", "relation", "pair_id")
AGGREGATED_COLUMNS = ("pair_id", "relation", "relation:confidence")
REFERENCE_COLUMNS = ("pair_id", "sentence_1_id", "sentence_2_id")
GOLD_COLUMNS = ("pair_id", "relation_gold")


# -- corpus model -----------------------------------------------------------------------------------


@dataclass
class _Sentence:
    sid: str
    part: str
    number: int
    text: str
    speaker: str | None
    speaker_key: str | None
    audio_file: str | None
    topic: str | None
    timestamp: str | None
    where: str
    start: float | None = None
    end: float | None = None


@dataclass
class _Judgement:
    unit: str
    worker: str
    label: str
    trust: float
    confidence: float
    tainted: bool
    golden: bool
    where: str


def _most_given(values: Counter[str]) -> str | None:
    """The value most rows give, the alphabetically first of equals: rows have no meaningful order."""
    return min(values, key=lambda v: (-values[v], v)) if values else None


@dataclass
class _Gold:
    """The gold answer of a pair that was a gold question, with the first row that gave it."""

    label: str
    where: str
    reasons: Counter[str] = field(default_factory=Counter)


@dataclass
class _Pair:
    pair_id: str
    s1: str
    s2: str
    where: str
    topics: Counter[str] = field(default_factory=Counter)
    gold: _Gold | None = None
    aggregated: tuple[str, float, int | None] | None = None
    judgements: list[_Judgement] = field(default_factory=list)


def _aggregate_rank(aggregated: tuple[str, float, int | None]) -> tuple[float, int, int]:
    label, confidence, count = aggregated
    return confidence, -_LABEL_ORDER[label], -1 if count is None else count


def _label(raw: str, where: str, column: str) -> str:
    label = LABELS.get(raw.strip().lower())
    if label is None:
        raise LoaderError(
            f"{where}: column {column!r}: unknown M-Arg relation {raw!r}; expected Support/Attack/Neither"
        )
    return label


def _topic(raw: str) -> str | None:
    raw = raw.strip()
    return None if raw in NO_TOPIC else raw


def resolve_pair(pair_id: str, where: str) -> tuple[str, str]:
    """The sentence ids ``(sentence_1, sentence_2)`` a pair id names.

    Raises:
        LoaderError: Malformed id, or digits naming no sentence in the context window.
    """
    m = PAIR_ID.match(pair_id)
    if m is None:
        raise LoaderError(f"{where}: malformed pair id {pair_id!r}; expected nDDXXXXbYYpZZWW")
    dd, centre, buffer = m.group(1), int(m.group(2)), int(m.group(3))
    out: list[str] = []
    for digits in (int(m.group(4)), int(m.group(5))):
        # Within a window of at most 99 numbers the last two digits pick exactly one.
        found = [n for n in range(max(centre - buffer, 0), centre + buffer + 1) if n % 100 == digits]
        if len(found) != 1:
            raise LoaderError(
                f"{where}: pair id {pair_id!r}: no single sentence ending in {digits:02d} "
                f"within {buffer} of sentence {centre}"
            )
        out.append(f"n{dd}{found[0]:04d}")
    return out[0], out[1]


class _MargReader:
    def __init__(self) -> None:
        self.sentences: dict[str, _Sentence] = {}
        self.pairs: dict[str, _Pair] = {}
        self.references: list[tuple[str, str, str, str]] = []
        self.timestamp_files: list[tuple[Path, str]] = []

    # sentence files

    def read_sentences(self, path: Path, header: list[str], rows: list[Row]) -> None:
        require_columns(path, header, SENTENCE_COLUMNS, "M-Arg sentence")
        seen: set[str] = set()
        for row in rows:
            sid = row.get("id").strip()
            where = f"{path}: line {row.line} (sentence {sid})"
            m = SENTENCE_ID.match(sid)
            if m is None:
                raise LoaderError(f"{where}: malformed sentence id; expected nDDXXXX")
            if sid in seen:
                raise LoaderError(f"{where}: duplicate sentence id")
            seen.add(sid)
            part, number = m.group(1), int(m.group(2))
            try:
                debate = int(row.get("debate"))
            except ValueError as e:
                raise LoaderError(f"{where}: column 'debate' is not a number: {row.get('debate')!r}") from e
            if debate != int(part):
                raise LoaderError(f"{where}: debate {debate} contradicts the id's debate part {part}")
            speaker = row.get("speaker").strip()
            key = row.get("speaker_id").strip()
            # Two sentences the corpus could not attribute carry speaker "error".
            known = speaker not in ("", "error") and key not in ("", "error")
            if known:
                try:
                    key = str(int(key))
                except ValueError as e:
                    raise LoaderError(f"{where}: column 'speaker_id' is not a number: {key!r}") from e
            timestamp = row.get("timestamp").strip() or None
            sentence = _Sentence(
                sid=sid,
                part=part,
                number=number,
                text=row.get("text"),
                speaker=speaker if known else None,
                speaker_key=key if known else None,
                audio_file=row.get("audio_file").strip() or None,
                topic=_topic(row.get("context")),
                timestamp=timestamp,
                where=where,
            )
            self._merge_sentence(sentence)

    def _merge_sentence(self, new: _Sentence) -> None:
        old = self.sentences.get(new.sid)
        if old is None:
            self.sentences[new.sid] = new
            return
        # The two sentence files describe the same sentences; they must agree.
        for attr in ("text", "speaker", "speaker_key", "audio_file"):
            if getattr(old, attr) != getattr(new, attr):
                raise LoaderError(f"{new.where}: {attr} {getattr(new, attr)!r} contradicts {old.where}")
        for attr in ("topic", "timestamp"):
            a, b = getattr(old, attr), getattr(new, attr)
            if a is not None and b is not None and a != b:
                raise LoaderError(f"{new.where}: {attr} {b!r} contradicts {old.where}")
            if a is None:
                setattr(old, attr, b)

    # timestamps

    def apply_timestamps(self, path: Path, text: str) -> None:
        rows = list(csv.reader(io.StringIO(text, newline="")))
        rows = [r for r in rows if r]
        part = self._timestamp_part(path, rows)
        for k, fields in enumerate(rows):
            where = f"{path}: line {k + 1}"
            if len(fields) != 4:
                raise LoaderError(f"{where}: expected 4 fields (id, start, end, text), got {len(fields)}")
            fid, start, end, utterance = fields
            sid = f"n{part}{k:04d}"
            sentence = self.sentences.get(sid)
            if sentence is None:
                raise LoaderError(f"{where}: timestamp {fid} is row {k} of debate part {part}, but {sid} is missing")
            if sentence.timestamp is not None and sentence.timestamp != fid:
                raise LoaderError(f"{where}: timestamp {fid} does not match {sid}'s timestamp {sentence.timestamp}")
            if utterance != sentence.text:
                raise LoaderError(f"{where}: aligned text {utterance!r} differs from {sid} ({sentence.where})")
            sentence.start = parse_float(start, where, "start")
            sentence.end = parse_float(end, where, "end")
            if sentence.timestamp is None:
                sentence.timestamp = fid

    def _timestamp_part(self, path: Path, rows: list[list[str]]) -> str:
        stem = path.stem.removesuffix("_timestamp")
        if stem in _PART_BY_NAME:
            return _PART_BY_NAME[stem]
        # Unknown file name: the part whose first sentences carry these ids and texts.
        probe = rows[: min(len(rows), 5)]
        candidates = [
            part
            for part in sorted({s.part for s in self.sentences.values()})
            if probe
            and all(
                (s := self.sentences.get(f"n{part}{k:04d}")) is not None and len(r) == 4 and s.text == r[3]
                for k, r in enumerate(probe)
            )
        ]
        if len(candidates) != 1:
            raise LoaderError(
                f"{path}: cannot tell which debate part this timestamp file aligns "
                f"(name not one of the corpus' files; text matches parts {candidates})"
            )
        return candidates[0]

    # pair files

    def _pair(self, pair_id: str, row: Row, path: Path) -> _Pair:
        where = f"{path}: line {row.line} (pair {pair_id})"
        pair = self.pairs.get(pair_id)
        if pair is None:
            s1, s2 = resolve_pair(pair_id, where)
            for sid in (s1, s2):
                if sid not in self.sentences:
                    raise LoaderError(f"{where}: pair id names sentence {sid}, which is not in the sentence files")
            pair = _Pair(pair_id, s1, s2, where)
            self.pairs[pair_id] = pair
        # Pair files repeat both sentences; a mismatch means the id resolves to the wrong sentences.
        for column, sid in (("sentence_1", pair.s1), ("sentence_2", pair.s2)):
            given = row.get(column) or (row.get("setence_2") if column == "sentence_2" else "")
            if given and " ".join(given.split()) != " ".join(self.sentences[sid].text.split()):
                raise LoaderError(f"{where}: {column} {given!r} is not the text of {sid}")
        topic = _topic(row.get("topic"))
        if topic is not None:
            pair.topics[topic] += 1
        return pair

    def _pair_rows(
        self, path: Path, header: list[str], rows: list[Row], columns: Sequence[str], what: str
    ) -> Iterator[tuple[Row, _Pair, str]]:
        """The rows of a pair file (its columns checked first), each with its pair and where it stands."""
        require_columns(path, header, columns, what)
        for row in rows:
            pair = self._pair(row.get("pair_id").strip(), row, path)
            yield row, pair, f"{path}: line {row.line} (pair {pair.pair_id})"

    def _gold(self, pair: _Pair, row: Row, where: str) -> None:
        raw = row.get("relation_gold").strip()
        if not raw:
            return
        gold = _label(raw, where, "relation_gold")
        if pair.gold is None:
            pair.gold = _Gold(gold, where)
        elif pair.gold.label != gold:
            raise LoaderError(f"{where}: gold label {gold} contradicts {pair.gold.label} ({pair.gold.where})")
        reason = row.get("relation_gold_reason").strip()
        if reason:
            pair.gold.reasons[reason] += 1

    def read_gold(self, path: Path, header: list[str], rows: list[Row]) -> None:
        for row, pair, where in self._pair_rows(path, header, rows, GOLD_COLUMNS, "M-Arg gold-question"):
            if not row.get("relation_gold").strip():
                raise LoaderError(f"{where}: empty relation_gold")
            self._gold(pair, row, where)

    def read_aggregated(self, path: Path, header: list[str], rows: list[Row]) -> None:
        for row, pair, where in self._pair_rows(path, header, rows, AGGREGATED_COLUMNS, "M-Arg aggregated"):
            label = _label(row.get("relation"), where, "relation")
            confidence = parse_float(row.get("relation:confidence"), where, "relation:confidence")
            trusted = row.get("_trusted_judgements").strip()
            count = int(parse_float(trusted, where, "_trusted_judgements")) if trusted else None
            # A gold pair shown as two units has two aggregated rows: keep the more confident one,
            # of equally confident ones the more cautious label (whichever row comes first).
            new = (label, confidence, count)
            if pair.aggregated is None or _aggregate_rank(new) > _aggregate_rank(pair.aggregated):
                pair.aggregated = new
            self._gold(pair, row, where)

    def read_full(self, path: Path, header: list[str], rows: list[Row]) -> None:
        for row, pair, where in self._pair_rows(path, header, rows, FULL_COLUMNS, "M-Arg full (per-judgement)"):
            worker = row.get("_worker_id").strip()
            unit = row.get("_unit_id").strip()
            if not worker or not unit:
                raise LoaderError(f"{where}: empty _worker_id or _unit_id")
            pair.judgements.append(
                _Judgement(
                    unit=unit,
                    worker=worker,
                    label=_label(row.get("relation"), where, "relation"),
                    trust=parse_float(row.get("_trust"), where, "_trust"),
                    confidence=parse_float(row.get("confidence"), where, "confidence"),
                    tainted=parse_bool(row.get("_tainted"), f"{where}: column '_tainted'"),
                    golden=parse_bool(row.get("_golden"), f"{where}: column '_golden'"),
                    where=where,
                )
            )
            self._gold(pair, row, where)

    def read_reference(self, path: Path, header: list[str], rows: list[Row]) -> None:
        require_columns(path, header, REFERENCE_COLUMNS, "M-Arg sentence-reference")
        for row in rows:
            pair_id = row.get("pair_id").strip()
            where = f"{path}: line {row.line} (pair {pair_id})"
            s1, s2 = resolve_pair(pair_id, where)
            given = (row.get("sentence_1_id").strip(), row.get("sentence_2_id").strip())
            if given != (s1, s2):
                raise LoaderError(f"{where}: sentence ids {given} contradict the pair id, which names {(s1, s2)}")
            for sid in given:
                if sid not in self.sentences:
                    raise LoaderError(f"{where}: sentence {sid} is not in the sentence files")
            self.references.append((pair_id, s1, s2, where))


def _kind(path: Path, text: str) -> tuple[str, list[str], list[Row]]:
    first = text.split("\n", 1)[0]
    first_field = next(csv.reader([first]), [""])
    if first_field and TIMESTAMP_ID.match(first_field[0].strip()):
        return "timestamps", [], []
    header, rows = parse_delimited(path, text)
    cols = set(header)
    if "_worker_id" in cols:
        return "full", header, rows
    if "relation:confidence" in cols or "_unit_state" in cols:
        return "aggregated", header, rows
    if "sentence_1_id" in cols or "sentence_2_id" in cols:
        return "reference", header, rows
    if "relation_gold" in cols:
        return "gold", header, rows
    if "pair_id" in cols:
        # A pair file that lost the columns that tell its format apart.
        raise LoaderError(
            f"{path}: line 1: pair file without _worker_id, relation:confidence, sentence_1_id or relation_gold"
        )
    if "id" in cols or "text" in cols:
        return "sentences", header, rows
    raise LoaderError(f"{path}: line 1: not an M-Arg file (header {header[:8]})")


# Pair files need every sentence; timestamps need them too.
_ORDER = {"sentences": 0, "timestamps": 1, "reference": 2, "gold": 3, "aggregated": 3, "full": 3}


def load_marg(paths: list[Path]) -> records.CorpusBundle:
    """Load M-Arg CSV files (any mix of the documented formats) into one bundle.

    Args:
        paths: Sentence files, timestamp files and pair files; sentence files are required
            whenever pair or timestamp files are given.

    Raises:
        LoaderError: Wrong encoding, missing column, malformed record, a pair id naming a
            sentence that is missing, or files that contradict each other; the message names the
            file, line and record.
    """
    if not paths:
        raise LoaderError("no M-Arg files given")
    reader = _MargReader()
    parsed: list[tuple[int, Path, str, str, list[str], list[Row]]] = []
    for path in paths:
        text = decode_utf8(path, read_bytes(path))
        kind, header, rows = _kind(path, text)
        parsed.append((_ORDER[kind], path, kind, text, header, rows))
    parsed.sort(key=lambda item: (item[0], str(item[1])))
    for _, path, kind, text, header, rows in parsed:
        if kind != "sentences" and not reader.sentences:
            raise LoaderError(f"{path}: M-Arg {kind} file given without the sentence file(s) it refers to")
        if kind == "sentences":
            reader.read_sentences(path, header, rows)
        elif kind == "timestamps":
            reader.apply_timestamps(path, text)
        elif kind == "reference":
            reader.read_reference(path, header, rows)
        elif kind == "gold":
            reader.read_gold(path, header, rows)
        elif kind == "aggregated":
            reader.read_aggregated(path, header, rows)
        else:
            reader.read_full(path, header, rows)
    for pair_id, s1, s2, where in reader.references:
        pair = reader.pairs.get(pair_id)
        if pair is not None and (pair.s1, pair.s2) != (s1, s2):
            raise LoaderError(f"{where}: sentence ids contradict {pair.where}")
    origin = ", ".join(str(p) for p in paths)
    nodes, edges = _records(reader)
    return corpus_bundle(CORPUS, NAME, paths, nodes, edges, origin)


def _records(reader: _MargReader) -> tuple[list[records.NodeRecord], list[records.EdgeRecord]]:
    nodes: list[records.NodeRecord] = []
    edges: list[records.EdgeRecord] = []
    parts: dict[str, str] = {}
    speakers: dict[str, records.SpeakerRecord] = {}
    for sid in sorted(reader.sentences):
        s = reader.sentences[sid]
        dialogue = parts.get(s.part)
        if dialogue is None:
            dialogue = make_id(CORPUS, "part", s.part)
            parts[s.part] = dialogue
            nodes.append(
                build(
                    records.DiscourseRecord,
                    s.where,
                    id=dialogue,
                    corpus=CORPUS,
                    kind="Dialogue",
                    local_id=s.part,
                    name=PART_NAMES.get(s.part),
                    part=s.part,
                )
            )
        speaker_id = None
        if s.speaker_key is not None and s.speaker is not None:
            speaker_id = make_id(CORPUS, "speaker", s.speaker_key)
            known = speakers.get(speaker_id)
            if known is None:
                speakers[speaker_id] = build(
                    records.SpeakerRecord, s.where, id=speaker_id, corpus=CORPUS, name=s.speaker
                )
            elif known.name != s.speaker:
                raise LoaderError(
                    f"{s.where}: speaker_id {s.speaker_key} is {known.name!r} elsewhere, not {s.speaker!r}"
                )
        common = {"corpus": CORPUS, "discourse": dialogue, "local_id": sid, "position": s.number}
        locution = build(
            records.LocutionRecord,
            s.where,
            id=make_id(CORPUS, sid, "L"),
            text=s.text,
            speaker=s.speaker,
            speaker_id=speaker_id,
            topic=s.topic,
            part=s.part,
            audio_file=s.audio_file,
            timestamp=s.timestamp,
            start_time=s.start,
            end_time=s.end,
            **common,
        )
        proposition = build(
            records.PropositionRecord, s.where, id=make_id(CORPUS, sid, "I"), text=s.text, topic=s.topic, **common
        )
        illocution = build(
            records.RelationRecord,
            s.where,
            id=make_id(CORPUS, sid, "YA"),
            kind=Label.Illocution,
            aif_type="YA",
            origin="gold",
            **common,
        )
        nodes += [locution, proposition, illocution]
        edges += link(illocution, [locution.id], [proposition.id])
    nodes.extend(speakers.values())

    annotators = Annotators(CORPUS)
    for pair_id in sorted(reader.pairs):
        pair = reader.pairs[pair_id]
        relation = _pair_relation(pair, parts[pair.s1[1:3]])
        nodes.append(relation)
        edges += link(relation, [make_id(CORPUS, pair.s1, "I")], [make_id(CORPUS, pair.s2, "I")])
        seen: dict[tuple[str, str], int] = defaultdict(int)
        # A worker who judged a unit twice has the repeats numbered in an order from their content.
        for j in sorted(pair.judgements, key=_judgement_order):
            seen[(j.unit, j.worker)] += 1
            n = seen[(j.unit, j.worker)]
            local = [pair_id, "J", j.unit, j.worker] + ([str(n)] if n > 1 else [])
            nodes.append(
                annotators.judgement(
                    j.where,
                    j.worker,
                    id=make_id(CORPUS, *local),
                    relation=relation.id,
                    label=j.label,
                    trust=j.trust,
                    confidence=j.confidence,
                    tainted=j.tainted,
                    golden=j.golden,
                )
            )
    nodes.extend(annotators.records.values())
    return nodes, edges


def _judgement_order(j: _Judgement) -> tuple[str, str, str, float, float, bool, bool]:
    return j.unit, j.worker, j.label, j.trust, j.confidence, j.tainted, j.golden


def _pair_relation(pair: _Pair, dialogue: str) -> records.RelationRecord:
    trusted = [j for j in pair.judgements if not j.tainted]
    trusts: dict[str, list[float]] = defaultdict(list)
    for j in trusted or pair.judgements:
        trusts[j.label].append(j.trust)
    # fsum: exactly rounded, so the weights do not depend on the order of the judgement rows.
    weights = {label: math.fsum(values) for label, values in trusts.items()}
    if pair.gold is not None:
        label = pair.gold.label
    elif pair.aggregated is not None:
        label = pair.aggregated[0]
    else:
        label = max(weights, key=lambda k: (weights[k], -_LABEL_ORDER[k]))
    confidence: float | None = None
    if pair.aggregated is not None and pair.aggregated[0] == label:
        confidence = pair.aggregated[1]
    elif trusted:
        # Figure Eight's "relation:confidence": the trust-weighted share of the label.
        total = math.fsum(j.trust for j in trusted)
        confidence = weights.get(label, 0.0) / total if total > 0 else None
    votes: int | None = None
    count: int | None = None
    if trusted:
        count = len(trusted)
        votes = sum(1 for j in trusted if j.label == label)
    elif pair.aggregated is not None:
        count = pair.aggregated[2]
    return relation_from_scheme(
        CORPUS,
        label,
        pair.where,
        id=make_id(CORPUS, "pair", pair.pair_id),
        corpus=CORPUS,
        discourse=dialogue,
        local_id=pair.pair_id,
        topic=_most_given(pair.topics),
        # The crowd's aggregate confidence in the label (never a model score).
        confidence=confidence,
        **vote_fields(votes, count),
        reason=_most_given(pair.gold.reasons) if pair.gold is not None else None,
    )
