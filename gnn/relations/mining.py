"""Analysis of mined links: the summary of a mined dialogue and the nearest neighbours of its argument units.

Pure work on what the relation and discourse models predicted (no graph, no I/O): one typed result
for the command line (table or ``--json``) and the API, made JSON at the edge by
:meth:`MiningSummary.as_dict`."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ontology.formats.dialogue_json import scheme_label
from ontology.labels import RelationLabel
from ontology.records import SCORE_DIGITS, PredictedRelation, PredictionRun
from ontology.views import SemanticHit

ARGUMENT_KINDS = ("support", "attack", "rephrase")
# The parser tunes a link threshold per training domain; Molweni (multi-party chat, 9k dialogues in
# training) is the closer of its two domains to a debate transcript.
DISCOURSE_DOMAIN = "molweni"


@dataclass
class Analysis:
    """Predicted links of one dialogue: ``(x, y, label, score)`` with indices into its utterances
    (discourse links) and into its argument units (support / attack / rephrase)."""

    discourse: list[tuple[int, int, str, float]] = field(default_factory=list)
    arguments: list[tuple[int, int, str, float]] = field(default_factory=list)

    def relations(
        self, locutions: Sequence[str], units: Sequence[str]
    ) -> tuple[list[PredictedRelation], list[PredictedRelation]]:
        """The discourse links between ``locutions`` and the argument links between ``units``, as rows to write."""
        disc = [
            PredictedRelation(
                source=locutions[x],
                target=locutions[y],
                label=RelationLabel(sense),
                score=score,
                scheme_label=scheme_label(DISCOURSE_DOMAIN, sense),
            )
            for x, y, sense, score in self.discourse
        ]
        args = [
            PredictedRelation(source=units[s], target=units[t], label=RelationLabel(lab), score=score)
            for s, t, lab, score in self.arguments
        ]
        return disc, args


def unit_transitions(
    discourse: Sequence[tuple[int, int, str, float]], anchors: Sequence[Sequence[int]]
) -> list[tuple[int, int]]:
    """The parser's links between locutions as transitions between the argument units said in them.

    Args:
        discourse: ``(x, y, sense, score)`` links between locutions.
        anchors: Per argument unit, the indices of its locutions.
    """
    by_loc: dict[int, list[int]] = defaultdict(list)
    for k, found in enumerate(anchors):
        for i in found:
            by_loc[i].append(k)
    return [(a, b) for x, y, _, _ in discourse for a in by_loc[x] for b in by_loc[y]]


@dataclass(frozen=True)
class MinedLink:
    """A predicted link of a mined dialogue, between two utterances (discourse) or two argument units.

    Attributes:
        source: Graph id of the source.
        target: Graph id of the target.
        source_index: The source's index among the dialogue's utterances (or argument units).
        target_index: The target's index.
        source_text: The source's text.
        target_text: The target's text.
        label: Discourse sense, or support / attack / rephrase.
        score: The model's score (rounded).
        model: Model name.
        model_version: Model version.
        run_id: The run the link belongs to (its id also when nothing is written).
    """

    source: str
    target: str
    source_index: int
    target_index: int
    source_text: str
    target_text: str
    label: str
    score: float
    model: str
    model_version: str
    run_id: str


def _link(
    x: int, y: int, label: str, score: float, ids: Sequence[str], texts: Sequence[str], run: PredictionRun
) -> MinedLink:
    return MinedLink(ids[x], ids[y], x, y, texts[x], texts[y], label, score, run.model, run.model_version, run.run_id)


@dataclass(frozen=True)
class MinedUtterance:
    """One utterance of a mined dialogue: its index, locution id, speaker and text."""

    index: int
    id: str
    speaker: str
    text: str


@dataclass(frozen=True)
class NeighbourHit:
    """A stored proposition of another corpus near a mined unit in meaning.

    Attributes:
        id: Graph id of the proposition.
        corpus: Its corpus.
        discourse: Its dialogue or document, if any.
        text: Its text.
        score: Cosine similarity, rounded (in [-1, 1]: not clamped like a model's score).
    """

    id: str
    corpus: str | None
    discourse: str | None
    text: str | None
    score: float

    @classmethod
    def of(cls, hit: SemanticHit) -> NeighbourHit:
        """The hit of a search by meaning, its cosine rounded (not clamped like a model's score)."""
        return cls(hit.id, hit.corpus, hit.discourse, hit.text, round(float(hit.score), SCORE_DIGITS))


@dataclass(frozen=True)
class Nearest:
    """A mined argument unit and its nearest propositions elsewhere (best first)."""

    index: int
    id: str
    text: str
    hits: list[NeighbourHit]


@dataclass(frozen=True)
class MinedRun:
    """A prediction run of a mined dialogue (written or not)."""

    run_id: str
    model: str
    model_version: str
    task: str


@dataclass(frozen=True)
class MiningSummary:
    """What was mined of one dialogue.

    Attributes:
        dialogue_id: Graph id of the dialogue.
        corpus: Its corpus.
        written: Whether the dialogue and its runs were written.
        segmenter: How turns were split into utterances.
        counts: ``utterances``, ``speakers``, ``discourse_links``, ``support``, ``attack``, ``rephrase``.
        utterances: The utterances in order.
        discourse_links: Predicted links between utterances.
        argument_relations: Predicted support / attack / rephrase between argument units.
        strongest: Per ``support`` and ``attack``, the link of the highest score (None: none predicted).
        nearest: Per argument unit with neighbours, its nearest units elsewhere; None when none were looked up.
        nearest_note: Why there are no neighbours, if so.
        runs: The discourse run and the relations run.
    """

    dialogue_id: str
    corpus: str | None
    written: bool
    segmenter: str | None
    counts: dict[str, int]
    utterances: list[MinedUtterance]
    discourse_links: list[MinedLink]
    argument_relations: list[MinedLink]
    strongest: dict[str, MinedLink | None]
    nearest: list[Nearest] | None
    nearest_note: str | None
    runs: list[MinedRun]

    def as_dict(self) -> dict[str, object]:
        """The summary as JSON-ready data (the CLI's ``--json`` and the ``summary`` of ``POST /predict``)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MiningSummary:
        """The summary that :meth:`as_dict` gave ``data`` (an ``argweb mine --json`` output read back)."""

        def link(row: Mapping[str, Any] | None) -> MinedLink | None:
            return None if row is None else MinedLink(**row)

        nearest = data["nearest"]
        return cls(
            dialogue_id=data["dialogue_id"],
            corpus=data["corpus"],
            written=data["written"],
            segmenter=data["segmenter"],
            counts=dict(data["counts"]),
            utterances=[MinedUtterance(**row) for row in data["utterances"]],
            discourse_links=[MinedLink(**row) for row in data["discourse_links"]],
            argument_relations=[MinedLink(**row) for row in data["argument_relations"]],
            strongest={kind: link(row) for kind, row in data["strongest"].items()},
            nearest=None
            if nearest is None
            else [
                Nearest(row["index"], row["id"], row["text"], [NeighbourHit(**hit) for hit in row["hits"]])
                for row in nearest
            ],
            nearest_note=data["nearest_note"],
            runs=[MinedRun(**row) for row in data["runs"]],
        )


@dataclass(frozen=True)
class DialogueUnits:
    """A dialogue as the models saw it.

    Attributes:
        dialogue_id: Graph id of the dialogue.
        corpus: Its corpus.
        speakers: Speaker per utterance.
        texts: Utterance texts (the locutions).
        locutions: Locution ids.
        units: Ids of the argument units (propositions) the argument links join.
        unit_texts: Texts of the argument units (None: ``texts``, one proposition per locution).
    """

    dialogue_id: str
    corpus: str | None
    speakers: Sequence[str]
    texts: Sequence[str]
    locutions: Sequence[str]
    units: Sequence[str]
    unit_texts: Sequence[str] | None = None


def summarise(
    dialogue: DialogueUnits,
    analysis: Analysis,
    *,
    runs: Sequence[PredictionRun],
    neighbours: list[list[NeighbourHit]] | None,
    neighbours_note: str | None,
    written: bool,
    segmenter: str | None = None,
) -> MiningSummary:
    """What was mined: utterances, predicted links, the strongest support and attack, nearest units elsewhere.

    Args:
        dialogue: Its utterances and argument units.
        analysis: The predicted links.
        runs: The discourse run and the relations run (their ids, also when not written).
        neighbours: Per argument unit, its nearest units in other corpora, or None.
        neighbours_note: Why there are no neighbours, if so.
        written: Whether the dialogue and the runs were written.
        segmenter: How turns were split into utterances.
    """
    texts, locutions, units, speakers = dialogue.texts, dialogue.locutions, dialogue.units, dialogue.speakers
    unit_texts = list(dialogue.unit_texts if dialogue.unit_texts is not None else texts)
    disc_run, rel_run = runs
    discourse = [_link(x, y, s, p, locutions, texts, disc_run) for x, y, s, p in analysis.discourse]
    arguments = [_link(x, y, lab, p, units, unit_texts, rel_run) for x, y, lab, p in analysis.arguments]
    kinds = Counter(a.label for a in arguments)
    strongest = {
        kind: max((a for a in arguments if a.label == kind), key=lambda a: a.score, default=None)
        for kind in ("support", "attack")
    }
    nearest = None
    if neighbours is not None:
        nearest = [Nearest(i, units[i], unit_texts[i], hits) for i, hits in enumerate(neighbours) if hits]
    return MiningSummary(
        dialogue_id=dialogue.dialogue_id,
        corpus=dialogue.corpus,
        written=written,
        segmenter=segmenter,
        counts={
            "utterances": len(texts),
            "speakers": len(set(speakers)),
            "discourse_links": len(discourse),
            **{kind: kinds.get(kind, 0) for kind in ARGUMENT_KINDS},
        },
        utterances=[MinedUtterance(i, locutions[i], speakers[i], texts[i]) for i in range(len(texts))],
        discourse_links=discourse,
        argument_relations=arguments,
        strongest=strongest,
        nearest=nearest,
        nearest_note=neighbours_note,
        runs=[MinedRun(r.run_id, r.model, r.model_version, r.task) for r in runs],
    )


def best_neighbours(summary: MiningSummary, limit: int = 5) -> list[tuple[Nearest, NeighbourHit]]:
    """The ``limit`` closest (unit, hit) pairs of a summary, best first."""
    pairs = [(row, hit) for row in summary.nearest or [] for hit in row.hits[:1]]
    return sorted(pairs, key=lambda p: -p[1].score)[:limit]
