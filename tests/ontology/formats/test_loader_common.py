"""Helpers shared by the loaders, on hand-made values."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ontology.errors import LoaderError
from ontology.formats.common import expand, find_files, json_depth_exceeds, read_json, unique_files, vote_fields
from ontology.records import relation_from_scheme


def test_vote_fields_derive_the_share_only_from_known_counts() -> None:
    assert vote_fields(3, 4) == {"votes": 3, "annotator_count": 4, "vote_share": 0.75}
    # An aggregate that gives only how many judged (M-Arg's aggregated file) has no share.
    assert vote_fields(None, 5) == {"votes": None, "annotator_count": 5, "vote_share": None}
    assert vote_fields(0, 0)["vote_share"] is None
    assert vote_fields(0, 2)["vote_share"] == 0.0


def test_vote_fields_are_relation_record_fields() -> None:
    rel = relation_from_scheme(
        "m-arg", "Support", "f.csv: pair p1", id="m-arg:pair:p1", corpus="m-arg", **vote_fields(2, 3)
    )
    assert (rel.votes, rel.annotator_count) == (2, 3)
    assert rel.vote_share == pytest.approx(2 / 3)


def test_json_that_python_cannot_read_is_a_loader_error_naming_the_file(tmp_path: Path) -> None:
    cases = {
        "deep.json": ("[" * 5000 + "]" * 5000, "nested too deeply"),
        "deep65.json": ("[" * 65 + "]" * 65, "nested more than 64 levels deep"),
        "long.json": ('{"a":\n ' + "7" * 4301 + "}", "line 2, column 2: a number of more than 4,300 digits"),
    }
    for name, (text, message) in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(LoaderError, match=re.escape(f"{path}:")) as caught:
            read_json(path)
        assert message in str(caught.value)
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps({"a": [1]}).encode())
    assert read_json(bom) == {"a": [1]}
    assert not json_depth_exceeds([[1]] * 3, limit=2) and json_depth_exceeds([[[1]]], limit=2)


def test_files_are_found_through_links_once_and_dangling_links_named(tmp_path: Path) -> None:
    real = tmp_path / "real" / "sub"
    real.mkdir(parents=True)
    (real / "a.json").write_text("{}")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "b.json").write_text("[]")
    (corpus / "linked").symlink_to(tmp_path / "real")
    (corpus / "loop").symlink_to(corpus)  # a link back to an ancestor is walked once
    assert [p.relative_to(corpus) for p in find_files(corpus, "**/*.json")] == [
        Path("b.json"),
        Path("linked/sub/a.json"),
    ]
    assert expand([corpus / "b.json", real / "a.json"], "*.json") == [corpus / "b.json", real / "a.json"]
    with pytest.raises(LoaderError, match="given twice"):
        expand([corpus / "b.json", corpus / "b.json"], "*.json")
    with pytest.raises(LoaderError, match="the same file as"):
        unique_files([real / "a.json", corpus / "linked" / "sub" / "a.json"])
    (corpus / "gone.json").symlink_to(tmp_path / "missing.json")
    with pytest.raises(LoaderError, match=re.escape(f"{corpus / 'gone.json'}: a symbolic link to")):
        find_files(corpus, "*.json")
