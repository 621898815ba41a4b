"""xAIF and OVA3 in and out through the real command line, the graph and the API, read back with ARG-tech's ``xaif``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from neo4j import Driver
from typer.testing import CliRunner
from xaif import AIF

from api.app import create_app
from api.cli.main import app
from graphstore.runtime import EmbeddedNeo4j
from graphstore.store import GraphStore
from tests.conftest import served_settings

FORMATS = Path(__file__).resolve().parents[1] / "data" / "formats"
OVA3 = FORMATS / "ova3_analysis.json"
XAIF = FORMATS / "xaif_integer_ids.json"
PARTIAL = FORMATS / "xaif_partial.json"


def cli(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
    return result.exit_code, " ".join(result.output.split())


def aif_of(doc: dict[str, Any]) -> dict[str, Any]:
    aif: dict[str, Any] = doc.get("AIF", doc)
    return aif


def relations(doc: dict[str, Any]) -> Counter[tuple[str, str, str]]:
    """Argument relations between I-nodes (premise text, conclusion text, relation) as ``xaif`` reads them."""
    reader = AIF(doc if "AIF" in doc else {"AIF": doc})
    assert reader.is_valid_json_aif()
    table = reader.get_csv("argument-relation")
    rows = zip(table["proposition1_text"], table["proposition2_text"], table["relation"], strict=True)
    return Counter((a, b, rel) for a, b, rel in rows if rel != "None")


def structure(doc: dict[str, Any]) -> Counter[tuple[tuple[str, str], tuple[str, str]]]:
    """Every edge as (type, text) of its two ends: the map up to ids."""
    aif = aif_of(doc)
    nodes = {str(n["nodeID"]): (n["type"], n["text"]) for n in aif["nodes"]}
    return Counter((nodes[str(e["fromID"])], nodes[str(e["toID"])]) for e in aif["edges"])


def layout(doc: dict[str, Any]) -> dict[tuple[str, str], tuple[float, float]]:
    """(type, text) of each node -> where OVA draws it."""
    nodes = {str(n["nodeID"]): (n["type"], n["text"]) for n in aif_of(doc)["nodes"]}
    section = doc.get("OVA") or doc.get("ova") or {}
    return {nodes[str(p["nodeID"])]: (float(p["x"]), float(p["y"])) for p in section.get("nodes", [])}


def test_an_ova3_map_keeps_its_relations_and_layout_through_the_graph(
    cli_env: dict[str, str], store: GraphStore, tmp_path: Path
) -> None:
    original = json.loads(OVA3.read_text(encoding="utf-8"))
    assert cli(["ingest", "ova", str(OVA3), "--corpus", "ova-maps"], cli_env)[0] == 0
    counts = store.graph_counts("ova-maps")
    assert (counts["Locution"], counts["Proposition"], counts["Support"], counts["Attack"]) == (3, 3, 1, 1)

    written = {}
    for fmt in ("ova", "xaif", "aif"):
        out = tmp_path / f"map.{fmt}.json"
        code, text = cli(["export", "aif", "--dialogue", "ova-maps:ova3_analysis", "--format", fmt, str(out)], cli_env)
        assert code == 0, text
        written[fmt] = json.loads(out.read_text(encoding="utf-8"))
        assert relations(written[fmt]) == relations(original) != Counter()
        assert structure(written[fmt]) == structure(original)
    assert layout(written["ova"]) == layout(original), "OVA3 reopens the map where it was"
    assert layout(written["xaif"]) == layout(original)
    assert "OVA" not in written["aif"] and "layout" not in written["aif"]
    assert all(isinstance(n["nodeID"], int) for n in written["xaif"]["AIF"]["nodes"])
    assert written["ova"]["AIF"]["participants"] and written["ova"]["OVA"]["edges"]

    # Opened in argweb, saved, opened again: the same map at the same places.
    again = tmp_path / "again.json"
    again.write_text(json.dumps(written["ova"]), encoding="utf-8")
    assert cli(["ingest", "ova", str(again), "--corpus", "ova-again"], cli_env)[0] == 0
    out = tmp_path / "twice.json"
    assert cli(["export", "aif", "--dialogue", "ova-again:again", "--format", "ova", str(out)], cli_env)[0] == 0
    twice = json.loads(out.read_text(encoding="utf-8"))
    assert layout(twice) == layout(original) and structure(twice) == structure(original)


def test_xaif_with_integer_ids_and_a_partial_map_load_and_export(
    cli_env: dict[str, str], store: GraphStore, tmp_path: Path
) -> None:
    code, out = cli(["ingest", "xaif", str(XAIF), str(PARTIAL), "--corpus", "amf-maps"], cli_env)
    assert code == 0, out
    assert f"{PARTIAL}: RA node 8 has no conclusion (no edge out of it); stored as it is" in out
    counts = store.graph_counts("amf-maps")
    assert (counts["Dialogue"], counts["Locution"], counts["Support"], counts["Rephrase"], counts["Attack"]) == (
        2,
        5,
        2,
        1,
        1,
    )
    for source in (XAIF, PARTIAL):
        original = json.loads(source.read_text(encoding="utf-8"))
        target = tmp_path / f"{source.stem}.xaif.json"
        dialogue = f"amf-maps:{source.stem}"
        assert cli(["export", "aif", "--dialogue", dialogue, "--format", "xaif", str(target)], cli_env)[0] == 0
        exported = json.loads(target.read_text(encoding="utf-8"))
        assert relations(exported) == relations(original)
        assert structure(exported) == structure(original), "the partial relation is written back as it came"
    # A whole corpus, one file per map.
    folder = tmp_path / "corpus"
    assert cli(["export", "aif", "--corpus", "amf-maps", "--format", "xaif", str(folder)], cli_env)[0] == 0
    assert sorted(p.name for p in folder.iterdir()) == ["xaif_integer_ids.json", "xaif_partial.json"]
    assert all(AIF(json.loads(p.read_text())).is_valid_json_aif() for p in folder.iterdir())


def test_maps_are_not_written_into_a_gold_corpus(cli_env: dict[str, str], store: GraphStore) -> None:
    code, out = cli(["ingest", "xaif", str(XAIF), "--corpus", "qt30"], cli_env)
    assert code == 2 and "holds gold annotation" in out
    code, out = cli(["ingest", "ova", str(OVA3), "--corpus", "no spaces"], cli_env)
    assert code == 2 and "corpus must be" in out
    assert store.read("MATCH (n) RETURN count(n) AS n")[0]["n"] == 0


def test_the_api_serves_each_format(
    cli_env: dict[str, str], store: GraphStore, neo4j_server: EmbeddedNeo4j, driver: Driver, tmp_path: Path
) -> None:
    assert cli(["ingest", "ova", str(OVA3), "--corpus", "ova-maps"], cli_env)[0] == 0
    original = json.loads(OVA3.read_text(encoding="utf-8"))
    with TestClient(create_app(served_settings(neo4j_server, tmp_path, "key-0123456789abcdef"))) as client:
        plain = client.get("/aif/ova-maps:ova3_analysis")
        assert plain.status_code == 200 and "nodes" in plain.json()
        for fmt in ("xaif", "ova"):
            got = client.get("/aif/ova-maps:ova3_analysis", params={"format": fmt})
            assert got.status_code == 200, got.text
            assert relations(got.json()) == relations(original)
            assert layout(got.json()) == layout(original)
        bad = client.get("/aif/ova-maps:ova3_analysis", params={"format": "svg"})
        assert bad.status_code in (400, 422)


ARGUEBUF = FORMATS / "arguebuf"
UNIFORMS = (
    "Schools should require uniforms.",
    "Uniforms hide differences in family income.",
    "Uniforms restrict how pupils express themselves.",
)


def test_four_formats_load_through_arguebuf_with_their_relations(
    cli_env: dict[str, str], store: GraphStore, tmp_path: Path
) -> None:
    code, out = cli(["ingest", "arguebuf", str(ARGUEBUF), "--corpus", "debate-maps"], cli_env)
    assert code == 0, out
    counts = store.graph_counts("debate-maps")
    assert (counts["Document"], counts["Proposition"], counts["Support"], counts["Attack"]) == (4, 17, 7, 7)
    corpus = store.read("MATCH (c:Corpus {id: 'debate-maps'}) RETURN c.name AS name, c.source AS source")[0]
    assert "read with arguebuf" in corpus["name"] and str(ARGUEBUF) in corpus["source"]
    sources = {r["source"] for r in store.read("MATCH (d:Document {corpus: 'debate-maps'}) RETURN d.source AS source")}
    assert sources == {p.name for p in ARGUEBUF.iterdir()}
    # Written back as AIF, each map reads in xaif with the relations the file holds.
    target = tmp_path / "sadface.json"
    assert cli(["export", "aif", "--dialogue", "debate-maps:uniforms_sadface", str(target)], cli_env)[0] == 0
    got = relations(json.loads(target.read_text(encoding="utf-8")))
    assert got == Counter(
        {
            (UNIFORMS[1], UNIFORMS[0], "Default Inference"): 1,
            (UNIFORMS[2], UNIFORMS[0], "Default Conflict"): 1,
            ("Pupils can express themselves in what they say and do.", UNIFORMS[2], "Default Conflict"): 1,
        }
    )
    # Loading again writes nothing new; --format reads a file its extension does not tell.
    assert cli(["ingest", "arguebuf", str(ARGUEBUF), "--corpus", "debate-maps"], cli_env)[0] == 0
    assert store.graph_counts("debate-maps") == counts
    renamed = tmp_path / "discussion.md"
    renamed.write_text((ARGUEBUF / "car_free_centres_kialo.txt").read_text(encoding="utf-8"), encoding="utf-8")
    code, out = cli(["ingest", "arguebuf", str(renamed), "--format", "kialo", "--corpus", "kialo-maps"], cli_env)
    assert code == 0, out
    assert store.graph_counts("kialo-maps")["Proposition"] == 5
    code, out = cli(["ingest", "arguebuf", str(renamed), "--format", "aml"], cli_env)
    assert code == 2 and "--format must be one of sadface, argdown, kialo, brat" in out
