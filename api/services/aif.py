"""AIF JSON in and out for the API (the same export as ``argweb export aif``)."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from neo4j import Driver

from graphstore.aif_export import export_discourse, validate_aif
from graphstore.loaders.aif import load_aif
from graphstore.readonly import ReadOnlyStore
from graphstore.store import GraphStore, IngestReport
from ontology.errors import ApiError, GraphStoreError, LoaderError, NotFoundError
from ontology.records import make_id

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def export_map(
    driver: Driver, database: str, ref: str, timeout: float, include_predicted: bool = False
) -> dict[str, Any]:
    """The AIF map of a dialogue or document (read in READ access mode).

    Raises:
        NotFoundError: No such dialogue or document.
        ApiError: The id names several discourses.
    """
    store = ReadOnlyStore(driver, database, timeout)
    try:
        aif = export_discourse(store, ref, include_predicted=include_predicted)
    except GraphStoreError as e:
        if "no dialogue or document" in str(e):
            raise NotFoundError(str(e)) from e
        if "names" in str(e) and "discourses" in str(e):
            raise ApiError(str(e)) from e
        raise
    validate_aif(aif, ref)
    return aif


def import_map(driver: Driver, database: str, aif: dict[str, Any], corpus: str, name: str) -> tuple[str, IngestReport]:
    """Validate an AIF map and write it as the dialogue ``<corpus>:<name>`` (all or nothing).

    Raises:
        ApiError: Bad corpus or map name.
        LoaderError: The map is malformed (names the node or edge); nothing is written.
    """
    for label, value in (("corpus", corpus), ("name", name)):
        if not _NAME.match(value):
            raise ApiError(f"{label} must be 1-100 letters, digits, '.', '_' or '-' (starting with a letter or digit)")
    try:
        validate_aif(aif, f"AIF map {name}")
    except GraphStoreError as e:
        raise LoaderError(str(e)) from e
    with tempfile.TemporaryDirectory(prefix="argweb-aif-") as tmp:
        path = Path(tmp) / f"{name}.json"
        path.write_text(json.dumps(aif, ensure_ascii=False), encoding="utf-8")
        bundle = load_aif([path], corpus)
    report = GraphStore(driver, database).ingest(bundle)
    return make_id(corpus, name), report
