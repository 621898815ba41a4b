"""AIF JSON export of dialogues and documents, and import of a map (HTTP API)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from neo4j import Driver

from api.services.graph import Graph
from graphstore.aif_export import discourse_map, export_corpus, write_aif
from graphstore.readonly import ReadOnlyStore
from graphstore.store import GraphStore, IngestReport
from ontology.errors import ApiError
from ontology.formats.aif import AifMap, load_map_object
from ontology.formats.registry import check_name, refuse_gold
from ontology.formats.xaif_write import convert as convert_map
from ontology.formats.xaif_write import map_format
from ontology.records import make_id


@dataclass
class AifExport:
    """What an AIF export wrote: one map (``--dialogue``) or one file per discourse (``--corpus``)."""

    out: Path
    aif: AifMap | None = None
    files: list[Path] = field(default_factory=list)


def export_aif(
    graph: Graph,
    out: Path,
    *,
    dialogue: str | None = None,
    corpus: str | None = None,
    include_predicted: bool = False,
    fmt: str = "aif",
) -> AifExport:
    """Write the map of one dialogue/document to the file ``out``, or of a whole corpus into the folder ``out``.

    Args:
        graph: The graph.
        out: A file (``dialogue``) or a folder (``corpus``).
        dialogue: One dialogue or document (its id or local id).
        corpus: Every dialogue and document of a corpus, one file each.
        include_predicted: Also write predicted relations.
        fmt: ``aif`` (AIFdb JSON), ``xaif`` (oAMF) or ``ova`` (OVA3, with the node layout).

    Raises:
        ApiError: Not exactly one of ``dialogue`` and ``corpus``, or an unknown format.
        NotFoundError: Unknown discourse or corpus.
    """
    if (dialogue is None) == (corpus is None):
        raise ApiError("give exactly one of --dialogue ID or --corpus NAME")
    map_format(fmt)
    if dialogue is not None:
        aif = discourse_map(graph.store(), dialogue, include_predicted=include_predicted, fmt=fmt)
        write_aif(aif, out)
        return AifExport(out, aif=aif)
    assert corpus is not None
    graph.store().require_complete(corpus)
    convert = None if fmt == "aif" else functools.partial(convert_map, fmt=fmt)
    files = export_corpus(graph.store(), corpus, out, include_predicted=include_predicted, convert=convert)
    return AifExport(out, files=files)


DEFAULT_IMPORT_CORPUS = "aif-import"


def export_map(
    driver: Driver,
    database: str,
    ref: str,
    timeout: float,
    include_predicted: bool = False,
    fmt: str = "aif",
    undo: Callable[[list[str]], object] | None = None,
) -> AifMap:
    """The map of a dialogue or document as AIF, xAIF or OVA3 (read in READ access mode).

    Raises:
        NotFoundError: No such dialogue or document.
        ApiError: The id names several discourses, or an unknown format.
        CorpusIncompleteError: Its corpus is still marked ``loading`` (an ingest running or killed).
    """
    map_format(fmt)
    store = ReadOnlyStore(driver, database, timeout)
    return discourse_map(store, ref, include_predicted=include_predicted, fmt=fmt, undo=undo)


def import_map(driver: Driver, database: str, aif: AifMap, corpus: str, name: str) -> tuple[str, IngestReport]:
    """Validate an AIF map and write it as the dialogue ``<corpus>:<name>`` (all or nothing).

    The map is checked by the AIF reader alone (:func:`ontology.formats.aif.read_map`), the same
    checks as ``argweb corpus ingest aif``: what one door refuses, the other refuses too.

    Raises:
        ApiError: Bad corpus or map name, or a gold corpus
            (:func:`ontology.formats.registry.refuse_gold`); nothing is written.
        LoaderError: The map is malformed (names the node or edge); nothing is written.
    """
    refuse_gold(corpus, DEFAULT_IMPORT_CORPUS)
    check_name("name", name)
    bundle = load_map_object(aif, corpus, name)
    # A request is refused at once while a bulk load holds the store, not held for its duration.
    report = GraphStore(driver, database, bulk_wait=0).ingest(bundle)
    return make_id(corpus, name), report
