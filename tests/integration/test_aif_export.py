"""AIF export: QT30 maps survive ingest + export; other corpora come out as AIF of the right shape."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphstore.aif_export import build_aif, export_corpus, export_discourse, validate_aif
from graphstore.predictions import PredictionStore
from graphstore.runtime import EmbeddedNeo4j
from graphstore.store import GraphStore
from ontology.errors import ClientError, GraphStoreError, NotFoundError
from ontology.formats.aif import load_aif
from ontology.formats.dialogue_json import load_dialogue_json
from ontology.labels import RelationLabel
from ontology.records import (
    CorpusBundle,
    CorpusRecord,
    DiscourseRecord,
    EdgeRecord,
    LocutionRecord,
    NodeRecord,
    PredictedRelation,
    PredictionRun,
    PropositionRecord,
    RelationRecord,
    SpeakerRecord,
    link,
    scheme_term,
)
from ontology.terms import Label
from tests.conftest import PASSWORD, SAMPLES

QT30_MAPS = sorted((SAMPLES / "dialam-2024" / "my_train").glob("nodeset*.json"))
MOLWENI = SAMPLES / "molweni" / "DP" / "dev.json"


def _by_id(aif: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["nodeID"]: n for n in aif["nodes"]}


def node_multiset(aif: dict[str, Any]) -> Counter[tuple[Any, ...]]:
    return Counter((n["type"], n["text"], n.get("scheme"), n.get("schemeID"), n.get("timestamp")) for n in aif["nodes"])


def edge_multiset(aif: dict[str, Any]) -> Counter[tuple[Any, ...]]:
    nodes = _by_id(aif)
    return Counter(
        ((nodes[e["fromID"]]["type"], nodes[e["fromID"]]["text"]), (nodes[e["toID"]]["type"], nodes[e["toID"]]["text"]))
        for e in aif["edges"]
    )


def locution_multiset(aif: dict[str, Any]) -> Counter[tuple[Any, ...]]:
    nodes = _by_id(aif)
    keys = ("personID", "timestamp", "start", "end", "source")
    return Counter((nodes[loc["nodeID"]]["text"], *(loc.get(k) for k in keys)) for loc in aif["locutions"])


def xaif_relations(aif: dict[str, Any]) -> Counter[tuple[str, str, str]]:
    """Argument relations between I-nodes as ARG-tech's xaif package reads them."""
    from xaif import AIF

    reader = AIF({"AIF": aif})
    assert reader.is_valid_json_aif()
    table = reader.get_csv("argument-relation")
    rows = zip(table["proposition1_text"], table["proposition2_text"], table["relation"], strict=True)
    return Counter((a, b, rel) for a, b, rel in rows if rel != "None")


@pytest.fixture
def qt30(store: GraphStore) -> GraphStore:
    assert QT30_MAPS, "QT30 fixture maps missing"
    store.ingest(load_aif(QT30_MAPS, "qt30"))
    return store


def test_qt30_map_round_trips(qt30: GraphStore) -> None:
    for path in QT30_MAPS:
        original = json.loads(path.read_text(encoding="utf-8"))
        exported = export_discourse(qt30, path.stem)
        validate_aif(exported, str(path))
        assert node_multiset(exported) == node_multiset(original), path.name
        assert edge_multiset(exported) == edge_multiset(original), path.name
        assert locution_multiset(exported) == locution_multiset(original), path.name
        # Ids are unique within a map, so the export even keeps them.
        assert {n["nodeID"] for n in exported["nodes"]} == {n["nodeID"] for n in original["nodes"]}
        assert {e["edgeID"] for e in exported["edges"]} == {e["edgeID"] for e in original["edges"]}
        # Every person of the locutions is a participant named after the L-node's speaker.
        people = {p["participantID"]: f"{p['firstname']} {p['surname']}" for p in exported["participants"]}
        assert set(people) == {loc["personID"] for loc in original["locutions"]}
        by_id = _by_id(original)
        for loc in original["locutions"]:
            assert by_id[loc["nodeID"]]["text"].startswith(people[loc["personID"]])


def test_qt30_map_with_predictions_keeps_its_ids_and_provenance(qt30: GraphStore) -> None:
    path = QT30_MAPS[0]
    original = json.loads(path.read_text(encoding="utf-8"))
    inodes = [n["nodeID"] for n in original["nodes"] if n["type"] == "I"]
    run = PredictionRun(run_id="aif-ids", model="m", model_version="1", task="relations")
    predicted = PredictedRelation(
        source=f"qt30:{path.stem}:{inodes[0]}",
        target=f"qt30:{path.stem}:{inodes[1]}",
        label=RelationLabel.ATTACK,
        score=0.61,
    )
    PredictionStore(qt30.driver).write(run, [predicted])
    aif = export_discourse(qt30, path.stem, include_predicted=True)
    validate_aif(aif)
    # Every node and edge of the map keeps its AIFdb id; the predicted S-node and its two edges
    # get fresh ids beside them.
    by_id = _by_id(aif)
    for node in original["nodes"]:
        assert by_id[node["nodeID"]]["text"] == node["text"]
    assert {e["edgeID"] for e in original["edges"]} <= {e["edgeID"] for e in aif["edges"]}
    (new,) = [n for n in aif["nodes"] if n["nodeID"] not in {m["nodeID"] for m in original["nodes"]}]
    assert new["type"] == "CA" and new["nodeID"].startswith("pred_s")
    assert (new["origin"], new["score"], new["model"], new["modelVersion"], new["runID"]) == (
        "predicted",
        0.61,
        "m",
        "1",
        "aif-ids",
    )
    ends = {(e["fromID"], e["toID"]) for e in aif["edges"] if new["nodeID"] in (e["fromID"], e["toID"])}
    assert ends == {(inodes[0], new["nodeID"]), (new["nodeID"], inodes[1])}
    assert len(aif["edges"]) == len(original["edges"]) + 2
    # Gold only: the map as it was, nothing predicted in it.
    gold = export_discourse(qt30, path.stem)
    assert {n["nodeID"] for n in gold["nodes"]} == {n["nodeID"] for n in original["nodes"]}
    assert not any("origin" in n for n in gold["nodes"])


def test_qt30_export_reads_the_same_in_xaif(qt30: GraphStore) -> None:
    for path in QT30_MAPS:
        original = json.loads(path.read_text(encoding="utf-8"))
        exported = export_discourse(qt30, f"qt30:{path.stem}")
        relations = xaif_relations(exported)
        assert relations == xaif_relations(original)
        assert sum(relations.values()) > 0


def test_export_corpus_writes_one_map_per_dialogue(qt30: GraphStore, tmp_path: Path) -> None:
    done: list[int] = []
    files = export_corpus(qt30, "qt30", tmp_path / "out", batch_size=2, progress=done.append)
    assert sorted(p.name for p in files) == sorted(p.name for p in QT30_MAPS)
    assert sum(done) == len(QT30_MAPS)
    for path in files:
        exported = json.loads(path.read_text(encoding="utf-8"))
        validate_aif(exported, str(path))
        original = json.loads((QT30_MAPS[0].parent / path.name).read_text(encoding="utf-8"))
        assert node_multiset(exported) == node_multiset(original)


def test_molweni_dialogue_as_locutions_and_transitions(store: GraphStore) -> None:
    store.ingest(load_dialogue_json([MOLWENI], "molweni"))
    dialogue = json.loads(MOLWENI.read_text(encoding="utf-8"))[0]
    aif = export_discourse(store, dialogue["id"], corpus="molweni")
    validate_aif(aif)
    nodes = _by_id(aif)
    l_nodes = [n for n in aif["nodes"] if n["type"] == "L"]
    ta_nodes = [n for n in aif["nodes"] if n["type"] == "TA"]
    assert [n["text"] for n in l_nodes] == [edu["text"] for edu in dialogue["edus"]]
    assert len(ta_nodes) == len(dialogue["relations"]) and len(aif["nodes"]) == len(l_nodes) + len(ta_nodes)
    # Each relation x -> y is L(x) -> TA -> L(y) with the unified SDRT sense as scheme.
    expected = Counter(
        (dialogue["edus"][r["x"]]["text"], scheme_term("molweni", r["type"]).sense, dialogue["edus"][r["y"]]["text"])
        for r in dialogue["relations"]
    )
    into = {e["toID"]: nodes[e["fromID"]] for e in aif["edges"] if nodes[e["toID"]]["type"] == "TA"}
    out_of = {e["fromID"]: nodes[e["toID"]] for e in aif["edges"] if nodes[e["fromID"]]["type"] == "TA"}
    got = Counter((into[t["nodeID"]]["text"], t["scheme"], out_of[t["nodeID"]]["text"]) for t in ta_nodes)
    assert got == expected
    assert all(t["text"] == t["scheme"] for t in ta_nodes)
    # One locution per EDU, spoken by a participant named after the EDU's speaker.
    people = {p["participantID"]: p["firstname"] for p in aif["participants"]}
    assert Counter(people[loc["personID"]] for loc in aif["locutions"]) == Counter(
        edu["speaker"] for edu in dialogue["edus"]
    )


def _argument_bundle() -> CorpusBundle:
    """M-Arg/Sci-Arg/ContextDeP-shaped records: propositions with Support/Attack/Rephrase, a
    non-relation, a same-unit link and a Rephrase between two utterances."""
    c = "m-arg"
    d = "m-arg:debate00"
    nodes: list[NodeRecord] = [
        DiscourseRecord(id=d, corpus=c, kind="Dialogue", local_id="00"),
        SpeakerRecord(id="m-arg:s:biden", corpus=c, name="Joe Biden"),
        SpeakerRecord(id="m-arg:s:trump", corpus=c, name="Donald Trump"),
    ]
    texts = ["Taxes must rise.", "Schools need money.", "Taxes hurt jobs.", "We need more for schools."]
    speakers = ["m-arg:s:biden", "m-arg:s:biden", "m-arg:s:trump", "m-arg:s:trump"]
    for i, (text, sid) in enumerate(zip(texts, speakers, strict=True)):
        nodes.append(
            LocutionRecord(
                id=f"{c}:L{i}", corpus=c, discourse=d, local_id=f"n{i}", position=i, text=text, speaker_id=sid
            )
        )
        nodes.append(PropositionRecord(id=f"{c}:I{i}", corpus=c, discourse=d, local_id=f"n{i}", position=i, text=text))
    edges: list[EdgeRecord] = []

    def rel(key: str, kind: Label, raw: str, src: str, dst: str) -> None:
        record = RelationRecord(id=f"{c}:{key}", corpus=c, discourse=d, local_id=key, kind=kind, scheme_label=raw)
        nodes.append(record)
        edges.extend(link(record, [src], [dst]))

    rel("support", Label.Support, "Support", f"{c}:I1", f"{c}:I0")
    rel("attack", Label.Attack, "Attack", f"{c}:I2", f"{c}:I0")
    rel("neither", Label.NonRelation, "Neither", f"{c}:I3", f"{c}:I2")
    rel("same", Label.SameUnit, "parts_of_same", f"{c}:I0", f"{c}:I3")
    rel("rephrase", Label.Rephrase, "Paraphrase", f"{c}:L1", f"{c}:L3")
    return CorpusBundle(CorpusRecord(id=c, corpus=c, name="test"), nodes, edges, origin="test")


def test_argument_relations_as_ra_ca_ma(store: GraphStore) -> None:
    store.ingest(_argument_bundle())
    run = PredictionRun(run_id="aif-test", model="m", model_version="1", task="relations")
    predicted = PredictedRelation(source="m-arg:I3", target="m-arg:I1", label=RelationLabel.SUPPORT, score=0.7)
    PredictionStore(store.driver).write(run, [predicted])
    aif = export_discourse(store, "m-arg:debate00")
    validate_aif(aif)
    nodes = _by_id(aif)
    types = Counter(n["type"] for n in aif["nodes"])
    # 4 L + 4 I + the I generated for each rephrased utterance; Neither, parts_of_same and the
    # predicted relation are not exported.
    assert types == Counter({"L": 4, "I": 6, "RA": 1, "CA": 1, "MA": 1, "YA": 2})
    assert {n["scheme"] for n in aif["nodes"] if n["type"] == "RA"} == {"Default Inference"}

    def path(kind: str) -> tuple[tuple[str, str], tuple[str, str]]:
        (s_node,) = [n for n in aif["nodes"] if n["type"] == kind]
        (src,) = [nodes[e["fromID"]] for e in aif["edges"] if e["toID"] == s_node["nodeID"]]
        (dst,) = [nodes[e["toID"]] for e in aif["edges"] if e["fromID"] == s_node["nodeID"]]
        return (src["type"], src["text"]), (dst["type"], dst["text"])

    assert path("RA") == (("I", "Schools need money."), ("I", "Taxes must rise."))
    assert path("CA") == (("I", "Taxes hurt jobs."), ("I", "Taxes must rise."))
    # The Rephrase between two utterances relates I-nodes anchored in them by YA nodes.
    assert path("MA") == (("I", "Schools need money."), ("I", "We need more for schools."))
    anchors = Counter(path_ya for path_ya in (_ya_anchor(aif, n) for n in aif["nodes"] if n["type"] == "YA"))
    assert anchors == Counter(
        {
            (("L", "Schools need money."), ("I", "Schools need money.")): 1,
            (("L", "We need more for schools."), ("I", "We need more for schools.")): 1,
        }
    )
    assert xaif_relations(aif) == Counter(
        {
            ("Schools need money.", "Taxes must rise.", "Default Inference"): 1,
            ("Taxes hurt jobs.", "Taxes must rise.", "Default Conflict"): 1,
            ("Schools need money.", "We need more for schools.", "Default Rephrase"): 1,
        }
    )
    people = {p["participantID"]: f"{p['firstname']} {p['surname']}" for p in aif["participants"]}
    assert sorted(people.values()) == ["Donald Trump", "Joe Biden"]
    assert Counter(people[loc["personID"]] for loc in aif["locutions"]) == Counter({"Joe Biden": 2, "Donald Trump": 2})
    with_predicted = export_discourse(store, "m-arg:debate00", include_predicted=True)
    assert Counter(n["type"] for n in with_predicted["nodes"])["RA"] == 2


def _ya_anchor(aif: dict[str, Any], ya: dict[str, Any]) -> tuple[tuple[str, str], tuple[str, str]]:
    nodes = _by_id(aif)
    (src,) = [nodes[e["fromID"]] for e in aif["edges"] if e["toID"] == ya["nodeID"]]
    (dst,) = [nodes[e["toID"]] for e in aif["edges"] if e["fromID"] == ya["nodeID"]]
    return (src["type"], src["text"]), (dst["type"], dst["text"])


def test_unknown_and_ambiguous_discourse(store: GraphStore) -> None:
    with pytest.raises(NotFoundError, match="no dialogue or document 'nope'"):
        export_discourse(store, "nope")
    store.ingest(load_dialogue_json([MOLWENI], "molweni"))
    store.ingest(load_dialogue_json([MOLWENI], "stac", scheme="molweni"))
    with pytest.raises(ClientError, match="names 2 discourses"):
        export_discourse(store, "1056")
    assert export_discourse(store, "1056", corpus="stac")["nodes"]


def test_validate_aif_reports_broken_maps() -> None:
    aif = build_aif([], [])
    validate_aif(aif)
    aif["nodes"] = [{"nodeID": "1", "text": "a", "type": "L"}, {"nodeID": "1", "text": "b", "type": "X"}]
    aif["edges"] = [{"edgeID": "1", "fromID": "1", "toID": "9"}]
    aif["locutions"] = [{"nodeID": "2", "personID": "1"}]
    with pytest.raises(GraphStoreError) as err:
        validate_aif(aif, "m.json")
    message = str(err.value)
    for part in ("duplicate nodeID '1'", "unknown type 'X'", "toID '9' is not a node", "locution of '2'"):
        assert part in message


def test_cli_export(neo4j_server: EmbeddedNeo4j, qt30: GraphStore, tmp_path: Path) -> None:
    from api.cli.main import app

    info = neo4j_server.info()
    assert info is not None
    env = {"ARGWEB_NEO4J_URI": info.uri, "ARGWEB_NEO4J_PASSWORD": PASSWORD}
    runner = CliRunner()
    out = tmp_path / "one.json"
    result = runner.invoke(app, ["export", "aif", "--dialogue", QT30_MAPS[0].stem, str(out)], env=env)
    assert result.exit_code == 0, result.output
    assert node_multiset(json.loads(out.read_text())) == node_multiset(json.loads(QT30_MAPS[0].read_text()))
    result = runner.invoke(app, ["export", "aif", "--corpus", "qt30", str(tmp_path / "all")], env=env)
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "all").glob("*.json"))) == len(QT30_MAPS)
    result = runner.invoke(app, ["export", "aif", "--dialogue", "missing", str(out)], env=env)
    assert result.exit_code == 2 and "no dialogue or document 'missing'" in " ".join(result.output.split())
    result = runner.invoke(app, ["export", "aif", str(out)], env=env)
    assert result.exit_code != 0
