"""Fixes found by the failure drills (issue 11) that need no database: RDF files and the SPARQL store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ontology.errors import ClientError, LoaderError, OntologyError
from ontology.rdf import RdfMapper, remove_stale_parts, write_export
from ontology.records import MAX_FIELD_BYTES, DiscourseRecord, build
from ontology.sparql import SparqlStore, load_store
from ontology.views import EdgeView, NodeView

NODES = [
    NodeView(id="t:c", labels=("Node", "Corpus"), props={"id": "t:c", "corpus": "t:c", "name": "t"}),
    NodeView(id="t:1", labels=("Node", "Proposition"), props={"id": "t:1", "corpus": "t:c", "text": "taxes rise"}),
]
EDGES = [EdgeView(source="t:1", type="PART_OF", target="t:c", corpus="t:c")]
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # exports and loads in child processes: seconds each
def test_rdf_export_is_byte_reproducible(tmp_path: Path) -> None:
    # Two processes: blank-node labels from the parser differ between runs unless they are renamed.
    outs = []
    for k in range(2):
        out = tmp_path / f"export{k}.nt"
        code = (
            "import sys; from pathlib import Path; from ontology.rdf import write_export; "
            "from tests.ontology.test_drill_fixes import NODES, EDGES; "
            "write_export(Path(sys.argv[1]), NODES, EDGES)"
        )
        subprocess.run([sys.executable, "-c", code, str(out)], check=True, cwd=ROOT)
        outs.append(out.read_bytes())
    assert b"_:" in outs[0]  # the ontology has blank nodes (restrictions, lists)
    assert outs[0] == outs[1]


def test_killed_exports_partial_files_are_removed_by_the_next_export(tmp_path: Path) -> None:
    out = tmp_path / "graph.nt"
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f".graph.nt.{dead.pid}.part"
    stale.write_bytes(b"half a file")
    alive = tmp_path / f".graph.nt.{os.getppid()}.part"  # a running export (its process exists)
    alive.write_bytes(b"in progress")
    write_export(out, NODES, EDGES)
    assert not stale.exists()
    assert alive.exists()
    assert remove_stale_parts(out) == []
    assert out.read_bytes().count(b"\n") > 10


def test_oversized_text_is_refused_by_loaders_and_by_the_export() -> None:
    huge = "x" * (MAX_FIELD_BYTES + 1)
    with pytest.raises(LoaderError, match=r"dialogues\.json: dialogue #3: field 'local_id' holds 1,048,577 bytes"):
        build(DiscourseRecord, "dialogues.json: dialogue #3", id="t:d", corpus="t", kind="Dialogue", local_id=huge)
    with pytest.raises(LoaderError, match="NUL character at offset 2"):
        build(DiscourseRecord, "f.json: dialogue #0", id="t:d", corpus="t", kind="Dialogue", local_id="ab\0c")
    mapper = RdfMapper()
    with pytest.raises(OntologyError, match=r"node t:1: property 'text' holds 1,048,577 bytes"):
        list(mapper.node_triples(NodeView(id="t:1", labels=("Node",), props={"text": huge})))
    # Just under the limit is fine (multi-byte characters count as bytes).
    ok = "é" * (MAX_FIELD_BYTES // 2)
    assert list(mapper.node_triples(NodeView(id="t:1", labels=("Node",), props={"text": ok})))


@pytest.mark.slow  # exports and loads in child processes: seconds each
def test_a_literal_over_oxigraphs_buffer_fails_the_load_cleanly(tmp_path: Path) -> None:
    store = tmp_path / "oxigraph"
    good = tmp_path / "good.nt"
    good.write_text('<https://x/a> <https://x/p> "kept" .\n')
    load_store(store, good)
    big = tmp_path / "big.nt"
    big.write_text('<https://x/a> <https://x/p> "' + "y" * (17 * 1024 * 1024) + '" .\n')
    with pytest.raises(ClientError, match="too large for the RDF store"):
        load_store(store, big)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.nt", "good.nt", "oxigraph"]
    with SparqlStore(store, read_only=True) as s:
        assert len(s) == 1


@pytest.mark.slow  # exports and loads in child processes: seconds each
def test_a_swap_killed_between_its_renames_keeps_the_previous_store(tmp_path: Path) -> None:
    store = tmp_path / "oxigraph"
    good = tmp_path / "good.nt"
    good.write_text('<https://x/a> <https://x/p> "kept" .\n')
    load_store(store, good)
    store.rename(tmp_path / "oxigraph.old")  # what a kill after the first rename leaves
    with SparqlStore(store, read_only=True) as s:
        assert len(s) == 1  # queries still answer from the previous store
    other = tmp_path / "other.nt"
    other.write_text('<https://x/b> <https://x/p> "one" .\n<https://x/c> <https://x/p> "two" .\n')
    assert load_store(store, other).quads == 2
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["oxigraph"]
