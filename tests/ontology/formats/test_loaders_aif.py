"""AIF (QT30 / DialAM-2024) loader on three real nodesets and on broken maps.

The samples were picked so that together they hold every node type (L, I, RA, CA, MA, TA, YA),
locutions listed twice for the same L node (nodeset25723), an L -> L self-loop (nodeset25723), an
L -> RA edge and an L node without a ``Speaker : `` prefix (nodeset18497). Expected numbers are
recomputed here from the raw JSON.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ontology.aiftext import speaker_of
from ontology.errors import LoaderError
from ontology.formats.aif import load_aif
from ontology.formats.common import REMARK
from ontology.formats.registry import CORPORA, SAMPLES
from ontology.records import (
    CorpusBundle,
    DiscourseRecord,
    LocutionRecord,
    PropositionRecord,
    RelationRecord,
    SpeakerRecord,
)
from ontology.terms import Label, RelType

DATA = Path(__file__).resolve().parents[2] / "data"
MAPS_DIR = SAMPLES / "dialam-2024" / "my_train"
MAPS = sorted(MAPS_DIR.glob("*.json"))
BAD = DATA / "bad"
AIF_LABEL = {
    "L": Label.Locution,
    "I": Label.Proposition,
    "RA": Label.Support,
    "CA": Label.Attack,
    "MA": Label.Rephrase,
    "TA": Label.Transition,
    "YA": Label.Illocution,
}


def raw(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def node_of(bundle: CorpusBundle, node_id: str) -> Any:
    return next(n for n in bundle.nodes if n.id == node_id)


def expected_counts(paths: list[Path]) -> dict[str, int]:
    types: Counter[str] = Counter()
    n_nodes = n_edges = spoken = 0
    names: set[str] = set()
    for path in paths:
        data = raw(path)
        listed = {str(loc["nodeID"]) for loc in data["locutions"]}
        l_nodes = [n for n in data["nodes"] if n["type"] == "L"]
        named = dict(zip((str(n["nodeID"]) for n in l_nodes), speaker_of([n["text"] for n in l_nodes]), strict=True))
        for node in data["nodes"]:
            types[AIF_LABEL[node["type"]].value] += 1
            name = named.get(str(node["nodeID"]))
            # A listed locution is spoken by the speaker its text names (one Speaker per name).
            if str(node["nodeID"]) in listed and name is not None:
                spoken += 1
                names.add(name)
        n_nodes += len(data["nodes"])
        n_edges += len(data["edges"])
    return dict(
        sorted(
            {
                **types,
                "Corpus": 1,
                "Dialogue": len(paths),
                "Speaker": len(names),
                "AIF_EDGE": n_edges,
                "PART_OF": len(paths) + n_nodes,
                "SPOKEN_BY": spoken,
            }.items()
        )
    )


def test_samples_cover_the_aif_node_types() -> None:
    assert len(MAPS) == 3
    types = Counter(n["type"] for p in MAPS for n in raw(p)["nodes"])
    assert set(types) == set(AIF_LABEL)


def test_counts_match_raw_json() -> None:
    bundle = load_aif(MAPS, "qt30")
    bundle.validate()
    assert bundle.counts() == expected_counts(MAPS)
    assert all(n.corpus == "qt30" for n in bundle.nodes)


def test_every_node_and_edge_kept_with_scoped_ids() -> None:
    bundle = load_aif(MAPS, "qt30")
    ids = {n.id for n in bundle.nodes}
    aif = {(e.source, e.target, e.id) for e in bundle.edges if e.type is RelType.AIF_EDGE}
    for path in MAPS:
        data = raw(path)
        stem = path.stem
        disc = node_of(bundle, f"qt30:{stem}")
        assert isinstance(disc, DiscourseRecord) and disc.kind == "Dialogue" and disc.source == path.name
        for pos, node in enumerate(data["nodes"]):
            rec = node_of(bundle, f"qt30:{stem}:{node['nodeID']}")
            assert rec.labels()[0] is AIF_LABEL[node["type"]]
            assert (rec.text, rec.local_id, rec.position, rec.discourse) == (node["text"], node["nodeID"], pos, disc.id)
            assert rec.timestamp == node["timestamp"]
        for edge in data["edges"]:
            key = (f"qt30:{stem}:{edge['fromID']}", f"qt30:{stem}:{edge['toID']}", f"qt30:{stem}:e:{edge['edgeID']}")
            assert key in aif
            assert key[0] in ids and key[1] in ids


def test_relation_nodes_keep_aif_type_and_scheme() -> None:
    bundle = load_aif(MAPS, "qt30")
    for path in MAPS:
        for node in raw(path)["nodes"]:
            if node["type"] in ("L", "I"):
                continue
            rec = node_of(bundle, f"qt30:{path.stem}:{node['nodeID']}")
            assert isinstance(rec, RelationRecord)
            assert rec.aif_type == node["type"] and rec.origin == "gold"
            assert rec.scheme_label == node.get("scheme") and rec.scheme_id == node.get("schemeID")
            assert rec.scheme_class == f"https://w3id.org/argweb/scheme/qt30#{node['type']}"
            assert {Label.SchemeNode, Label.Relation, Label.Node} <= set(rec.labels())
    props = [n for n in bundle.nodes if isinstance(n, PropositionRecord)]
    assert props and all(p.labels() == (Label.Proposition, Label.Node) for p in props)


def test_duplicated_locutions_and_speakers() -> None:
    path = MAPS_DIR / "nodeset25723.json"
    data = raw(path)
    listed = Counter(str(loc["nodeID"]) for loc in data["locutions"])
    twice = sorted(n for n, c in listed.items() if c > 1)
    assert twice, "nodeset25723 lists some locutions twice"
    bundle = load_aif([path], "qt30")
    for node_id in twice:
        rec = node_of(bundle, f"qt30:{path.stem}:{node_id}")
        assert isinstance(rec, LocutionRecord)
        entries = json.loads(rec.aif_locutions or "[]")
        assert len(entries) == listed[node_id]
        assert all("nodeID" not in e for e in entries)
        assert rec.speaker_id == f"qt30:speaker:{rec.speaker}"
    first = node_of(bundle, "qt30:nodeset25723:816229")
    assert first.speaker == "John Ashworth"


def test_speakers_are_named_from_the_locutions_with_their_person_ids() -> None:
    bundle = load_aif(MAPS, "qt30")
    speakers = {s.id: s for s in bundle.nodes if isinstance(s, SpeakerRecord)}
    persons: dict[str, set[str]] = {}
    for path in MAPS:
        data = raw(path)
        l_nodes = [n for n in data["nodes"] if n["type"] == "L"]
        named = dict(zip((str(n["nodeID"]) for n in l_nodes), speaker_of([n["text"] for n in l_nodes]), strict=True))
        for loc in data["locutions"]:
            name = named[str(loc["nodeID"])]
            if name is not None and loc.get("personID") is not None:
                persons.setdefault(name, set()).add(str(loc["personID"]))
    assert persons, "the sample maps name their speakers"
    assert {s.name: set(s.person_ids or ()) for s in speakers.values()} == persons
    assert all(s.id == f"qt30:speaker:{s.name}" for s in speakers.values())
    # Every spoken locution points to the Speaker its text names.
    for rec in bundle.nodes:
        if isinstance(rec, LocutionRecord) and rec.speaker_id is not None:
            assert speakers[rec.speaker_id].name == rec.speaker
    assert "Lisa Nandy" in {s.name for s in speakers.values()}


def test_odd_edges_are_kept() -> None:
    loop = load_aif([MAPS_DIR / "nodeset25723.json"], "qt30")
    self_loops = [e for e in loop.edges if e.type is RelType.AIF_EDGE and e.source == e.target]
    assert [e.id for e in self_loops] == ["qt30:nodeset25723:e:1029618"]
    odd = load_aif([MAPS_DIR / "nodeset18497.json"], "qt30")
    edge = next(e for e in odd.edges if e.id == "qt30:nodeset18497:e:725973")
    assert isinstance(node_of(odd, edge.source), LocutionRecord)
    assert isinstance(node_of(odd, edge.target), RelationRecord)
    bare = node_of(odd, "qt30:nodeset18497:554188")  # "is that right": no "Speaker : " prefix
    assert bare.text == "is that right" and bare.speaker is None


def test_same_map_under_two_names_gives_distinct_nodes(tmp_path: Path) -> None:
    src = MAPS_DIR / "nodeset21318.json"
    a, b = tmp_path / "mapA.json", tmp_path / "mapB.json"
    shutil.copyfile(src, a)
    shutil.copyfile(src, b)
    bundle = load_aif([a, b], "qt30")
    bundle.validate()
    n = len(raw(src)["nodes"])
    assert sum(1 for x in bundle.nodes if x.id.startswith("qt30:mapA:")) == n
    assert sum(1 for x in bundle.nodes if x.id.startswith("qt30:mapB:")) == n
    assert bundle.counts() == expected_counts([a, b])


def test_registry_finds_the_samples() -> None:
    root = SAMPLES
    files = CORPORA["qt30"].find(root)
    assert files == MAPS
    assert CORPORA["qt30"].load(files).counts() == expected_counts(MAPS)


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("aif_edge_missing_node.json", r": edge 913057: refers to missing node '999999'"),
        ("aif_unknown_node_type.json", r": node 707853: unknown AIF node type 'XA'"),
    ],
)
def test_bad_maps_name_file_and_record(name: str, where: str) -> None:
    path = BAD / name
    with pytest.raises(LoaderError, match=where) as err:
        load_aif([path], "qt30")
    assert str(err.value).startswith(str(path))


def test_malformed_maps(tmp_path: Path) -> None:
    cases: list[tuple[Any, str]] = [
        ([], r"expected an object, got list"),
        ({"nodes": []}, r"missing field 'edges'"),
        (
            {
                "nodes": [{"nodeID": "1", "type": "L", "text": "a"}, {"nodeID": "1", "type": "I", "text": "a"}],
                "edges": [],
            },
            r"node 1: duplicate nodeID",
        ),
        ({"nodes": [{"nodeID": "1"}], "edges": []}, r"node 1: missing field 'type'"),
        ({"nodes": [], "edges": [], "locutions": [{"nodeID": "9", "personID": "1"}]}, r"locution for missing node '9'"),
    ]
    for k, (content, message) in enumerate(cases):
        path = tmp_path / f"map{k}.json"
        path.write_text(json.dumps(content), encoding="utf-8")
        with pytest.raises(LoaderError, match=message):
            load_aif([path], "qt30")


def _one_node_map(tmp_path: Path, node: str, name: str = "drill") -> Path:
    """A map with one I-node written as the JSON text ``node`` (so that ``Infinity`` stays a bare token)."""
    path = tmp_path / f"{name}.json"
    path.write_text('{"nodes": [' + node + '], "edges": []}', encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ('{"nodeID": "7", "type": "I", "text": ["a", "b"]}', "node 7: field 'text' has type list"),
        ('{"nodeID": "7", "type": "I", "text": 42}', "node 7: field 'text' has type int"),
        ('{"nodeID": "7", "type": "I", "text": "a", "timestamp": Infinity}', "node 7: field 'timestamp' is inf"),
        ('{"nodeID": "7", "type": "I", "text": "a", "timestamp": 12}', "node 7: field 'timestamp' is 12"),
        ('{"nodeID": "7", "type": "I"}', "node 7: missing field 'text'"),
        ('{"nodeID": "7", "type": "I", "text": null}', "node 7: field 'text' has type NoneType"),
    ],
)
def test_a_node_text_or_timestamp_that_is_no_string_is_refused(tmp_path: Path, node: str, message: str) -> None:
    """Issue 47, item 11: these were stored as their Python spelling (``"['a', 'b']"``, ``"inf"``) or
    as a node without text; the reader, which every door shares, refuses them naming file and node."""
    path = _one_node_map(tmp_path, node)
    with pytest.raises(LoaderError, match=message.replace("(", r"\(")) as err:
        load_aif([path], "drill")
    assert str(err.value).startswith(str(path))


def test_a_load_without_nodes_is_refused(tmp_path: Path) -> None:
    """A file that loads nothing is refused, not recorded: else the corpus marker is rewritten. An
    empty map beside others is an empty dialogue, as DialAM's maps are written back as they came."""
    good = _one_node_map(tmp_path, '{"nodeID": "7", "type": "I", "text": "a"}', "good")
    empty = tmp_path / "empty.json"
    empty.write_text('{"nodes": [], "edges": []}', encoding="utf-8")
    with pytest.raises(LoaderError, match=r"empty\.json: the map holds no nodes"):
        load_aif([empty], "drill")
    other = tmp_path / "other.json"
    other.write_text('{"nodes": [], "edges": []}', encoding="utf-8")
    with pytest.raises(LoaderError, match=r"none of the 2 maps holds a node; nothing"):
        load_aif([empty, other], "drill")
    bundle = load_aif([good, empty], "drill")
    assert sorted(n.local_id for n in bundle.nodes if isinstance(n, DiscourseRecord)) == ["empty", "good"]


def test_self_loops_and_locutions_of_other_nodes_are_kept_and_reported(tmp_path: Path) -> None:
    """Seven DialAM-2024 training maps hold an L -> L edge to the node itself and five a locution of a
    node that is no L-node: data that gold holds is kept (the loop) or left out (the locution), and said."""
    path = tmp_path / "loop.json"
    aif = {
        "nodes": [
            {"nodeID": "1", "type": "L", "text": "Ann : Tax sugar"},
            {"nodeID": "2", "type": "I", "text": "Tax sugar"},
        ],
        "edges": [{"edgeID": "9", "fromID": "1", "toID": "1"}],
        "locutions": [{"nodeID": "1", "personID": "4"}, {"nodeID": "2", "personID": "4"}],
    }
    path.write_text(json.dumps(aif), encoding="utf-8")
    bundle = load_aif([path], "drill")
    assert f"{REMARK}{path}: edge 9: links L node 1 to itself; stored as it is" in bundle.notes
    assert f"{REMARK}{path}: locution of I node 2, which is not an L-node; not stored" in bundle.notes
    aif_edges = [(e.source, e.target) for e in bundle.edges if e.type == RelType.AIF_EDGE]
    assert aif_edges == [("drill:loop:1", "drill:loop:1")]


def test_a_locution_of_a_person_who_is_no_participant_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    aif = {
        "nodes": [{"nodeID": "1", "type": "L", "text": "Ann : Tax sugar"}],
        "edges": [],
        "locutions": [{"nodeID": "1", "personID": "5"}],
        "participants": [{"participantID": "4", "firstname": "Ann", "surname": "Lee"}],
    }
    path.write_text(json.dumps(aif), encoding="utf-8")
    with pytest.raises(LoaderError, match=r"locution #0 \(node 1\): personID '5' is not a participant"):
        load_aif([path], "drill")
