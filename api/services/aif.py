"""AIF JSON export of dialogues and documents, and import of a map (HTTP API)."""

from __future__ import annotations

import functools
import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from neo4j import Driver

from api.services.graph import Graph
from graphstore import cypher
from graphstore.aif_export import export_corpus, export_discourse, validate_aif, write_aif
from graphstore.readonly import ReadOnlyStore
from graphstore.store import GraphStore, IngestReport, require_whole
from ontology.errors import ApiError, LoaderError
from ontology.formats.aif import AifMap, load_aif
from ontology.formats.common import MAX_JSON_DEPTH, json_depth_exceeds, named_as
from ontology.formats.registry import CORPORA
from ontology.formats.xaif_write import FORMATS as MAP_FORMATS
from ontology.formats.xaif_write import convert as convert_map
from ontology.names import check_corpus_name
from ontology.records import make_id


@dataclass
class AifExport:
    """What an AIF export wrote: one map (``--dialogue``) or one file per discourse (``--corpus``)."""

    out: Path
    aif: AifMap | None = None
    files: list[Path] = field(default_factory=list)


def map_format(fmt: str) -> str:
    """``fmt`` if it is a map format argweb writes (``aif``, ``xaif``, ``ova``).

    Raises:
        ApiError: Another name.
    """
    if fmt not in MAP_FORMATS:
        raise ApiError(f"format must be one of {', '.join(MAP_FORMATS)}, not {fmt!r}")
    return fmt


def _exported(
    store: GraphStore, ref: str, include_predicted: bool, fmt: str, undo: Callable[[list[str]], object] | None = None
) -> AifMap:
    """The validated map of one discourse in ``fmt``.

    Raises:
        CorpusIncompleteError: Its corpus is still marked ``loading`` (an ingest running or killed):
            a half-loaded corpus is never served as if whole (409 through the API; ``undo`` is given
            the interrupted ones, see :func:`graphstore.store.require_whole`).
    """
    touched = store.corpora_of(ref)
    if touched:
        require_whole(store.read(cypher.incomplete_corpora(), corpus=None), touched, "refusing to export it", undo)
    aif = export_discourse(store, ref, include_predicted=include_predicted, with_layout=fmt != "aif")
    validate_aif(aif, ref)
    return convert_map(aif, fmt)


def discourse_aif(graph: Graph, ref: str, *, include_predicted: bool = False, fmt: str = "aif") -> AifMap:
    """The validated map of one dialogue/document (its id or local id) as AIF, xAIF or OVA3.

    Raises:
        ApiError: Unknown format. NotFoundError: Unknown discourse. ClientError: Ambiguous reference.
        CorpusIncompleteError: Its corpus is still marked ``loading``.
    """
    map_format(fmt)
    return _exported(graph.store(), ref, include_predicted, fmt)


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
        aif = discourse_aif(graph, dialogue, include_predicted=include_predicted, fmt=fmt)
        write_aif(aif, out)
        return AifExport(out, aif=aif)
    assert corpus is not None
    graph.store().require_complete(corpus)
    convert = None if fmt == "aif" else functools.partial(convert_map, fmt=fmt)
    files = export_corpus(graph.store(), corpus, out, include_predicted=include_predicted, convert=convert)
    return AifExport(out, files=files)


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
DEFAULT_IMPORT_CORPUS = "aif-import"


def check_name(label: str, value: str) -> None:
    """Refuse a corpus or map name that is not 1-100 letters, digits, ``.``, ``_`` or ``-``.

    Raises:
        ApiError: Naming ``label``.
    """
    if not _NAME.match(value):
        raise ApiError(f"{label} must be 1-100 letters, digits, '.', '_' or '-' (starting with a letter or digit)")


def refuse_gold(corpus: str, instead: str) -> None:
    """Refuse a write into a gold corpus (one the registry loads from annotation), or under a name
    outside the corpus-name grammar or that differs from a gold corpus only in case or punctuation
    (:func:`ontology.names.check_corpus_name`).

    Every write path of the API, the command line and the live mining calls this one check: gold
    corpora change only through their own ingest, never through a client.

    Args:
        corpus: The corpus a client asked to write into.
        instead: The corpus to suggest (the caller's default).

    Raises:
        ApiError: ``corpus`` is gold.
    """
    if corpus in CORPORA:
        raise ApiError(f"corpus {corpus!r} holds gold annotation; write into another corpus (default {instead!r})")
    check_corpus_name(corpus, CORPORA)


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
    return _exported(ReadOnlyStore(driver, database, timeout), ref, include_predicted, fmt, undo)


def import_map(driver: Driver, database: str, aif: AifMap, corpus: str, name: str) -> tuple[str, IngestReport]:
    """Validate an AIF map and write it as the dialogue ``<corpus>:<name>`` (all or nothing).

    The map is checked by the AIF reader alone (:func:`ontology.formats.aif.read_map`), the same
    checks as ``argweb corpus ingest aif``: what one door refuses, the other refuses too.

    Raises:
        ApiError: Bad corpus or map name, or a gold corpus (:func:`refuse_gold`); nothing is written.
        LoaderError: The map is malformed (names the node or edge); nothing is written.
    """
    refuse_gold(corpus, DEFAULT_IMPORT_CORPUS)
    check_name("name", name)
    if json_depth_exceeds(aif):
        raise LoaderError(f"AIF map {name}: arrays or objects nested more than {MAX_JSON_DEPTH} levels deep")
    with tempfile.TemporaryDirectory(prefix="argweb-aif-") as tmp:
        path = Path(tmp) / f"{name}.json"
        # ASCII escapes: a lone surrogate in the map stays an escape here, and the loader names it.
        path.write_text(json.dumps(aif), encoding="utf-8")
        with named_as({path: f"AIF map {name}"}):
            bundle = load_aif([path], corpus)
    # A request is refused at once while a bulk load holds the store, not held for its duration.
    report = GraphStore(driver, database, bulk_wait=0).ingest(bundle)
    return make_id(corpus, name), report
