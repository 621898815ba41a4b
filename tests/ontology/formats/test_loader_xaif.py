"""xAIF / OVA3 reader and writer without a database: forms, id kinds, partial maps, layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ontology.errors import ApiError, LoaderError
from ontology.formats.xaif import load_xaif, map_form
from ontology.formats.xaif_write import convert, to_ova, to_xaif
from ontology.records import LocutionRecord, PropositionRecord, RelationRecord, SpeakerRecord

FORMATS = Path(__file__).resolve().parents[2] / "data" / "formats"
OVA3 = FORMATS / "ova3_analysis.json"
XAIF = FORMATS / "xaif_integer_ids.json"
PARTIAL = FORMATS / "xaif_partial.json"


def units(path: Path) -> dict[str, Any]:
    bundle = load_xaif([path], "maps")
    bundle.validate()
    return {n.local_id: n for n in bundle.nodes if isinstance(n, LocutionRecord | PropositionRecord | RelationRecord)}


def test_the_form_is_told_by_the_keys() -> None:
    assert map_form(json.loads(OVA3.read_text())) == "ova"
    assert map_form(json.loads(XAIF.read_text())) == "xaif"
    assert map_form({"nodes": [], "edges": []}) == "aif"
    assert map_form([1, 2]) == ""


def test_ova3_layout_speakers_and_schemes_are_kept() -> None:
    got = units(OVA3)
    assert (got["1_f3a9"].layout_x, got["1_f3a9"].layout_y) == (50.0, 40.0)
    assert (got["11_f3a9"].layout_x, got["11_f3a9"].layout_y) == (790.0, 310.0)
    assert all(u.layout_x is not None for u in got.values()), "OVA3 places every node"
    assert got["4_f3a9"].speaker == "Alice"
    ra = got["7_f3a9"]
    assert isinstance(ra, RelationRecord) and ra.aif_type == "RA" and ra.scheme_id == "72"  # from schemefulfillments
    bundle = load_xaif([OVA3], "maps")
    assert {s.name for s in bundle.nodes if isinstance(s, SpeakerRecord)} == {"Alice Adams", "Bob Brown"}


def test_integer_and_string_ids_are_the_same_graph(tmp_path: Path) -> None:
    data = json.loads(XAIF.read_text())
    as_strings = json.loads(json.dumps(data))
    for node in as_strings["AIF"]["nodes"]:
        node["nodeID"] = str(node["nodeID"])
    for edge in as_strings["AIF"]["edges"]:
        edge.update(edgeID=str(edge["edgeID"]), fromID=str(edge["fromID"]), toID=str(edge["toID"]))
    for loc in as_strings["AIF"]["locutions"]:
        loc["nodeID"] = str(loc["nodeID"])
    other = tmp_path / XAIF.name
    other.write_text(json.dumps(as_strings))
    a, b = load_xaif([XAIF], "maps"), load_xaif([other], "maps")
    dump = lambda bundle: sorted(json.dumps(n.model_dump(), sort_keys=True) for n in bundle.nodes[1:])  # noqa: E731
    assert dump(a) == dump(b)
    assert sorted((e.source, e.target) for e in a.edges) == sorted((e.source, e.target) for e in b.edges)


def test_a_partial_map_is_stored_as_it_is_and_what_is_missing_is_reported() -> None:
    bundle = load_xaif([PARTIAL], "maps")
    bundle.validate()
    assert bundle.notes == [f"{PARTIAL}: RA node 8 has no conclusion (no edge out of it); stored as it is"]
    got = units(PARTIAL)
    assert isinstance(got["8"], RelationRecord) and got["8"].aif_type == "RA"
    assert got["1"].speaker == "Speaker 1"  # no locutions, no participants: from the L text


def test_plain_aif_and_xaif_of_one_map_read_the_same(tmp_path: Path) -> None:
    plain = tmp_path / XAIF.name
    plain.write_text(json.dumps(json.loads(XAIF.read_text())["AIF"]))
    dump = lambda p: sorted(json.dumps(n.model_dump(), sort_keys=True) for n in load_xaif([p], "maps").nodes[1:])  # noqa: E731
    assert dump(plain) == dump(XAIF)


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        (lambda d: d["OVA"]["nodes"][2].update(x="left"), "OVA node 3_f3a9: field 'x' is not a number: 'left'"),
        (lambda d: d["OVA"]["nodes"][0].update(y=None), "OVA node 1_f3a9: field 'y' has type NoneType"),
        (lambda d: d["OVA"]["nodes"].append({"nodeID": "99", "x": 1, "y": 2}), "layout of node '99'"),
        (lambda d: d["AIF"]["edges"].append({"edgeID": 99, "fromID": "1_f3a9", "toID": "77"}), "edge 99"),
        (lambda d: d.update(AIF=[1]), "field 'AIF' has type list"),
        (lambda d: d["AIF"]["nodes"][1].update(type="XA"), "node 2_f3a9: unknown AIF node type 'XA'"),
    ],
)
def test_bad_maps_are_refused_naming_file_and_record(change: Any, expect: str, tmp_path: Path) -> None:
    data = json.loads(OVA3.read_text())
    change(data)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    with pytest.raises(LoaderError) as caught:
        load_xaif([broken], "maps")
    assert str(broken) in str(caught.value) and expect in str(caught.value)


def test_neither_form_is_refused(tmp_path: Path) -> None:
    odd = tmp_path / "odd.json"
    odd.write_text('{"graph": {}}')
    with pytest.raises(LoaderError, match="neither an xAIF / OVA3 file"):
        load_xaif([odd], "maps")


AIF_MAP: dict[str, Any] = {
    "nodes": [
        {"nodeID": "a", "text": "Ann : Tax sugar", "type": "L"},
        {"nodeID": "b", "text": "Tax sugar", "type": "I"},
        {"nodeID": "c", "text": "Default Illocuting", "type": "YA", "scheme": "Default Illocuting", "schemeID": "168"},
        {"nodeID": "d", "text": "It cuts harm", "type": "I"},
        {"nodeID": "e", "text": "Default Inference", "type": "RA", "scheme": "Default Inference", "schemeID": "72"},
    ],
    "edges": [
        {"edgeID": "e1", "fromID": "a", "toID": "c", "formEdgeID": None},
        {"edgeID": "e2", "fromID": "c", "toID": "b", "formEdgeID": None},
        {"edgeID": "e3", "fromID": "d", "toID": "e", "formEdgeID": None},
        {"edgeID": "e4", "fromID": "e", "toID": "b", "formEdgeID": None},
    ],
    "locutions": [{"nodeID": "a", "personID": "p7", "timestamp": None}],
    "participants": [{"participantID": "p7", "firstname": "Ann", "surname": "Lee"}],
    "schemefulfillments": [],
    "descriptorfulfillments": [],
    "layout": [{"nodeID": "b", "x": 100.0, "y": 20.5}],
}


def test_xaif_writes_integer_ids_consistently_and_the_stored_layout() -> None:
    out = to_xaif(AIF_MAP)
    ids = {n["text"]: n["nodeID"] for n in out["AIF"]["nodes"]}
    assert sorted(ids.values()) == [1, 2, 3, 4, 5]
    assert {(e["fromID"], e["toID"]) for e in out["AIF"]["edges"]} == {
        (ids["Ann : Tax sugar"], ids["Default Illocuting"]),
        (ids["Default Illocuting"], ids["Tax sugar"]),
        (ids["It cuts harm"], ids["Default Inference"]),
        (ids["Default Inference"], ids["Tax sugar"]),
    }
    assert all(isinstance(e["edgeID"], int) for e in out["AIF"]["edges"])
    assert out["AIF"]["locutions"][0]["personID"] == out["AIF"]["participants"][0]["participantID"] == 1
    assert out["dialog"] is True and f'id="{ids["Ann : Tax sugar"]}"' in out["text"]["txt"]
    assert out["ova"]["nodes"] == [{"nodeID": ids["Tax sugar"], "visible": True, "x": 100, "y": 20.5, "timestamp": ""}]
    assert "layout" not in out["AIF"]
    assert {(f["nodeID"], f["schemeID"]) for f in out["AIF"]["schemefulfillments"]} == {
        (ids["Default Illocuting"], "168"),
        (ids["Default Inference"], "72"),
    }


def test_ova_places_every_node_without_moving_the_stored_ones() -> None:
    out = to_ova(AIF_MAP)
    places = {n["nodeID"]: (n["x"], n["y"]) for n in out["OVA"]["nodes"]}
    assert set(places) == {"a", "b", "c", "d", "e"} and all(n["visible"] for n in out["OVA"]["nodes"])
    assert places["b"] == (100, 20.5)
    assert len(set(places.values())) == 5, "no two nodes on one spot"
    assert min(y for nid, (_, y) in places.items() if nid != "b") > 20.5, "generated cells lie below the stored ones"
    assert [e["fromID"] for e in out["OVA"]["edges"]] == ["a", "c", "d", "e"]
    assert "layout" not in out["AIF"] and "layout" not in convert(AIF_MAP, "aif")
    with pytest.raises(ApiError, match="unknown map format"):
        convert(AIF_MAP, "svg")
