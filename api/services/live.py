"""The shipped models of live mining, loaded once per process: the discourse parser's links between
utterances and the relation model's links between argument units (``argweb mine``, ``POST /predict``
for a dialogue or a transcript, the oAMF ``discourse`` and ``ari`` modules).

The settings say which models; the links themselves are :mod:`gnn.relations.live`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api.settings import Settings
from gnn.relations.mining import Analysis
from gnn.relations.task import GRAPH_OBJECTIVE


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
    """The shipped parser's links between utterances: ``(x, y, sense, score)``, scores rounded."""
    from gnn.relations import live

    return live.discourse_links(discourse_model(settings).model, texts, speakers)


def analyse(
    settings: Settings,
    texts: Sequence[str],
    speakers: Sequence[str],
    units: Sequence[str],
    anchors: Sequence[Sequence[int]],
) -> Analysis:
    """The shipped models' discourse and argument links of a dialogue (:func:`gnn.relations.live.analyse`).

    Mined debates go into the graph: its decoding (each relation type's count near its gold share).
    """
    from gnn.relations import live

    parser, relator = models(settings)
    return live.analyse(parser.model, relator.model, texts, speakers, units, anchors, GRAPH_OBJECTIVE)


def models(settings: Settings) -> tuple[LoadedModel, LoadedModel]:
    """The discourse parser and the relation model (loaded on first use)."""
    return discourse_model(settings), relation_model(settings)
