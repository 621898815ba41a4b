"""Drill findings (issue 11) checked against the real Neo4j through the command line."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from api.cli.main import app
from graphstore import cypher
from graphstore.store import GraphStore
from ontology.formats.registry import CORPORA, SAMPLES


def cli(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
    return result.exit_code, " ".join(result.output.split())


def test_deleting_an_unknown_corpus_is_a_client_error(store: GraphStore, cli_env: dict[str, str]) -> None:
    code, out = cli(["delete", "no-such-corpus"], cli_env)
    assert code == 2
    assert "no corpus 'no-such-corpus' in the graph" in out


def test_exports_refuse_a_half_loaded_corpus(store: GraphStore, cli_env: dict[str, str], tmp_path: Path) -> None:
    spec = CORPORA["molweni"]
    store.ingest(spec.load(spec.find(SAMPLES)))
    # What an ingest killed mid-way leaves: the marker says loading.
    store.run(cypher.mark_corpus("loading"), corpus="molweni", batch="killed-run", counts=None)
    for args in (
        ["export", "rdf", str(tmp_path / "m.nt"), "--corpus", "molweni", "--no-load"],
        ["export", "rdf", str(tmp_path / "all.nt"), "--no-load"],
        ["export", "aif", "--corpus", "molweni", str(tmp_path / "aif")],
        [
            "export",
            "aif",
            "--dialogue",
            store.read("MATCH (d:Dialogue) RETURN d.id AS id LIMIT 1")[0]["id"],
            str(tmp_path / "d.json"),
        ],
    ):
        code, out = cli(args, cli_env)
        assert code == 1, (args, out)
        assert "molweni is half-loaded" in out and "refusing to export" in out, out
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_marker_counts_equal_the_graph_and_source_names_the_whole_load(store: GraphStore) -> None:
    for name in ("molweni", "qt30", "sciarg"):
        spec = CORPORA[name]
        files = spec.find(SAMPLES)
        bundle = spec.load(files)
        store.ingest(bundle)
        marker = next(r for r in store.read(cypher.corpora()) if r["id"] == name)
        assert json.loads(marker["counts"]) == store.graph_counts(name) == bundle.counts()
        if len(files) > 1:
            # Every file of the load counts (Sci-Arg: each .ann with its .txt).
            described = re.search(r"\((\d+) files\)$", marker["source"])
            assert described is not None and int(described.group(1)) >= len(files), marker["source"]
