"""Pydantic records: the one domain model every loader produces and the graph store consumes.

Field names are Neo4j property keys declared in the ontology (see ``ontology/terms.py``); a
test checks that every field written to the graph is declared there.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ontology.errors import LoaderError, OntologyError
from ontology.labels import RelationLabel
from ontology.terms import LABEL_ANCESTORS, SCHEME_TERMS, Label, RelType, SchemeTerm

Origin = Literal["gold", "predicted"]
# Properties only a model's output carries; a gold relation has none of them.
PREDICTION_FIELDS: tuple[str, ...] = ("score", "model", "model_version", "run_id")
RELATION_LABELS: frozenset[Label] = frozenset(
    label for label, ancestors in LABEL_ANCESTORS.items() if Label.Relation in ancestors
)
ROLE_LABELS: frozenset[Label] = frozenset({Label.Claim, Label.Premise})

_SCHEMES: dict[tuple[str, str], SchemeTerm] = {(t.corpus, t.raw): t for t in SCHEME_TERMS}

#: Largest text field a record may carry, in UTF-8 bytes. The longest field of any supported
#: corpus is a few KiB (ContextDeP HTML contexts, M-Arg token lists); a megabyte-sized "text" is a
#: broken file, and past 16 MiB the RDF store cannot even parse the exported literal. Loaders refuse
#: larger fields with the file and the record named; the RDF export refuses them too.
MAX_FIELD_BYTES = 1 << 20


#: Largest id, key or scheme label, in UTF-8 bytes. These fields are indexed, and Neo4j cannot index
#: a value of about 8 KiB or more (the write fails as an internal database error); real ids are a
#: few dozen bytes.
MAX_KEY_BYTES = 4096
#: The fields :data:`MAX_KEY_BYTES` applies to: ids, the ids a record points to, and the indexed labels.
KEY_FIELDS: frozenset[str] = frozenset(
    {
        "id",
        "corpus",
        "local_id",
        "discourse",
        "speaker_id",
        "annotator",
        "relation",
        "scheme_label",
        "scheme_class",
        "scheme_id",
        "sense",
        "origin",
        "kind",
        # The id fields of the AIF format, checked under their own names before records are built.
        "nodeID",
        "edgeID",
    }
)
# A UTF-16 surrogate on its own is not a character: no UTF-8 encoder (the Neo4j driver's included)
# can write it. JSON's "\ud800" escapes produce one.
_SURROGATE = re.compile("[\ud800-\udfff]")


def oversized(value: Any) -> int | None:
    """The UTF-8 size of ``value`` when it is a string over :data:`MAX_FIELD_BYTES`, else None."""
    # len() is a lower bound of the byte length: only long strings are encoded.
    if isinstance(value, str) and len(value) * 4 > MAX_FIELD_BYTES:
        size = len(value.encode("utf-8", "surrogatepass"))
        return size if size > MAX_FIELD_BYTES else None
    return None


def check_fields(fields: Iterable[tuple[str, Any]], where: str) -> None:
    """Refuse a string field (or list element) over :data:`MAX_FIELD_BYTES`, an id or key over
    :data:`MAX_KEY_BYTES`, or one holding a NUL character or a lone surrogate.

    NUL never belongs to a text: it comes from a binary or mis-decoded file, and tools downstream
    (C libraries, XML, some RDF parsers) truncate or reject strings holding it.

    Raises:
        LoaderError: Naming ``where``, the field and what is wrong with it.
    """
    for name, value in fields:
        if isinstance(value, list | tuple):
            check_fields(((f"{name}[{i}]", item) for i, item in enumerate(value) if isinstance(item, str)), where)
            continue
        if not isinstance(value, str):
            continue
        if "\0" in value:
            raise LoaderError(
                f"{where}: field {name!r} holds a NUL character at offset {value.index(chr(0))} "
                "(a binary or mis-decoded file?)"
            )
        lone = _SURROGATE.search(value)
        if lone is not None:
            raise LoaderError(
                f"{where}: field {name!r} holds a lone surrogate U+{ord(lone.group()):04X} at offset {lone.start()}, "
                "which is not a character (a '\\ud800' escape without its pair?)"
            )
        if name in KEY_FIELDS and len(value) * 4 > MAX_KEY_BYTES:
            key_size = len(value.encode("utf-8"))
            if key_size > MAX_KEY_BYTES:
                raise LoaderError(
                    f"{where}: field {name!r} holds {key_size:,} bytes; an id, key or scheme label may have at most "
                    f"{MAX_KEY_BYTES:,} bytes (ontology.records.MAX_KEY_BYTES: they are indexed)"
                )
        size = oversized(value)
        if size is not None:
            raise LoaderError(
                f"{where}: field {name!r} holds {size:,} bytes, over the limit of {MAX_FIELD_BYTES:,} bytes "
                "for one text field (ontology.records.MAX_FIELD_BYTES)"
            )


def scheme_term(corpus: str, raw: str) -> SchemeTerm:
    """Look up the ontology mapping of a corpus-scheme label.

    Args:
        corpus: Scheme corpus identifier (``molweni``, ``sciarg``, ...).
        raw: The label exactly as written in the corpus files.

    Raises:
        OntologyError: The label is not part of the corpus scheme.
    """
    try:
        return _SCHEMES[(corpus, raw)]
    except KeyError as e:
        known = sorted(r for c, r in _SCHEMES if c == corpus)
        raise OntologyError(f"unknown {corpus} label {raw!r}; the {corpus} scheme has {known}") from e


class _Raw:
    """Type of :data:`RAW`."""


RAW = _Raw()
"""Default ``scheme_label`` of :func:`relation_from_scheme`: store the label as written."""


def relation_from_scheme(
    scheme: str, raw: str, where: str, *, scheme_label: str | _Raw | None = RAW, **fields: Any
) -> RelationRecord:
    """A gold relation typed by a corpus-scheme label: the one place loaders build relations.

    The unified class (``kind``), ``scheme_class`` and, for discourse relations, ``sense`` come
    from the ontology mapping of ``raw`` in ``scheme``.

    Args:
        scheme: Scheme corpus identifier (``molweni``, ``qt30`` ...); may differ from the record's
            ``corpus`` (AIF maps of any corpus use the ``qt30`` scheme).
        raw: The label as written in the corpus files.
        where: File and record, for error messages.
        scheme_label: The label to store as ``scheme_label`` when it is not ``raw`` (AIF keeps the
            scheme name, e.g. ``Default Inference``, of an ``RA`` node, and none when the S-node
            names no scheme: ``None``); default ``raw``.
        **fields: The other :class:`RelationRecord` fields (``id``, ``corpus``, ``discourse`` ...).

    Raises:
        LoaderError: ``raw`` is not part of the scheme, or a field is invalid; naming ``where``.
    """
    try:
        term = scheme_term(scheme, raw)
    except OntologyError as e:
        raise LoaderError(f"{where}: {e}") from e
    record: RelationRecord = build(
        RelationRecord,
        where,
        kind=term.label,
        scheme_label=raw if isinstance(scheme_label, _Raw) else scheme_label,
        scheme_class=term.iri,
        sense=term.sense.value if term.sense else None,
        origin="gold",
        **fields,
    )
    return record


def make_id(corpus: str, *parts: str | int) -> str:
    """Build a stable graph id ``<corpus>:<part>:<part>...``."""
    return ":".join([corpus, *(str(p) for p in parts)])


class Record(BaseModel):
    """Base of all records: immutable, unknown fields rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NodeRecord(Record):
    """A record stored as one graph node with the labels of its class and their ancestors."""

    LABEL: ClassVar[Label] = Label.Node
    # Fields that steer ingest but are not node properties.
    NON_PROPERTIES: ClassVar[frozenset[str]] = frozenset()

    id: str = Field(min_length=1)
    corpus: str = Field(min_length=1)

    def labels(self) -> tuple[Label, ...]:
        """All labels of the node, most specific first."""
        return (self.LABEL, *LABEL_ANCESTORS[self.LABEL])

    def properties(self) -> dict[str, Any]:
        """The node properties (``None`` values are left out)."""
        return {k: v for k, v in self.model_dump(exclude_none=True).items() if k not in self.NON_PROPERTIES}

    def links(self) -> Iterator[EdgeRecord]:
        """Structural edges implied by the record's fields (containment, speaker, ...)."""
        return iter(())


class CorpusRecord(NodeRecord):
    """A corpus; ``id`` equals ``corpus``."""

    LABEL: ClassVar[Label] = Label.Corpus
    name: str
    source: str | None = None


class DiscourseRecord(NodeRecord):
    """A dialogue or a document."""

    NON_PROPERTIES: ClassVar[frozenset[str]] = frozenset({"kind"})
    kind: Literal["Dialogue", "Document"]
    local_id: str
    name: str | None = None
    source: str | None = None
    split: str | None = None
    part: str | None = None
    topic: str | None = None

    def labels(self) -> tuple[Label, ...]:
        label = Label(self.kind)
        return (label, *LABEL_ANCESTORS[label])

    def links(self) -> Iterator[EdgeRecord]:
        yield EdgeRecord(type=RelType.PART_OF, source=self.id, target=self.corpus, corpus=self.corpus)


class SpeakerRecord(NodeRecord):
    """A participant, named as the corpus names them.

    Attributes:
        name: The speaker's name.
        person_ids: The AIF ``personID`` values this speaker's locutions carry (AIF maps only).
    """

    LABEL: ClassVar[Label] = Label.Speaker
    name: str
    person_ids: list[str] | None = None


class AnnotatorRecord(NodeRecord):
    """An annotator."""

    LABEL: ClassVar[Label] = Label.Annotator
    name: str


class _UnitRecord(NodeRecord):
    discourse: str | None = None
    local_id: str | None = None
    position: int | None = None
    text: str | None = None
    # Where an argument-mapping tool drew the node (OVA3 layout), so that a map written back reopens there.
    layout_x: float | None = Field(default=None, allow_inf_nan=False)
    layout_y: float | None = Field(default=None, allow_inf_nan=False)

    def links(self) -> Iterator[EdgeRecord]:
        if self.discourse is not None:
            yield EdgeRecord(type=RelType.PART_OF, source=self.id, target=self.discourse, corpus=self.corpus)


class SentenceRecord(_UnitRecord):
    """A sentence of a document with its character span."""

    LABEL: ClassVar[Label] = Label.Sentence
    char_start: int | None = None
    char_end: int | None = None


class LocutionRecord(_UnitRecord):
    """An utterance / EDU (AIF L-node)."""

    LABEL: ClassVar[Label] = Label.Locution
    NON_PROPERTIES: ClassVar[frozenset[str]] = frozenset({"speaker_id"})
    speaker: str | None = None
    speaker_id: str | None = None
    start_time: float | None = None
    end_time: float | None = None
    timestamp: str | None = None
    aif_locutions: str | None = None
    audio_file: str | None = None
    topic: str | None = None
    part: str | None = None
    tokens: list[str] | None = None
    highlights: list[float] | None = None

    def links(self) -> Iterator[EdgeRecord]:
        yield from super().links()
        if self.speaker_id is not None:
            yield EdgeRecord(type=RelType.SPOKEN_BY, source=self.id, target=self.speaker_id, corpus=self.corpus)


class PropositionRecord(_UnitRecord):
    """Propositional content (AIF I-node), optionally typed by a corpus-scheme class."""

    LABEL: ClassVar[Label] = Label.Proposition
    NON_PROPERTIES: ClassVar[frozenset[str]] = frozenset({"sentences"})
    scheme_label: str | None = None
    scheme_class: str | None = None
    char_start: int | None = None
    char_end: int | None = None
    spans: str | None = None
    topic: str | None = None
    timestamp: str | None = None
    tokens: list[str] | None = None
    highlights: list[float] | None = None
    sentences: list[str] = Field(default_factory=list)

    def labels(self) -> tuple[Label, ...]:
        if self.scheme_class is None:
            return super().labels()
        term = next(t for t in SCHEME_TERMS if t.iri == self.scheme_class)
        return (term.label, *LABEL_ANCESTORS[term.label])

    @field_validator("scheme_class")
    @classmethod
    def _known_class(cls, value: str | None) -> str | None:
        if value is not None and not any(t.iri == value for t in SCHEME_TERMS):
            # A validator's ValueError is how pydantic reports an invalid field: the record's
            # construction raises a ValidationError, which the loaders turn into a LoaderError.
            raise ValueError(f"scheme class {value!r} is not declared in the ontology")
        return value

    def links(self) -> Iterator[EdgeRecord]:
        yield from super().links()
        for sentence in self.sentences:
            yield EdgeRecord(type=RelType.IN_SENTENCE, source=self.id, target=sentence, corpus=self.corpus)


class RelationRecord(_UnitRecord):
    """A reified relation: an AIF S-node, a non-relation or a same-unit link.

    ``kind`` is the unified class; AIF edges to and from the node are separate :class:`EdgeRecord`
    instances (see :func:`link`).
    """

    NON_PROPERTIES: ClassVar[frozenset[str]] = frozenset({"kind"})
    kind: Label
    scheme_label: str | None = None
    scheme_class: str | None = None
    scheme_id: str | None = None
    sense: str | None = None
    aif_type: str | None = None
    timestamp: str | None = None
    topic: str | None = None
    origin: Origin = "gold"
    confidence: float | None = None
    score: float | None = None
    model: str | None = None
    model_version: str | None = None
    run_id: str | None = None
    created_at: str | None = None
    vote_share: float | None = None
    votes: int | None = None
    annotator_count: int | None = None
    reason: str | None = None
    source_tokens: list[int] | None = None
    target_tokens: list[int] | None = None

    @field_validator("kind")
    @classmethod
    def _relation_kind(cls, value: Label) -> Label:
        if value not in RELATION_LABELS and value is not Label.Relation:
            # A validator's ValueError, as in _known_class: pydantic reports it as a ValidationError.
            raise ValueError(f"{value} is not a relation class")
        return value

    @model_validator(mode="after")
    def _provenance(self) -> RelationRecord:
        # Its ValueErrors are pydantic's way to refuse the record (a ValidationError, see _known_class).
        # Gold and predicted are told apart by their properties too, not only by ``origin``:
        # ``confidence`` is the annotators' aggregate, ``score`` a model's output.
        if self.origin == "gold":
            given = [name for name in PREDICTION_FIELDS if getattr(self, name) is not None]
            if given:
                raise ValueError(f"a gold relation carries no model output, got {given}")
        else:
            missing = [name for name in PREDICTION_FIELDS if getattr(self, name) is None]
            if missing:
                raise ValueError(f"a predicted relation needs {missing}")
            if self.confidence is not None:
                raise ValueError("a predicted relation has a model score, not an annotator confidence")
            if not (0.0 <= float(self.score or 0.0) <= 1.0) or math.isnan(float(self.score or 0.0)):
                raise ValueError(f"score must lie in [0, 1], got {self.score}")
        return self

    def labels(self) -> tuple[Label, ...]:
        return (self.kind, *LABEL_ANCESTORS[self.kind])


class JudgementRecord(NodeRecord):
    """One annotator's judgement of a relation or pair."""

    LABEL: ClassVar[Label] = Label.Judgement
    NON_PROPERTIES: ClassVar[frozenset[str]] = frozenset({"relation", "annotator"})
    relation: str
    annotator: str
    label: str | None = None
    trust: float | None = None
    confidence: float | None = None
    tainted: bool | None = None
    golden: bool | None = None
    reason: str | None = None
    source_tokens: list[int] | None = None
    target_tokens: list[int] | None = None
    is_referring: bool | None = None
    session: str | None = None
    created_at: str | None = None

    def links(self) -> Iterator[EdgeRecord]:
        yield EdgeRecord(type=RelType.JUDGES, source=self.id, target=self.relation, corpus=self.corpus)
        yield EdgeRecord(type=RelType.JUDGED_BY, source=self.id, target=self.annotator, corpus=self.corpus)


class EdgeRecord(Record):
    """A graph relationship between two nodes given by id.

    ``id`` is set for AIF edges (so that re-ingest merges them); structural edges are unique per
    (type, source, target) and have none.
    """

    type: RelType
    source: str
    target: str
    corpus: str
    id: str | None = None

    def properties(self) -> dict[str, Any]:
        """Relationship properties."""
        props: dict[str, Any] = {"corpus": self.corpus}
        if self.id is not None:
            props["id"] = self.id
        return props


def link(relation: RelationRecord, sources: Sequence[str], targets: Sequence[str]) -> list[EdgeRecord]:
    """AIF edges from each source into ``relation`` and from it to each target."""
    edges = [
        EdgeRecord(type=RelType.AIF_EDGE, source=s, target=relation.id, corpus=relation.corpus, id=f"{relation.id}<{i}")
        for i, s in enumerate(sources)
    ]
    edges += [
        EdgeRecord(type=RelType.AIF_EDGE, source=relation.id, target=t, corpus=relation.corpus, id=f"{relation.id}>{i}")
        for i, t in enumerate(targets)
    ]
    return edges


class CorpusBundle:
    """Everything one ingest writes for one corpus, validated before any write.

    Args:
        corpus: The corpus record.
        nodes: Node records (any order).
        edges: Explicit edges (AIF edges); structural edges come from the records themselves.
        origin: Description of where the records came from, used in error messages.
        notes: What the files leave out but the loader accepted and stored as it is (a relation
            without one of its ends in a partial xAIF map), one line each naming file and record;
            the ingest reports them.

    Attributes:
        input_digest: Digest of the files the bundle was read from and of the code that read
            them (set by the caller that knows the files; None: unknown). A completed ingest
            records it on the corpus marker.
    """

    def __init__(
        self,
        corpus: CorpusRecord,
        nodes: Iterable[NodeRecord],
        edges: Iterable[EdgeRecord] = (),
        origin: str = "",
        notes: Iterable[str] = (),
    ) -> None:
        self.corpus = corpus
        self.notes: list[str] = list(notes)
        self.nodes: list[NodeRecord] = [corpus, *nodes]
        self.edges: list[EdgeRecord] = list(edges)
        for node in self.nodes:
            self.edges.extend(node.links())
        # An edge without id is identified by (type, source, target): Neo4j MERGEs repeats into one,
        # so they are dropped here and the counts describe what the graph will hold.
        seen: set[tuple[RelType, str, str]] = set()
        unique: list[EdgeRecord] = []
        for edge in self.edges:
            if edge.id is None:
                key = (edge.type, edge.source, edge.target)
                if key in seen:
                    continue
                seen.add(key)
            unique.append(edge)
        self.edges = unique
        self.origin = origin
        self.input_digest: str | None = None

    def validate(self) -> None:
        """Check node and edge ids are unique, text fields fit and every edge ends at a bundle node.

        Raises:
            LoaderError: Naming the offending record.
        """
        ids = Counter(n.id for n in self.nodes)
        dupes = [i for i, c in ids.items() if c > 1]
        if dupes:
            raise LoaderError(f"{self.origin}: duplicate node id(s) {dupes[:5]}")
        edge_ids = Counter(e.id for e in self.edges if e.id is not None)
        dupes = [i for i, c in edge_ids.items() if c > 1]
        if dupes:
            raise LoaderError(f"{self.origin}: duplicate edge id(s) {dupes[:5]}")
        # One relationship per type and ends (what the store MERGEs on): two ids for the same edge
        # would be written as one, and the second id lost.
        ends: dict[tuple[RelType, str, str], str | None] = {}
        for edge in self.edges:
            key = (edge.type, edge.source, edge.target)
            if key in ends:
                raise LoaderError(
                    f"{self.origin}: edges {ends[key]!r} and {edge.id!r} both link {edge.source} -> {edge.target}"
                )
            ends[key] = edge.id
        for node in self.nodes:
            check_fields(vars(node).items(), f"{self.origin}: node {node.id}")
        for edge in self.edges:
            check_fields(
                (("id", edge.id), ("source", edge.source), ("target", edge.target)),
                f"{self.origin}: edge {edge.id or f'{edge.source} -> {edge.target}'}",
            )
        for edge in self.edges:
            for end in (edge.source, edge.target):
                if end not in ids:
                    what = f"edge {edge.id}" if edge.id else f"{edge.type} edge {edge.source} -> {edge.target}"
                    raise LoaderError(f"{self.origin}: {what} refers to missing node {end!r}")
        predicted = [n.id for n in self.nodes if isinstance(n, RelationRecord) and n.origin == "predicted"]
        if predicted:
            raise LoaderError(
                f"{self.origin}: predicted relations {predicted[:3]} in a corpus bundle; model output is written "
                "by a prediction run (graphstore.predictions.PredictionStore), never as corpus annotation"
            )
        foreign = [n.id for n in self.nodes if n.corpus != self.corpus.id]
        if foreign:
            raise LoaderError(f"{self.origin}: records of another corpus in bundle {self.corpus.id}: {foreign[:3]}")

    def counts(self) -> dict[str, int]:
        """Number of nodes per most specific label and edges per type."""
        c: Counter[str] = Counter(n.labels()[0].value for n in self.nodes)
        c.update(e.type.value for e in self.edges)
        return dict(sorted(c.items()))


def build(model: type[Record], where: str, **fields: Any) -> Any:
    """Construct a record, turning a validation error into a :class:`LoaderError` naming ``where``.

    Raises:
        LoaderError: A field is invalid or over :data:`MAX_FIELD_BYTES`.
    """
    check_fields(fields.items(), where)
    try:
        return model(**fields)
    except (ValidationError, OntologyError) as e:
        raise LoaderError(f"{where}: {e}") from e


# -- prediction runs ----------------------------------------------------------------------------------

RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"


def new_run_id() -> str:
    """A fresh prediction run id: UTC time to the second plus a random suffix (sortable, unique).

    For runs written by hand; a model's runs take :func:`content_run_id`, so that the same
    prediction asked twice is recognised and written once.
    """
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:8]


def content_run_id(prefix: str, *parts: object) -> str:
    """The id of a model's run from what it is (model, version, parameters, scope): ``<prefix>-<sha1[:16]>``.

    The parts are joined by newlines; the same parts always give the same id.
    """
    return f"{prefix}-{hashlib.sha1(chr(10).join(map(str, parts)).encode()).hexdigest()[:16]}"


SCORE_DIGITS = 4


def prediction_score(score: float) -> float:
    """A model's score as stored: clamped to [0, 1] and rounded to :data:`SCORE_DIGITS` places.

    Rounded so that a repeated run (another machine, another BLAS) is recognised as the same content.
    """
    return round(min(1.0, max(0.0, float(score))), SCORE_DIGITS)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class PredictionRun(Record):
    """One run of a model over the graph, the provenance of every relation it writes.

    Attributes:
        run_id: Unique id of the run (letters, digits, ``_ . -``); re-writing the same run id is a
            no-op, so a retried job does not duplicate its edges.
        model: Model name (e.g. ``rgcn-link``).
        model_version: Model version (checkpoint, release or git revision).
        task: What was predicted (e.g. ``discourse``, ``relations``).
        parameters: Run parameters (JSON-serialisable): thresholds, checkpoint paths, splits.
        created_at: ISO-8601 time of the run (default: now, UTC).
    """

    run_id: str = Field(default_factory=new_run_id, pattern=RUN_ID_PATTERN)
    model: str = Field(min_length=1)
    model_version: str = Field(min_length=1)
    task: str = Field(min_length=1)
    parameters: dict[str, Any] = Field(default_factory=dict)
    created_at: str = Field(default_factory=_now)

    @field_validator("parameters")
    @classmethod
    def _json_parameters(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            json.dumps(value, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as e:
            # A validator's ValueError, as in _known_class: pydantic reports it as a ValidationError.
            raise ValueError(f"parameters must be plain JSON (str, numbers, lists, dicts): {e}") from e
        return value

    @property
    def node_id(self) -> str:
        """Graph id of the run node (predictions live in the ``pred:`` id namespace)."""
        return f"pred:{self.run_id}"

    def relation_id(self, n: int) -> str:
        """Graph id of the ``n``-th relation of the run."""
        return f"pred:{self.run_id}:{n}"


class PredictedRelation(Record):
    """A relation a model predicts from ``source`` to ``target`` (both existing graph nodes).

    An n-ary relation (several premises of one conclusion) is several rows with the same target;
    each row is one relation node.

    Attributes:
        source: Graph id of the source unit (premise, attacker, earlier EDU).
        target: Graph id of the target unit (conclusion, attacked, later EDU).
        label: What was predicted.
        score: The model's confidence in ``label``, in [0, 1].
        scheme_label: The label as the model names it, if it differs from ``label``.
        source_tokens: Token positions of ``source`` the model highlights (token-level models,
            e.g. the ContextDeP highlighter), if any.
        target_tokens: The same on the ``target`` side.
    """

    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    label: RelationLabel
    score: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    scheme_label: str | None = None
    source_tokens: list[int] | None = None
    target_tokens: list[int] | None = None
