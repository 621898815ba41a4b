"""Every broken input of ``tests/data/bad/`` is refused by the real command line, and changes nothing.

``tests/data/bad/manifest.json`` maps each file to the command that reads it and to the fragments
the error must hold (the file and the record). A file added to the directory without an entry fails
:func:`test_every_bad_file_has_a_manifest_entry`, so nothing in there goes unchecked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver
from typer.testing import CliRunner

from api.cli.main import app
from graphstore.store import GraphStore
from ontology.formats.registry import SAMPLES

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
MANIFEST = json.loads((BAD / "manifest.json").read_text(encoding="utf-8"))
ENTRIES: list[dict[str, Any]] = MANIFEST["entries"]
GOOD_NT = (
    '<https://w3id.org/argweb/data/x> <https://w3id.org/argweb/ontology#text> "kept" .\n'
    '<https://w3id.org/argweb/data/y> <https://w3id.org/argweb/ontology#text> "kept too" .\n'
)


def entry_id(entry: dict[str, Any]) -> str:
    return f"{entry['command']}:{(entry['files'] or [entry.get('generate')])[0]}"


def generate(kind: str, folder: Path) -> Path:
    """Inputs too large to commit."""
    if kind == "huge_text_dialogue":
        path = folder / "huge_text_dialogue.json"
        huge = "x" * (50 * 1024 * 1024)
        dialogue = {"id": "huge", "edus": [{"text": huge, "speaker": "a"}, {"text": "ok", "speaker": "b"}]}
        dialogue["relations"] = [{"x": 0, "y": 1, "type": "Comment"}]
        path.write_text(json.dumps([dialogue]), encoding="utf-8")
        return path
    if kind == "huge_literal_nt":
        path = folder / "huge_literal.nt"
        with open(path, "w", encoding="utf-8") as fh:
            fh.write('<https://w3id.org/argweb/data/h> <https://w3id.org/argweb/ontology#text> "')
            fh.write("y" * (20 * 1024 * 1024))
            fh.write('" .\n')
        return path
    if kind == "huge_transcript":
        path = folder / "huge_transcript.txt"
        line = b"Anna: We should act now, before the costs rise any further for everyone.\n"
        with open(path, "wb") as fh:
            fh.write(line * (50 * 1024 * 1024 // len(line)))
            fh.write(b"x" * (50 * 1024 * 1024 % len(line)))
        return path
    if kind == "single_turn_transcript":
        path = folder / "single_turn_transcript.txt"
        path.write_text("Anna: " + "We act now. " * ((5_000_000 - 6) // 12) + "x" * ((5_000_000 - 6) % 12), "utf-8")
        return path
    if kind == "long_turn_transcript":
        path = folder / "long_turn_transcript.txt"
        path.write_text("Anna: Fine.\nBen: " + "We act now. " * 8333 + "xxxxxx\nAnna: No.\n", encoding="utf-8")
        return path
    if kind == "many_turns_transcript":
        path = folder / "many_turns_transcript.txt"
        path.write_text("".join(f"S{i % 7}: Point number {i}.\n" for i in range(20_000)), encoding="utf-8")
        return path
    raise AssertionError(f"unknown generator {kind!r}")


def graph_state(store: GraphStore) -> tuple[int, int, list[tuple[str, str]]]:
    nodes = store.read("MATCH (n) RETURN count(n) AS n")[0]["n"]
    rels = store.read("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
    markers = [(r["id"], r["status"]) for r in store.read("MATCH (c:Corpus) RETURN c.id AS id, c.status AS status")]
    return nodes, rels, sorted(markers)


def cli(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
    # Rich may still wrap a long line: compare without line breaks.
    return result.exit_code, " ".join(result.output.split())


def test_every_bad_file_has_a_manifest_entry() -> None:
    named: set[str] = set()
    for entry in ENTRIES:
        named.update(entry["files"])
        named.update(entry.get("companions", []))
        assert entry.get("expect") or entry.get("outcome") == "loads", entry
    present = {p.name for p in BAD.iterdir()} - {"manifest.json"}
    assert present - named == set(), "files in tests/data/bad/ without a manifest entry"
    assert named - present == set(), "manifest entries naming missing files"


@pytest.mark.parametrize("entry", ENTRIES, ids=entry_id)
def test_bad_input_is_refused_naming_file_and_record(
    entry: dict[str, Any], cli_env: dict[str, str], store: GraphStore, driver: Driver, tmp_path: Path
) -> None:
    # A corpus already in the graph must come through every refusal untouched.
    assert cli(["ingest", "stac", str(SAMPLES / "stac")], cli_env)[0] == 0
    paths = [BAD / name for name in entry["files"]]
    if "generate" in entry:
        paths.append(generate(entry["generate"], tmp_path))
    paths += [SAMPLES / name for name in entry.get("with_samples", [])]
    command = entry["command"].split()

    if command[0] == "sparql" or command[:2] == ["rdf", "load"]:
        rdf_env = {**cli_env, "ARGWEB_DATA_DIR": str(tmp_path / "rdf-data")}
        good = tmp_path / "good.nt"
        good.write_text(GOOD_NT, encoding="utf-8")
        assert cli(["rdf", "load", str(good)], rdf_env)[0] == 0
        code, out = cli([*command, *map(str, paths)], rdf_env)
        store_dir = tmp_path / "rdf-data" / "oxigraph"
        leftovers = sorted(p.name for p in store_dir.parent.iterdir() if p != store_dir)
        assert leftovers == [], "a failed load left a directory behind"
        answer = cli(["sparql", "--format", "csv", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"], rdf_env)
        assert answer[0] == 0 and answer[1].split()[-1] == "2", answer  # the previous store, unchanged
    else:
        before = graph_state(store)
        code, out = cli([*command, *map(str, paths)], cli_env)
        if entry.get("outcome") == "loads":
            assert code == 0, out
            for fragment in entry["expect"]:  # what a partial map leaves out is reported
                assert fragment in out, f"{fragment!r} not in {out!r}"
            corpus = entry.get("corpus", "qt30")
            counts = store.graph_counts(corpus)
            assert {k: counts.get(k) for k in entry["counts"]} == entry["counts"]
            export = tmp_path / "aif"
            assert cli(["export", "aif", "--corpus", corpus, str(export)], cli_env)[0] == 0
            assert len(list(export.glob("*.json"))) == 1
            return
        assert graph_state(store) == before, "a refused input changed the graph"
    assert code != 0, out
    assert "Traceback" not in out
    for fragment in entry["expect"]:
        assert fragment in out, f"{fragment!r} not in {out!r}"
