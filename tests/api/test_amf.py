"""The oAMF modules' rule-based tasks and routes (no model, no database): inputs kept, additions listed."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from xaif import AIF

from api.app import create_app
from api.services import amf
from api.settings import Settings
from ontology.errors import ApiError
from ontology.formats import amf as xaif

XAIF = Path(__file__).resolve().parents[1] / "data" / "formats" / "xaif_integer_ids.json"
# The keys of an oAMF module's config/metadata.yaml (oAMF's module template).
OAMF_KEYS = ("Name", "Date", "Originator", "License", "AMF_Tag", "Domain", "Training Data", "Requires", "Outputs")
DIALOG = {
    "AIF": {"nodes": [], "edges": [], "locutions": [], "participants": [], "schemefulfillments": []},
    "text": {"txt": "Alice Smith: We should tax sugar. It cuts harm.\nBob: Taxes hurt the poor most."},
    "dialog": True,
    "ova": [],
}


def kept(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Every input node, edge, locution, participant and key comes back as it was sent, in order, first;
    so do the ``argweb`` entries of earlier modules."""
    for key in ("nodes", "edges", "locutions", "participants"):
        old = (before.get("AIF") or {}).get(key) or []
        assert (after["AIF"].get(key) or [])[: len(old)] == old, key
    for key, value in before.items():
        if key not in ("AIF", amf.SECTION):
            assert after[key] == value, key
    old = (before.get(amf.SECTION) or {}).get("predictions", [])
    assert after[amf.SECTION]["predictions"][: len(old)] == old


def test_turns_from_a_dialogue_text() -> None:
    out = amf.run_task("turns", copy.deepcopy(DIALOG), Settings())
    kept(DIALOG, out)
    nodes = out["AIF"]["nodes"]
    assert [(n["type"], n["text"]) for n in nodes if n["type"] == "L"] == [
        ("L", "We should tax sugar. It cuts harm."),
        ("L", "Taxes hurt the poor most."),
    ]
    assert [n["text"] for n in nodes if n["type"] == "I"] == [
        "We should tax sugar. It cuts harm.",
        "Taxes hurt the poor most.",
    ]
    assert all(isinstance(n["nodeID"], int) and n["nodeID"] >= 1 for n in nodes)
    assert {(p["firstname"], p["surname"]) for p in out["AIF"]["participants"]} == {("Alice", "Smith"), ("Bob", "")}
    reader = AIF(out)
    assert reader.get_speaker(nodes[0]["nodeID"])[0] == "Alice Smith"
    # Each L-node anchors its proposition through a YA node, as xaif's locution table reads it.
    table = reader.get_csv("locution")
    rows = zip(table["proposition1_text"], table["proposition2_text"], table["relation"], strict=True)
    assert sorted((a, b) for a, b, rel in rows if rel != "None") == sorted(
        (n["text"], n["text"]) for n in nodes if n["type"] == "L"
    )
    entries = list(xaif.predicted(out))
    assert {e["nodeID"] for e in entries} == {n["nodeID"] for n in nodes}
    assert all(e["task"] == "turns" and e["model"] == "speaker-turns" and "score" not in e for e in entries)
    assert out[amf.SECTION]["runs"][0]["added"] == len(nodes)


def test_segments_split_turns_into_sentences_and_a_second_module_appends() -> None:
    out = amf.run_task("segments", copy.deepcopy(DIALOG), Settings())
    assert [n["text"] for n in out["AIF"]["nodes"] if n["type"] == "L"] == [
        "We should tax sugar.",
        "It cuts harm.",
        "Taxes hurt the poor most.",
    ]
    again = amf.run_task("turns", copy.deepcopy(out), Settings())
    assert again["AIF"] == out["AIF"], "L-nodes with propositions: nothing to add"
    assert len(again[amf.SECTION]["runs"]) == 2 and again[amf.SECTION]["predictions"] == out[amf.SECTION]["predictions"]


def test_existing_locutions_are_kept_and_gain_the_missing_propositions() -> None:
    doc = json.loads(XAIF.read_text(encoding="utf-8"))
    # Drop the proposition of locution 3 (its YA and I node and their edges): only it is missing.
    doc["AIF"]["nodes"] = [n for n in doc["AIF"]["nodes"] if n["nodeID"] not in (8, 9, 10, 11)]
    doc["AIF"]["edges"] = [e for e in doc["AIF"]["edges"] if not {e["fromID"], e["toID"]} & {8, 9, 10, 11}]
    out = amf.run_task("segments", copy.deepcopy(doc), Settings())
    kept(doc, out)
    added = out["AIF"]["nodes"][len(doc["AIF"]["nodes"]) :]
    assert [(n["type"], n["text"]) for n in added] == [
        ("I", "it's not uncommon for there to be disagreements between party members."),
        ("YA", "Default Illocuting"),
    ]
    assert [n["nodeID"] for n in added] == [8, 9], "integer ids above the largest"
    new_edges = out["AIF"]["edges"][len(doc["AIF"]["edges"]) :]
    assert [(e["fromID"], e["toID"]) for e in new_edges] == [(3, 9), (9, 8)]


def test_string_ids_get_fresh_string_ids() -> None:
    doc = {"AIF": {"nodes": [{"nodeID": "a_1", "text": "Ann : Tax sugar", "type": "L"}], "edges": []}, "text": ""}
    out = amf.run_task("turns", doc, Settings())
    assert [n["nodeID"] for n in out["AIF"]["nodes"]] == ["a_1", "argweb_n0", "argweb_n1"]
    assert out["AIF"]["nodes"][1]["text"] == "Tax sugar"
    assert "locutions" not in out["AIF"], "keys the input left out stay left out"


@pytest.mark.parametrize(
    ("doc", "expect"),
    [
        ({"AIF": [1]}, "field 'AIF' must be an object"),
        (
            {
                "AIF": {
                    "nodes": [{"nodeID": 1, "type": "L", "text": "x"}],
                    "edges": [{"edgeID": 4, "fromID": 1, "toID": 7}],
                }
            },
            "edge 4: refers to missing node '7'",
        ),
        ({"AIF": {"nodes": [{"nodeID": 1}], "edges": []}}, "node 1: missing field 'type'"),
        # The AIF reader's checks, the same as `argweb corpus ingest xaif` and POST /aif (issue 47, item 11).
        ({"AIF": {"nodes": [{"nodeID": 1, "type": "I", "text": ["a", "b"]}]}}, "node 1: field 'text' has type list"),
        ({"AIF": {"nodes": [{"nodeID": 1, "type": "I"}]}}, "node 1: missing field 'text'"),
        ({"AIF": {"nodes": [{"nodeID": 1, "type": "I", "text": 7}]}}, "node 1: field 'text' has type int"),
        (
            {"AIF": {"nodes": [{"nodeID": 1, "type": "I", "text": "x", "timestamp": float("inf")}]}},
            "node 1: field 'timestamp' is inf",
        ),
        ({"text": {"txt": "no speaker here"}, "dialog": True}, "line 1: text before the first speaker"),
        ({"text": ""}, "no L-nodes and no text"),
        ({"text": 5}, "field 'text' must be a string"),
        ({"AIF": {"nodes": [], "edges": [], "locutions": "x"}}, "field 'locutions' has type str"),
    ],
)
def test_bad_documents_are_refused_naming_the_record(doc: dict[str, Any], expect: str) -> None:
    with pytest.raises(ApiError, match=expect.replace("(", r"\(")):
        amf.run_task("turns", doc, Settings())


def test_documents_beyond_the_limits_are_refused_before_any_model() -> None:
    doc = {"text": "Ann: " + "word " * 300, "dialog": True}
    with pytest.raises(ApiError, match="at most 200 characters"):
        amf.run_task("ari", doc, Settings(predict_max_chars=100))
    with pytest.raises(ApiError, match="unknown oAMF task 'nlp'"):
        amf.run_task("nlp", doc, Settings())


def test_every_task_has_oamf_metadata_and_a_readme() -> None:
    for task in amf.TASKS:
        meta = yaml.safe_load(amf.metadata(task))
        for key in OAMF_KEYS:
            assert meta.get(key), (task, key)
        assert meta["License"] == "Apache-2.0" and isinstance(meta["Variants"], list)
        text = amf.readme(task)
        assert text.startswith("# argweb") and f"POST /amf/{task}" in text


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with TestClient(create_app(Settings(data_dir=tmp_path_factory.mktemp("amf")))) as c:
        yield c


def test_routes_take_json_or_an_oamf_file_upload(client: TestClient) -> None:
    by_json = client.post("/amf/segments", json=DIALOG)
    assert by_json.status_code == 200, by_json.text
    upload = client.post("/amf/segments", files={"file": ("input.json", json.dumps(DIALOG), "application/json")})
    assert upload.status_code == 200, upload.text
    assert upload.json()["AIF"] == by_json.json()["AIF"]
    readme = client.get("/amf/ari")
    assert readme.status_code == 200 and readme.headers["content-type"].startswith("text/markdown")
    assert "# argweb ARI" in readme.text
    meta = client.get("/amf/discourse/metadata.yaml")
    assert meta.status_code == 200 and yaml.safe_load(meta.text)["AMF_Tag"] == "discourse-relation"


def test_routes_refuse_what_is_not_xaif(client: TestClient) -> None:
    assert client.post("/amf/turns", content=b"{", headers={"content-type": "application/json"}).status_code == 400
    assert client.post("/amf/turns", json=[1, 2]).status_code == 400
    assert client.post("/amf/turns", content=b"x", headers={"content-type": "text/plain"}).status_code == 415
    wrong = client.post("/amf/turns", files={"other": ("a.json", "{}", "application/json")})
    assert wrong.status_code == 400 and "field 'file'" in wrong.json()["detail"]
    assert client.post("/amf/parse", json=DIALOG).status_code == 422
    assert client.get("/amf/parse").status_code == 422
