"""The summary of a mined dialogue: one JSON-ready dict for the CLI (table or ``--json``) and the API."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ontology.records import PredictionRun

ARGUMENT_KINDS = ("support", "attack", "rephrase")


@dataclass
class Analysis:
    """Predicted links of one dialogue: ``(x, y, label, score)`` with indices into its utterances
    (discourse links) and into its argument units (support / attack / rephrase)."""

    discourse: list[tuple[int, int, str, float]] = field(default_factory=list)
    arguments: list[tuple[int, int, str, float]] = field(default_factory=list)


def _link(
    x: int, y: int, label: str, score: float, ids: Sequence[str], texts: Sequence[str], run: PredictionRun
) -> dict[str, Any]:
    return {
        "source": ids[x],
        "target": ids[y],
        "source_index": x,
        "target_index": y,
        "source_text": texts[x],
        "target_text": texts[y],
        "label": label,
        "score": score,
        "model": run.model,
        "model_version": run.model_version,
        "run_id": run.run_id,
    }


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
    neighbours: list[list[dict[str, Any]]] | None,
    neighbours_note: str | None,
    written: bool,
    segmenter: str | None = None,
) -> dict[str, Any]:
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
    kinds = Counter(a["label"] for a in arguments)
    strongest = {
        kind: max((a for a in arguments if a["label"] == kind), key=lambda a: a["score"], default=None)
        for kind in ("support", "attack")
    }
    nearest = None
    if neighbours is not None:
        nearest = [
            {"index": i, "id": units[i], "text": unit_texts[i], "hits": hits}
            for i, hits in enumerate(neighbours)
            if hits
        ]
    return {
        "dialogue_id": dialogue.dialogue_id,
        "corpus": dialogue.corpus,
        "written": written,
        "segmenter": segmenter,
        "counts": {
            "utterances": len(texts),
            "speakers": len(set(speakers)),
            "discourse_links": len(discourse),
            **{kind: kinds.get(kind, 0) for kind in ARGUMENT_KINDS},
        },
        "utterances": [
            {"index": i, "id": locutions[i], "speaker": speakers[i], "text": texts[i]} for i in range(len(texts))
        ],
        "discourse_links": discourse,
        "argument_relations": arguments,
        "strongest": strongest,
        "nearest": nearest,
        "nearest_note": neighbours_note,
        "runs": [
            {"run_id": r.run_id, "model": r.model, "model_version": r.model_version, "task": r.task} for r in runs
        ],
    }


def best_neighbours(summary: dict[str, Any], limit: int = 5) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The ``limit`` closest (unit, hit) pairs of a summary, best first."""
    pairs = [(row, hit) for row in summary.get("nearest") or [] for hit in row["hits"][:1]]
    return sorted(pairs, key=lambda p: -p[1]["score"])[:limit]
