"""An oAMF-style pipeline over HTTP through argweb's own modules, read back with ARG-tech's ``xaif``;
and ``/amf/ari`` against ``argweb predict aif`` on maps in the official test-input form.

The API runs in uvicorn on a loopback port (no database: the modules store nothing); every hop is
a real HTTP request, one of them a form upload as oAMF posts to its modules.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner
from xaif import AIF

from api.app import create_app
from api.cli.main import app as cli_app
from api.services import amf
from api.settings import Settings
from ontology.formats import amf as xaif
from ontology.formats.aif_write import read_map, strip_relations
from ontology.formats.registry import SAMPLES
from tests.api.test_amf import kept
from tests.conftest import serve_app

TRANSCRIPT = Path(__file__).resolve().parents[1] / "data" / "mine" / "debate.txt"
MAPS = sorted((SAMPLES / "dialam-2024" / "my_train").glob("*.json"))


@pytest.fixture(scope="module")
def api_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("amf-api"), request_size_limit=4 * 1024 * 1024)
    with serve_app(create_app(settings), start_timeout=60) as url:
        yield url


def hop(url: str, task: str, doc: dict[str, Any], upload: bool = False) -> dict[str, Any]:
    if upload:
        files = {"file": ("input.json", json.dumps(doc).encode(), "application/json")}
        response = httpx.post(f"{url}/amf/{task}", files=files, timeout=600)
    else:
        response = httpx.post(f"{url}/amf/{task}", json=doc, timeout=600)
    assert response.status_code == 200, response.text
    out: dict[str, Any] = response.json()
    kept(doc, out)
    return out


def relation_rows(doc: dict[str, Any]) -> Counter[tuple[str, str, str]]:
    table = AIF(doc).get_csv("argument-relation")
    rows = zip(table["proposition1_text"], table["proposition2_text"], table["relation"], strict=True)
    return Counter((a, b, rel) for a, b, rel in rows if rel != "None")


def test_a_transcript_through_argwebs_modules_end_to_end(api_url: str) -> None:
    text = TRANSCRIPT.read_text(encoding="utf-8")
    start = {"AIF": {"nodes": [], "edges": [], "locutions": [], "participants": []}, "text": text, "dialog": True}
    readme = httpx.get(f"{api_url}/amf/segments", timeout=30)
    assert readme.status_code == 200 and "oAMF" in readme.text

    segmented = hop(api_url, "segments", start)
    linked = hop(api_url, "discourse", segmented, upload=True)
    argued = hop(api_url, "ari", linked)

    reader = AIF(argued)
    assert reader.is_valid_json_aif() and reader.is_json_aif_dialog()
    nodes = {n["nodeID"]: n for n in argued["AIF"]["nodes"]}
    kinds = Counter(n["type"] for n in nodes.values())
    assert kinds["L"] == kinds["I"] == kinds["YA"] >= 10
    assert kinds["TA"] >= 3, "the parser links the turns"
    relations = relation_rows(argued)
    assert sum(relations.values()) == kinds["RA"] + kinds["CA"] + kinds["MA"] >= 1
    assert {"Fiona Bruce", "Anna Patel", "Tom Reilly"} <= {
        reader.get_speaker(n["nodeID"])[0] for n in nodes.values() if n["type"] == "L"
    }
    # Every node argweb added is listed once with its task, model and (for the models) a score.
    entries = {e["nodeID"]: e for e in xaif.predicted(argued)}
    assert set(entries) == set(nodes), "the pipeline started from text: every node is argweb's"
    for entry in entries.values():
        assert entry["type"] == nodes[entry["nodeID"]]["type"]
        if entry["task"] in ("ari", "discourse"):
            assert 0.0 <= entry["score"] <= 1.0 and entry["model"] and entry["model_version"]
        else:
            assert "score" not in entry and entry["model"] == "pysbd"
    assert [r["task"] for r in argued[amf.SECTION]["runs"]] == ["segments", "discourse", "ari"]
    assert all(e["sense"] == nodes[e["nodeID"]]["scheme"] for e in entries.values() if e["task"] == "discourse")


def test_ari_gives_the_relations_of_predict_aif_on_test_input_maps(api_url: str, tmp_path: Path) -> None:
    assert MAPS, "the DialAM sample maps"
    test_input = tmp_path / "in"
    test_input.mkdir()
    for path in MAPS:
        (test_input / path.name).write_text(json.dumps(strip_relations(read_map(path))), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli_app,
        ["predict", "aif", "--in", str(test_input), "--out", str(out)],
        env={"ARGWEB_DATA_DIR": str(tmp_path / "data")},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    found = 0
    for path in sorted(test_input.iterdir()):
        expected = json.loads((out / path.name).read_text(encoding="utf-8"))
        answer = hop(api_url, "ari", {"AIF": json.loads(path.read_text(encoding="utf-8"))})
        assert answer["AIF"] == expected, path.name  # the same S-nodes and edges, under the same ids
        assert relation_rows(answer) == relation_rows({"AIF": expected})
        found += sum(relation_rows(answer).values())
    assert found > 0
