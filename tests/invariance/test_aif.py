"""AIF maps written another valid way read, and are predicted, the same (QT30 / DialAM task A).

Every variant of :data:`ontology.formats.perturb.AIF_VARIANTS` (node and edge order, ids as integers,
numeric strings or ``N_`` strings, ``Speaker: text`` and padded colons, no timestamps, schemes or
``locutions``) must give the same argument maps up to ids, and ``argweb predict aif`` the same
relations between the same texts; its output keeps every input node and edge as it came.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from api.cli.main import app
from gnn.relations.argmap import ArgMap, anchor_propositions, maps_from_records
from ontology.formats.aif import load_aif
from ontology.formats.aif_write import strip_relations
from ontology.formats.perturb import AIF_VARIANTS, shuffled
from ontology.formats.registry import SAMPLES

MAPS = sorted((SAMPLES / "dialam-2024" / "my_train").glob("*.json"))

pytestmark = pytest.mark.invariance


def _write(tmp: Path, maps: list[tuple[str, dict[str, Any]]]) -> list[Path]:
    tmp.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, data in maps:
        path = tmp / f"{name}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(path)
    return paths


def _read(paths: list[Path]) -> list[ArgMap]:
    bundle = load_aif(paths)
    return maps_from_records(bundle.nodes, bundle.edges)


def _signature(amap: ArgMap) -> tuple[Any, ...]:
    """Everything a model reads of a map, without ids and without the colon's spacing."""
    return (
        [(loc.speaker, loc.duplicate, loc.position, "?" in loc.text) for loc in amap.locutions],
        [(p.text, p.position) for p in amap.props],
        amap.transitions,
        sorted(amap.gold.items()),
        sorted((i, sorted(ks)) for i, ks in amap.gold_anchor.items()),
        anchor_propositions(amap),
    )


@pytest.fixture(scope="module")
def originals() -> list[tuple[str, dict[str, Any]]]:
    assert len(MAPS) >= 3
    return [(p.stem, json.loads(p.read_text(encoding="utf-8"))) for p in MAPS]


REWRITES = {**AIF_VARIANTS, **{f"shuffled, seed {k}": partial(shuffled, seed=k) for k in range(1, 6)}}


@pytest.mark.parametrize("variant", sorted(REWRITES))
def test_every_valid_writing_reads_as_the_same_map(
    variant: str, originals: list[tuple[str, dict[str, Any]]], tmp_path: Path
) -> None:
    base = _read(_write(tmp_path / "plain", originals))
    other = _read(_write(tmp_path / "variant", [(n, REWRITES[variant](d)) for n, d in originals]))
    assert [m.name for m in other] == [m.name for m in base]
    for (_, data), a, b in zip(originals, base, other, strict=True):
        assert _signature(b) == _signature(a), (variant, a.name)
        # Every L-node is read, copies of copies included.
        assert len(b.locutions) == sum(1 for n in data["nodes"] if n["type"] == "L")
    # The variant really is another writing: its node ids or texts or order differ from the file's.
    changed = [REWRITES[variant](d) != d for _, d in originals]
    assert all(changed), variant


def test_speakers_and_copies_do_not_depend_on_the_colon(
    originals: list[tuple[str, dict[str, Any]]], tmp_path: Path
) -> None:
    name, data = originals[0]
    texts = {n["text"] for n in data["nodes"] if n["type"] == "L"}
    assert any(" : " in t for t in texts)
    for variant in ("Speaker: text", "Speaker   :  text"):
        rewritten = {n["text"] for n in AIF_VARIANTS[variant](data)["nodes"] if n["type"] == "L"}
        assert rewritten != texts
    (amap,) = _read(_write(tmp_path, [(name, AIF_VARIANTS["Speaker: text"](data))]))
    spoken = [loc.speaker for loc in amap.locutions if loc.speaker]
    # Every locution but one ("is that right", written without a speaker) names its speaker.
    assert len(spoken) >= len(amap.locutions) - 1 and all(":" not in s for s in spoken)
    assert any(loc.duplicate for loc in amap.locutions)
    # Each copy comes right after the locution it copies, and speaks with its voice.
    for k, loc in enumerate(amap.locutions):
        if loc.duplicate:
            assert amap.locutions[k - 1].speaker == loc.speaker


def _relations_by_text(out_dir: Path) -> dict[str, set[tuple[str, str, str]]]:
    found: dict[str, set[tuple[str, str, str]]] = {}
    for path in sorted(out_dir.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        text = {str(n["nodeID"]): n.get("text") for n in data["nodes"]}
        kind = {str(n["nodeID"]): n["type"] for n in data["nodes"]}
        into: dict[str, list[str]] = {}
        outof: dict[str, list[str]] = {}
        for e in data["edges"]:
            outof.setdefault(str(e["fromID"]), []).append(str(e["toID"]))
            into.setdefault(str(e["toID"]), []).append(str(e["fromID"]))
        rels = set()
        for node, t in kind.items():
            if t in ("RA", "CA", "MA"):
                for s in into.get(node, []):
                    for d in outof.get(node, []):
                        rels.add((str(text[s]), t, str(text[d])))
        found[path.stem] = rels
    return found


@pytest.mark.parametrize("variant", ["all at once", "integer ids", "shuffled"])
@pytest.mark.model
def test_predict_aif_gives_the_same_relations_for_every_writing(
    variant: str, originals: list[tuple[str, dict[str, Any]]], tmp_path: Path
) -> None:
    plain_in = tmp_path / "plain"
    var_in = tmp_path / "variant"
    _write(plain_in, [(n, strip_relations(d)) for n, d in originals])
    variants = [(n, AIF_VARIANTS[variant](strip_relations(d))) for n, d in originals]
    _write(var_in, variants)
    runner = CliRunner()
    for src in (plain_in, var_in):
        result = runner.invoke(app, ["predict", "aif", "--in", str(src), "--out", str(tmp_path / f"out-{src.name}")])
        assert result.exit_code == 0, result.output
    plain = _relations_by_text(tmp_path / "out-plain")
    other = _relations_by_text(tmp_path / "out-variant")
    assert sum(len(r) for r in plain.values()) > 0
    assert other == plain
    # The output keeps every input node and edge exactly as it came, ids of the same JSON type.
    for name, data in variants:
        written = json.loads((tmp_path / "out-variant" / f"{name}.json").read_text(encoding="utf-8"))
        assert written["nodes"][: len(data["nodes"])] == data["nodes"]
        assert written["edges"][: len(data["edges"])] == data["edges"]
        id_types = {type(n["nodeID"]) for n in data["nodes"]}
        for edge in written["edges"][len(data["edges"]) :]:
            assert {type(edge["fromID"]), type(edge["toID"])} <= id_types
