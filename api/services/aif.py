"""AIF JSON export of dialogues and documents, and import of a map (HTTP API)."""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neo4j import Driver

from api.services.graph import Graph
from graphstore.aif_export import export_corpus, export_discourse, validate_aif, write_aif
from graphstore.loaders.aif import load_aif
from graphstore.loaders.registry import CORPORA
from graphstore.readonly import ReadOnlyStore
from graphstore.store import GraphStore, IngestReport
from ontology.errors import ApiError, GraphStoreError, LoaderError
from ontology.records import make_id


@dataclass
class AifExport:
    """What an AIF export wrote: one map (``--dialogue``) or one file per discourse (``--corpus``)."""

    out: Path
    aif: dict[str, Any] | None = None
    files: list[Path] = field(default_factory=list)


def discourse_aif(graph: Graph, ref: str, *, include_predicted: bool = False) -> dict[str, Any]:
    """The validated AIF map of one dialogue/document (its id or local id).

    Raises:
        NotFoundError: Unknown discourse. ClientError: Ambiguous reference. CorpusIncompleteError:
        Its corpus is still marked ``loading``.
    """
    store = graph.store()
    for corpus in store.corpora_of(ref):
        store.require_complete(corpus)  # a half-loaded corpus is not served as if whole
    aif = export_discourse(store, ref, include_predicted=include_predicted)
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
    graph.store().require_complete(corpus)
    return AifExport(out, files=export_corpus(graph.store(), corpus, out, include_predicted=include_predicted))


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
DEFAULT_IMPORT_CORPUS = "aif-import"


def refuse_gold(corpus: str, instead: str) -> None:
    """Refuse a write into a gold corpus (one the registry loads from annotation).

    Every write path of the API and the live mining calls this one check: gold corpora change only
    through their own ingest, never through a client.

    Args:
        corpus: The corpus a client asked to write into.
        instead: The corpus to suggest (the caller's default).

    Raises:
        ApiError: ``corpus`` is gold.
    """
    if corpus in CORPORA:
        raise ApiError(f"corpus {corpus!r} holds gold annotation; write into another corpus (default {instead!r})")


def export_map(
    driver: Driver, database: str, ref: str, timeout: float, include_predicted: bool = False
) -> dict[str, Any]:
    """The AIF map of a dialogue or document (read in READ access mode).

    Raises:
        NotFoundError: No such dialogue or document.
        ApiError: The id names several discourses.
    """
    store = ReadOnlyStore(driver, database, timeout)
    aif = export_discourse(store, ref, include_predicted=include_predicted)
    validate_aif(aif, ref)
    return aif


def import_map(driver: Driver, database: str, aif: dict[str, Any], corpus: str, name: str) -> tuple[str, IngestReport]:
    """Validate an AIF map and write it as the dialogue ``<corpus>:<name>`` (all or nothing).

    Raises:
        ApiError: Bad corpus or map name, or a gold corpus (:func:`refuse_gold`); nothing is written.
        LoaderError: The map is malformed (names the node or edge); nothing is written.
    """
    refuse_gold(corpus, DEFAULT_IMPORT_CORPUS)
    for label, value in (("corpus", corpus), ("name", name)):
        if not _NAME.match(value):
            raise ApiError(f"{label} must be 1-100 letters, digits, '.', '_' or '-' (starting with a letter or digit)")
    try:
        validate_aif(aif, f"AIF map {name}")
    except (GraphStoreError, AttributeError, TypeError) as e:
        raise LoaderError(str(e)) from e
    with tempfile.TemporaryDirectory(prefix="argweb-aif-") as tmp:
        path = Path(tmp) / f"{name}.json"
        path.write_text(json.dumps(aif, ensure_ascii=False), encoding="utf-8")
        bundle = load_aif([path], corpus)
    report = GraphStore(driver, database).ingest(bundle)
    return make_id(corpus, name), report
