"""AIF JSON export of dialogues and documents."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from api.services.graph import Graph
from graphstore.aif_export import export_corpus, export_discourse, validate_aif, write_aif
from ontology.errors import ApiError


@dataclass
class AifExport:
    """What an AIF export wrote: one map (``--dialogue``) or one file per discourse (``--corpus``)."""

    out: Path
    aif: dict[str, Any] | None = None
    files: list[Path] = field(default_factory=list)


def discourse_aif(graph: Graph, ref: str, *, include_predicted: bool = False) -> dict[str, Any]:
    """The validated AIF map of one dialogue/document (its id or local id).

    Raises:
        NotFoundError: Unknown discourse. ClientError: Ambiguous reference.
    """
    aif = export_discourse(graph.store(), ref, include_predicted=include_predicted)
    validate_aif(aif, ref)
    return aif


def export_aif(
    graph: Graph,
    out: Path,
    *,
    dialogue: str | None = None,
    corpus: str | None = None,
    include_predicted: bool = False,
) -> AifExport:
    """Write the AIF JSON of one dialogue/document to the file ``out``, or of a whole corpus into the folder ``out``.

    Raises:
        ApiError: Not exactly one of ``dialogue`` and ``corpus``.
        NotFoundError: Unknown discourse or corpus.
    """
    if (dialogue is None) == (corpus is None):
        raise ApiError("give exactly one of --dialogue ID or --corpus NAME")
    if dialogue is not None:
        aif = discourse_aif(graph, dialogue, include_predicted=include_predicted)
        write_aif(aif, out)
        return AifExport(out, aif=aif)
    assert corpus is not None
    return AifExport(out, files=export_corpus(graph.store(), corpus, out, include_predicted=include_predicted))
