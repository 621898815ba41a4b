"""Sci-Arg brat papers written another valid way read, and are predicted, the same.

brat gives the numbers of ``T``/``R`` ids, the order of an ``.ann`` file's lines and its line ends
no meaning; the reader must give the same records up to ids, ``argweb predict sciarg`` the same
relations between the same spans, and its output must keep the input's own span ids.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from api.services import relations
from api.settings import Settings
from ontology.formats.perturb import crlf, renumber_brat, shuffle_lines
from ontology.formats.registry import SAMPLES
from ontology.formats.sciarg import load_sciarg
from ontology.records import CorpusBundle, NodeRecord, PropositionRecord, RelationRecord
from tests.invariance.perturb import canonical, differences

pytestmark = pytest.mark.invariance

PAPERS = SAMPLES / "sciarg" / "compiled_corpus"
ANNS = sorted(PAPERS.glob("*.ann"))


def _renumbered(text: str, seed: int) -> tuple[str, dict[str, str]]:
    return renumber_brat(text, seed)


def _reordered(text: str, seed: int) -> tuple[str, dict[str, str]]:
    return shuffle_lines(text, seed), {}


def _windows(text: str, seed: int) -> tuple[str, dict[str, str]]:
    return crlf(text), {}


def _all(text: str, seed: int) -> tuple[str, dict[str, str]]:
    renumbered, mapping = renumber_brat(text, seed)
    return crlf(shuffle_lines(renumbered, seed + 1)), mapping


Variant = Callable[[str, int], tuple[str, dict[str, str]]]
VARIANTS: dict[str, Variant] = {"renumbered": _renumbered, "reordered": _reordered, "crlf": _windows, "all": _all}


def _write(out: Path, variant: Variant, seed: int) -> dict[str, dict[str, str]]:
    """The sample papers under ``out`` with their ``.ann`` rewritten; the id maps per paper."""
    out.mkdir(parents=True, exist_ok=True)
    maps = {}
    for ann in ANNS:
        text, mapping = variant(ann.read_bytes().decode("utf-8"), seed)
        # A rewrite that left the file as it was would make the comparisons prove nothing.
        assert text.encode("utf-8") != ann.read_bytes()
        (out / ann.name).write_bytes(text.encode("utf-8"))
        shutil.copyfile(ann.with_suffix(".txt"), out / ann.with_suffix(".txt").name)
        maps[ann.stem] = mapping
    return maps


def _names(bundle: CorpusBundle) -> Callable[[NodeRecord], str | None]:
    """Components named by paper, spans and type; relations by type and the names of their ends."""
    comps = {
        n.id: f"{n.discourse}|{n.spans}|{n.scheme_label}" for n in bundle.nodes if isinstance(n, PropositionRecord)
    }
    into: dict[str, list[str]] = {}
    out: dict[str, list[str]] = {}
    for e in bundle.edges:
        into.setdefault(e.target, []).append(comps.get(e.source, e.source))
        out.setdefault(e.source, []).append(comps.get(e.target, e.target))

    def name(node: NodeRecord) -> str | None:
        if isinstance(node, PropositionRecord):
            return comps[node.id]
        if isinstance(node, RelationRecord):
            return f"{node.scheme_label}({sorted(into.get(node.id, []))} -> {sorted(out.get(node.id, []))})"
        return None

    return name


def _canonical(paths: list[Path]) -> list[str]:
    bundle = load_sciarg(paths)
    return canonical(bundle, _names(bundle))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_reader_gives_the_same_records(variant: str, seed: int, tmp_path: Path) -> None:
    _write(tmp_path, VARIANTS[variant], seed)
    plain = _canonical(ANNS)
    other = _canonical(sorted(tmp_path.glob("*.ann")))
    assert other == plain, differences(plain, other)


def _relations(ann: Path, back: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """The ``R`` lines of a predicted ``.ann`` in order as (id, type, Arg1, Arg2), span ids mapped by ``back``."""
    found = []
    for line in ann.read_bytes().decode("utf-8").splitlines():
        if line.startswith("R"):
            key, rest = line.split("\t")
            label, arg1, arg2 = rest.split()
            found.append((key, label, back.get(arg1[5:], arg1[5:]), back.get(arg2[5:], arg2[5:])))
    return found


@pytest.fixture(scope="module")
def plain_prediction(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, Path]:
    root = tmp_path_factory.mktemp("sciarg-plain")
    settings = Settings(cache_dir=root / "cache", data_dir=root / "data")
    relations.predict_sciarg(settings, PAPERS, root / "out")
    return settings, root / "out"


@pytest.mark.parametrize("variant", ["renumbered", "reordered", "all"])
@pytest.mark.model
def test_predict_sciarg_gives_the_same_relations(
    plain_prediction: tuple[Settings, Path], variant: str, tmp_path: Path
) -> None:
    settings, plain = plain_prediction
    maps = _write(tmp_path / "in", VARIANTS[variant], seed=3)
    relations.predict_sciarg(settings, tmp_path / "in", tmp_path / "out")
    for ann in ANNS:
        back = {new: old for old, new in maps[ann.stem].items()}
        expected = _relations(plain / ann.name, {})
        assert expected, f"{ann.name}: no relations predicted, the comparison would prove nothing"
        assert _relations(tmp_path / "out" / ann.name, back) == expected
        # The output keeps every line of the input but its gold relations, ids and all, in place.
        given = (tmp_path / "in" / ann.name).read_bytes().decode("utf-8").splitlines()
        written = (tmp_path / "out" / ann.name).read_bytes().decode("utf-8").splitlines()
        kept = [line for line in given if not line.startswith("R")]
        assert [line for line in written if not line.startswith("R")] == kept
        assert any(line.startswith("T") for line in kept)
