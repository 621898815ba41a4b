"""ContextDeP TSV written another valid way reads, and is predicted, the same.

The files name their columns in a header, so neither the order of the rows nor that of the columns
means anything; fields may be quoted when they need not be, or not at all (plain TSV), and lines
may end in CRLF; the per-annotator files are UTF-16 with a byte-order mark of either byte order.
The reader must give the same records, ``argweb predict contextdep`` the same row for every QID,
with the QIDs in the order of the input.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from api.services import paraphrase
from api.settings import Settings
from ontology.formats.contextdep import load_contextdep
from ontology.formats.perturb import rewrite_table
from ontology.formats.registry import SAMPLES
from tests.invariance.perturb import canonical, differences

pytestmark = pytest.mark.invariance

SAMPLE = SAMPLES / "contextdep"
TOKENS = sorted(SAMPLE.glob("*_TOKEN-annotations.tsv"))
ANNOTATIONS = sorted(p for p in SAMPLE.glob("ANON_*.tsv") if p not in TOKENS)

Rewrite = Callable[[str], str]


def _as_json(column: str, value: str) -> str:
    """A list field written as JSON (``["a", "b"]``, also a Python literal) instead of Python's repr."""
    if value.startswith("["):
        return json.dumps(ast.literal_eval(value), ensure_ascii=False)
    return value


# Each variant: how the token files and how the per-annotator files are written again (None: copied).
VARIANTS: dict[str, tuple[Rewrite, Rewrite | None]] = {
    "rows shuffled": (lambda t: rewrite_table(t, delimiter="\t", row_seed=1),) * 2,
    "columns shuffled": (lambda t: rewrite_table(t, delimiter="\t", column_seed=2),) * 2,
    "all quoted": (lambda t: rewrite_table(t, delimiter="\t", quoting="all"),) * 2,
    # An annotator's comment starts with a quote, so only the token files can be plain TSV.
    "unquoted": (
        lambda t: rewrite_table(t, delimiter="\t", quoting="none"),
        lambda t: rewrite_table(t, delimiter="\t", quoting="all"),
    ),
    "crlf": (lambda t: rewrite_table(t, delimiter="\t", newline="\r\n"),) * 2,
    # The per-annotator files' lists are numbers, which JSON writes as Python does.
    "lists as JSON": (lambda t: rewrite_table(t, delimiter="\t", field=_as_json), None),
    "all": (lambda t: rewrite_table(t, delimiter="\t", row_seed=3, column_seed=4, quoting="all", newline="\r\n"),) * 2,
}


def _write(out: Path, variant: str) -> None:
    """The sample files under ``out``, each rewritten in its own encoding (UTF-16 big-endian in ``all``)."""
    tokens, per_annotator = VARIANTS[variant]
    out.mkdir(parents=True, exist_ok=True)
    for path in TOKENS:
        (out / path.name).write_bytes(tokens(path.read_bytes().decode("utf-8")).encode("utf-8"))
    for path in ANNOTATIONS:
        if per_annotator is None:
            shutil.copyfile(path, out / path.name)
            continue
        text = per_annotator(path.read_bytes().decode("utf-16"))
        data = b"\xfe\xff" + text.encode("utf-16-be") if variant == "all" else text.encode("utf-16")
        (out / path.name).write_bytes(data)


def test_the_rewrites_change_the_files(tmp_path: Path) -> None:
    # A rewrite that wrote the same bytes would make the comparisons below prove nothing.
    for name, (_, per_annotator) in VARIANTS.items():
        _write(tmp_path / name, name)
        for path in TOKENS + (ANNOTATIONS if per_annotator else []):
            assert (tmp_path / name / path.name).read_bytes() != path.read_bytes(), (name, path.name)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_reader_gives_the_same_records(variant: str, tmp_path: Path) -> None:
    plain = canonical(load_contextdep(TOKENS + ANNOTATIONS))
    _write(tmp_path, variant)
    other = canonical(load_contextdep([tmp_path / p.name for p in TOKENS + ANNOTATIONS]))
    assert other == plain, differences(plain, other)


def _rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline=""), delimiter="\t"))


def _qids(path: Path) -> list[str]:
    rows = _rows(path)
    column = [c.strip().lower() for c in rows[0]].index("qid")
    return [r[column] for r in rows[1:] if r]


@pytest.fixture(scope="module")
def plain_prediction(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Settings]:
    root = tmp_path_factory.mktemp("contextdep-plain")
    source = TOKENS[0]
    shutil.copyfile(source, root / source.name)
    settings = Settings(cache_dir=root / "cache")
    paraphrase.predict_file(settings, root / source.name, root / "out.tsv")
    return root / "out.tsv", settings


@pytest.mark.parametrize("variant", ["rows shuffled", "lists as JSON", "all"])
@pytest.mark.model
def test_predict_contextdep_gives_the_same_rows(
    plain_prediction: tuple[Path, Settings], variant: str, tmp_path: Path
) -> None:
    plain, settings = plain_prediction
    _write(tmp_path / "in", variant)
    source = tmp_path / "in" / TOKENS[0].name
    paraphrase.predict_file(settings, source, tmp_path / "out.tsv")
    expected = {r[0]: r for r in _rows(plain)[1:]}
    assert len(expected) == len(_qids(TOKENS[0])) > 0
    written = _rows(tmp_path / "out.tsv")
    assert written[0] == _rows(plain)[0]
    assert {r[0]: r for r in written[1:]} == expected
    # One row per input pair, in the input's order.
    assert [r[0] for r in written[1:]] == _qids(source)
