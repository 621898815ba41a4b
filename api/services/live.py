"""The shipped models of live mining, loaded once per process: the discourse parser's links between
utterances and the relation model's links between argument units (``argweb mine``, ``POST /predict``
for a dialogue or a transcript, the oAMF ``discourse`` and ``ari`` modules)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api.settings import Settings
from gnn.relations.task import GRAPH_OBJECTIVE
from ontology.records import prediction_score

# The parser tunes a link threshold per training domain; Molweni (multi-party chat, 9k dialogues in
# training) is the closer of its two domains to a debate transcript.
DISCOURSE_DOMAIN = "molweni"


@dataclass(frozen=True)
class LoadedModel:
    """A model kept in memory with the name and version its predictions carry."""

    name: str
    version: str
    path: Path
    model: Any


def discourse_model(settings: Settings) -> LoadedModel:
    """The shipped discourse parser, loaded once per process (:func:`api.services.tasks.load`)."""
    from api.services import tasks

    loaded = tasks.load(settings, "discourse")
    return LoadedModel(loaded.card.model, loaded.card.written_version, loaded.path, loaded.model)


def relation_model(settings: Settings) -> LoadedModel:
    """The shipped relation model's QT30 network, loaded once per process (the one model cache:
    :func:`api.services.tasks.load`)."""
    from api.services import tasks

    loaded = tasks.load(settings, "relations")
    return LoadedModel(loaded.card.model, loaded.card.written_version, loaded.path, loaded.model.qt30)


def discourse_links(
    settings: Settings, texts: Sequence[str], speakers: Sequence[str]
) -> list[tuple[int, int, str, float]]:
    """The discourse parser's links between utterances: ``(x, y, sense, score)``.

    Scores are rounded to 4 digits, so that a repeated run is recognised as the same content.
    """
    from gnn.discourse.data import Dialogue

    if not texts:
        return []
    dialogue = Dialogue("mined#0", "mined", DISCOURSE_DOMAIN, list(texts), list(speakers))
    (links,) = discourse_model(settings).model.predict([dialogue])
    return [(p.x, p.y, p.sense.value, prediction_score(p.score)) for p in links]


def argument_links(
    settings: Settings, texts: Sequence[str], speakers: Sequence[str], transitions: Sequence[tuple[int, int]]
) -> list[tuple[int, int, str, float]]:
    """The relation model's support / attack / rephrase links between argument units: ``(s, t, label, score)``.

    Args:
        settings: Where the models live.
        texts: Argument unit texts in order.
        speakers: Speaker of each unit.
        transitions: ``(earlier, later)`` unit indices linked in the dialogue (the parser's links).
    """
    from gnn.relations.live import predict_dialogue

    model = relation_model(settings).model
    return [
        (s, t, lab, prediction_score(p))
        # Mined debates go into the graph: its decoding (each relation type's count near its gold share).
        for s, t, lab, p in predict_dialogue(model, texts, speakers, transitions, GRAPH_OBJECTIVE)
    ]


def models(settings: Settings) -> tuple[LoadedModel, LoadedModel]:
    """The discourse parser and the relation model (loaded on first use)."""
    return discourse_model(settings), relation_model(settings)
