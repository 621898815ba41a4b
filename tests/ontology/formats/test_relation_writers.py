"""AIF and brat writers of predicted relations: every original node, edge and line is kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontology.errors import LoaderError
from ontology.formats.aif import load_aif
from ontology.formats.aif_write import add_relations, read_map, strip_relations, write_maps
from ontology.formats.brat_write import with_relations, write_paper
from ontology.formats.common import FileRelation
from ontology.formats.registry import SAMPLES
from ontology.formats.sciarg import load_sciarg

DATA = SAMPLES
MAPS = sorted((DATA / "dialam-2024" / "my_train").glob("*.json"))
PAPERS = sorted((DATA / "sciarg" / "compiled_corpus").glob("*.ann"))


def _relations(data: dict) -> set[tuple[str, str, str]]:
    """(source, type, target) of RA/CA/MA nodes, read the way the official scorer reads them."""
    out = set()
    for node in data["nodes"]:
        if node["type"] in ("RA", "CA", "MA"):
            sid = node["nodeID"]
            targets = [e["toID"] for e in data["edges"] if e["fromID"] == sid]
            sources = [e["fromID"] for e in data["edges"] if e["toID"] == sid]
            out |= {(s, node["type"], t) for s in sources for t in targets}
    return out


@pytest.mark.parametrize("path", MAPS, ids=lambda p: p.name)
def test_strip_keeps_every_other_node_edge_and_locution(path: Path) -> None:
    data = read_map(path)
    stripped = strip_relations(data)
    kinds = {n["type"] for n in stripped["nodes"]}
    assert kinds <= {"L", "I", "TA"}
    assert [n for n in data["nodes"] if n["type"] in ("L", "I", "TA")] == stripped["nodes"]
    dropped = {n["nodeID"] for n in data["nodes"] if n["type"] in ("YA", "RA", "CA", "MA")}
    kept_edges = [e for e in data["edges"] if e["fromID"] not in dropped and e["toID"] not in dropped]
    assert stripped["edges"] == kept_edges
    assert stripped["locutions"] == data["locutions"]
    assert not _relations(stripped)


def test_add_relations_round_trip(tmp_path: Path) -> None:
    data = strip_relations(read_map(MAPS[0]))
    inodes = [n["nodeID"] for n in data["nodes"] if n["type"] == "I"]
    rels = [FileRelation(inodes[1], inodes[0], "RA", 0.9), FileRelation(inodes[2], inodes[1], "CA", 0.6)]
    rels.append(FileRelation(inodes[3], inodes[2], "MA", 0.7))
    out = add_relations(data, rels)
    [written] = write_maps(tmp_path, [(MAPS[0].name, out)])
    back = json.loads(written.read_text(encoding="utf-8"))
    assert back["nodes"][: len(data["nodes"])] == data["nodes"]
    assert back["edges"][: len(data["edges"])] == data["edges"]
    assert back["locutions"] == data["locutions"]
    assert _relations(back) == {(r.source, r.type, r.target) for r in rels}
    ids = [n["nodeID"] for n in back["nodes"]]
    assert len(ids) == len(set(ids))
    bundle = load_aif([written])  # the project's own loader reads it back
    assert sum(1 for n in bundle.nodes if getattr(n, "aif_type", None) in ("RA", "CA", "MA")) == 3


def test_add_relations_rejects_non_i_nodes() -> None:
    data = strip_relations(read_map(MAPS[0]))
    lnode = next(n["nodeID"] for n in data["nodes"] if n["type"] == "L")
    inode = next(n["nodeID"] for n in data["nodes"] if n["type"] == "I")
    with pytest.raises(LoaderError, match="not an I-node"):
        add_relations(data, [FileRelation(lnode, inode, "RA")])
    with pytest.raises(LoaderError, match="relation type"):
        add_relations(data, [FileRelation(inode, inode, "YA")])


def test_read_map_names_file_and_edge(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"nodes": [{"nodeID": "1", "type": "I"}], "edges": [{"fromID": "1", "toID": "9"}]}))
    with pytest.raises(LoaderError, match=r"bad\.json: edge #0"):
        read_map(bad)


@pytest.mark.parametrize("ann", PAPERS, ids=lambda p: p.name)
def test_brat_keeps_every_span_line(ann: Path, tmp_path: Path) -> None:
    original = ann.read_text(encoding="utf-8").splitlines()
    t_ids = [line.split("\t")[0] for line in original if line.startswith("T")]
    rels = [FileRelation(t_ids[0], t_ids[1], "supports"), FileRelation(t_ids[2], t_ids[1], "parts_of_same")]
    out_ann, out_txt = write_paper(ann, tmp_path, rels)
    lines = out_ann.read_text(encoding="utf-8").splitlines()
    assert [x for x in lines if not x.startswith("R")] == [x for x in original if not x.startswith("R")]
    assert [x for x in lines if x.startswith("R")] == [
        f"R1\tsupports Arg1:{t_ids[0]} Arg2:{t_ids[1]}",
        f"R2\tparts_of_same Arg1:{t_ids[2]} Arg2:{t_ids[1]}",
    ]
    assert out_txt.read_bytes() == ann.with_suffix(".txt").read_bytes()
    bundle = load_sciarg([out_ann])  # loads again, offsets still match the copied text
    assert sum(1 for n in bundle.nodes if getattr(n, "scheme_label", None) == "supports") == 1


def test_brat_keeps_metadata_of_spans_and_drops_that_of_gold_relations(tmp_path: Path) -> None:
    text = "We propose a method. It works."
    (tmp_path / "A97.txt").write_text(text, encoding="utf-8")
    ann = tmp_path / "A97.ann"
    ann.write_text(
        "T1\town_claim 0 19\tWe propose a method\n"
        "A1\tConfidence T1 High\n"
        "T2\tdata 21 29\tIt works\n"
        "R1\tsupports Arg1:T2 Arg2:T1\n"
        "#1\tAnnotatorNotes R1\tsure?\n"
        "A2\tNegated R1\n"
        "N1\tReference T2 Wikipedia:534366\tworks\n"
        "#2\tAnnotatorNotes T2\tthe data\n",
        encoding="utf-8",
    )
    gold = load_sciarg([ann])  # attributes and normalisations load (and are not used)
    assert sum(1 for n in gold.nodes if getattr(n, "scheme_label", None) == "supports") == 1
    out_ann, _ = write_paper(ann, tmp_path / "out", [FileRelation("T1", "T2", "contradicts")])
    assert out_ann.read_text(encoding="utf-8").splitlines() == [
        "T1\town_claim 0 19\tWe propose a method",
        "A1\tConfidence T1 High",
        "T2\tdata 21 29\tIt works",
        "N1\tReference T2 Wikipedia:534366\tworks",
        "#2\tAnnotatorNotes T2\tthe data",
        "R1\tcontradicts Arg1:T1 Arg2:T2",
    ]
    assert sum(1 for n in load_sciarg([out_ann]).nodes if getattr(n, "scheme_label", None) == "contradicts") == 1


def test_brat_paper_without_annotations_stays_empty(tmp_path: Path) -> None:
    (tmp_path / "A95.txt").write_text("Nothing argued here.", encoding="utf-8")
    (tmp_path / "A95.ann").write_bytes(b"")
    out_ann, _ = write_paper(tmp_path / "A95.ann", tmp_path / "out", [])
    assert out_ann.read_bytes() == b""


def test_brat_rejects_unknown_span() -> None:
    with pytest.raises(LoaderError, match="T999"):
        with_relations(PAPERS[0], [FileRelation("T999", "T1", "supports")])
