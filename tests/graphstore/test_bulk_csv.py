"""Bulk load without Neo4j: CSV typing and quoting, the files a bundle becomes, the importer command."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from graphstore.bulk import (
    ARRAY_DELIMITER,
    CsvWriter,
    csv_cell,
    csv_type,
    import_arguments,
    import_outcome,
    split_by_types,
)
from ontology.errors import GraphStoreError, LoaderError
from ontology.records import CorpusBundle, CorpusRecord, DiscourseRecord, EdgeRecord, LocutionRecord, SpeakerRecord
from ontology.terms import RelType


def test_csv_types_follow_python_values() -> None:
    assert csv_type("x") == "string"
    assert csv_type(3) == "long"
    assert csv_type(0.5) == "double"
    assert csv_type(True) == "boolean"
    assert csv_type(["a", "b"]) == "string[]"
    assert csv_type([0.1, 0.2]) == "double[]"
    assert csv_type([1, 2]) == "long[]"
    with pytest.raises(GraphStoreError, match="mixes element types"):
        csv_type([1, "a"])


def test_cells_quote_strings_and_leave_absent_values_empty() -> None:
    assert csv_cell(None) == ""
    assert csv_cell("") == '""'
    assert csv_cell('say "hi", then\nleave') == '"say ""hi"", then\nleave"'
    assert csv_cell(False) == "false"
    assert csv_cell(0.1) == "0.1"
    assert float(csv_cell(1 / 3)) == 1 / 3
    assert csv_cell(["a;b", "c"]) == f'"a;b{ARRAY_DELIMITER}c"'
    with pytest.raises(GraphStoreError, match="array delimiter"):
        csv_cell([f"x{ARRAY_DELIMITER}y"])


def test_rows_with_clashing_value_types_go_to_separate_parts() -> None:
    rows = [
        {"id": "a", "props": {"id": "a", "score": 1.0}},
        {"id": "b", "props": {"id": "b", "score": 2}},
        {"id": "c", "props": {"id": "c", "score": 3.0, "name": "x"}},
        {"id": "d", "props": {"id": "d"}},
    ]
    parts = split_by_types(rows, skip=frozenset({"id"}))
    assert [(columns, [r["id"] for r in part]) for columns, part in parts] == [
        ({"score": "double", "name": "string"}, ["a", "c", "d"]),
        ({"score": "long"}, ["b"]),
    ]


def _bundle() -> CorpusBundle:
    corpus = CorpusRecord(id="t", corpus="t", name="test corpus")
    nodes = [
        DiscourseRecord(id="t:d", corpus="t", kind="Dialogue", local_id="d"),
        SpeakerRecord(id="t:s", corpus="t", name="Ann"),
        LocutionRecord(id="t:l1", corpus="t", discourse="t:d", position=0, text='a "quoted"\nline', speaker_id="t:s"),
        LocutionRecord(id="t:l2", corpus="t", discourse="t:d", position=1, text="", tokens=["x", "y"]),
        LocutionRecord(id="t:l3", corpus="t", discourse="t:d", position=2, text="z", tokens=[]),
    ]
    edges = [
        EdgeRecord(type=RelType.AIF_EDGE, source="t:l1", target="t:l2", corpus="t", id="t:e1"),
        # An AIF edge is one per type and ends (what the store MERGEs on); the way back is another.
        EdgeRecord(type=RelType.AIF_EDGE, source="t:l2", target="t:l1", corpus="t", id="t:e2"),
    ]
    return CorpusBundle(corpus, nodes, edges, origin="test")


def _read(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def test_a_bundle_becomes_one_file_per_label_set_and_relationship_type(tmp_path: Path) -> None:
    bundle = _bundle()
    writer = CsvWriter(tmp_path)
    counts = writer.write_bundle(bundle, "batch-1")
    assert counts == bundle.counts()
    by_tag = {(f.kind, f.tag): f for f in writer.files}
    locutions = next(f for (kind, tag), f in by_tag.items() if kind == "nodes" and tag.startswith("Locution"))
    assert locutions.tag.split(":")[-1] == "Node"
    assert locutions.multiline and locutions.rows == 3
    rows = _read(locutions.path)
    header = locutions.path.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[0] == "id:ID"
    assert {"batch:string", "position:long", "text:string", "tokens:string[]"} <= set(header)
    assert "speaker_id:string" not in header  # not a node property: it becomes SPOKEN_BY
    first, second, third = sorted(rows, key=lambda r: r["id:ID"])
    # The importer cannot write an empty array: it is left out and set after the import.
    assert third["tokens:string[]"] == ""
    assert writer.empty_lists == {"tokens": ["t:l3"]}
    assert first["text:string"] == 'a "quoted"\nline'
    assert second["text:string"] == ""
    assert second["tokens:string[]"] == f"x{ARRAY_DELIMITER}y"
    assert {r["batch:string"] for r in rows} == {"batch-1"}
    # Absent values are empty and unquoted (no property), empty strings are quoted (a property).
    raw = locutions.path.read_text(encoding="utf-8")
    assert ',"",' in raw

    corpus = next(f for (kind, tag), f in by_tag.items() if kind == "nodes" and tag.startswith("Corpus"))
    (marker,) = _read(corpus.path)
    assert marker["status:string"] == "complete"
    assert marker["ingest_run:string"] == "batch-1"
    assert json.loads(marker["counts:string"]) == counts

    aif = by_tag[("relationships", "AIF_EDGE")]
    assert sorted(r["id:string"] for r in _read(aif.path)) == ["t:e1", "t:e2"]
    assert by_tag[("relationships", "PART_OF")].rows == 4  # three locutions and the dialogue
    assert by_tag[("relationships", "SPOKEN_BY")].rows == 1


def test_an_inconsistent_bundle_writes_nothing(tmp_path: Path) -> None:
    corpus = CorpusRecord(id="t", corpus="t", name="test")
    bad = CorpusBundle(corpus, [], [EdgeRecord(type=RelType.AIF_EDGE, source="t", target="t:x", corpus="t")], "bad")
    writer = CsvWriter(tmp_path)
    with pytest.raises(LoaderError, match="missing node 't:x'"):
        writer.write_bundle(bad, "b")
    assert writer.files == [] and not list(tmp_path.glob("*.csv"))


def test_importer_arguments_name_the_database_before_the_file_lists(tmp_path: Path) -> None:
    writer = CsvWriter(tmp_path)
    writer.write_bundle(_bundle(), "b")
    args = import_arguments(writer.files, "neo4j", threads=2)
    assert args[:4] == ["database", "import", "full", "neo4j"]
    assert "--overwrite-destination=true" in args and "--threads=2" in args
    multiline = [a for a in args if a.startswith("--multiline-fields=")]
    assert multiline == [f"--multiline-fields={next(f.path for f in writer.files if f.multiline)}"]
    assert sum(a.startswith(("--nodes=", "--relationships=")) for a in args) == len(writer.files)


def test_the_importer_outcome_is_read_from_the_launcher_log() -> None:
    assert import_outcome(b"Neo4j version: 5.26\nargweb-neo4j import exit 0 after 12345 ms\n") == (0, 12.345)
    assert import_outcome(b"...\nargweb-neo4j import exit 1 after 80 ms\n") == (1, 0.08)
    assert import_outcome(b"argweb-neo4j ready bolt://127.0.0.1:7687\n") is None
