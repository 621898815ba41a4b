"""Argument relations read from the graph get the predictions their files get (no Neo4j).

The graph's read views are rebuilt here from the loader records exactly as the graph stores them
(labels, properties, PART_OF discourse, AIF edges), in a shuffled order, read back as records
(:mod:`graphstore.scopes`) and predicted by the relations task
(:meth:`gnn.relations.task.RelationsTask.predict_scope`); the predictions must equal those of
``predict aif`` / ``predict sciarg`` on the files.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path

import pytest

from api.services import relations, tasks
from api.settings import Settings
from gnn.relations.task import AIF, MARG, SCIARG, TASK, family_of
from gnn.task import ScopePrediction
from graphstore.scopes import aif_records, sciarg_records
from ontology.formats.aif import load_aif
from ontology.formats.registry import CORPORA, SAMPLES
from ontology.formats.sciarg import load_sciarg
from ontology.labels import RelationLabel
from ontology.records import (
    EdgeRecord,
    LocutionRecord,
    NodeRecord,
    PropositionRecord,
    RelationRecord,
    SentenceRecord,
)
from ontology.scope import Scope, ScopeRecords
from ontology.terms import RelType
from ontology.views import EdgeView, NodeView, UnitView

pytestmark = pytest.mark.model  # runs the relation model

AIF_DIR = SAMPLES / "dialam-2024" / "my_train"
SCIARG_DIR = SAMPLES / "sciarg" / "compiled_corpus"


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("relgraph")
    # An empty cache: the shipped model, never one trained into the user's cache.
    return Settings(cache_dir=root / "cache", data_dir=root / "data")


def _as_stored(nodes: Iterable[NodeRecord], edges: Iterable[EdgeRecord]) -> tuple[dict[str, UnitView], list[EdgeView]]:
    """What ``read_discourses`` returns for these records once ingested, in a scrambled order."""
    units = [
        UnitView(
            NodeView(n.id, tuple(sorted(label.value for label in n.labels())), n.properties()),
            discourse=n.discourse,
        )
        for n in nodes
        if isinstance(n, LocutionRecord | PropositionRecord | RelationRecord | SentenceRecord) and n.discourse
    ]
    random.Random(5).shuffle(units)
    views = [EdgeView(e.source, e.type.value, e.target, e.corpus, e.id) for e in edges if e.type is RelType.AIF_EDGE]
    random.Random(6).shuffle(views)
    return {u.id: u for u in units}, views


def _predict(settings: Settings, corpus: str, nodes: list, edges: list, ids: list[str]) -> ScopePrediction:
    """The relations task's predictions over the records of ``ids`` (the decoding of ``predict aif``)."""
    loaded = tasks.load(settings, "relations").model
    records = ScopeRecords(Scope(corpus, None, tuple(ids)), tuple(nodes), tuple(edges))
    return TASK.predict_scope(loaded, records, {"objective": "general"})


def _file_relations(out: Path) -> set[tuple[str, str, str, str]]:
    """(map, source I-node, target I-node, type) of the predicted S-nodes in ``predict aif`` output."""
    found = set()
    for path in sorted(out.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        types = {str(n["nodeID"]): n["type"] for n in data["nodes"]}
        into = {str(e["toID"]): str(e["fromID"]) for e in data["edges"] if types[str(e["toID"])] in ("RA", "CA", "MA")}
        for e in data["edges"]:
            s_node = str(e["fromID"])
            if types[s_node] in ("RA", "CA", "MA"):
                found.add((path.stem, into[s_node], str(e["toID"]), types[s_node]))
    return found


def ann_relations(out: Path) -> set[tuple[str, str, str, str]]:
    """(paper, source T id, target T id, type) of the ``R`` lines in ``predict sciarg`` output."""
    found = set()
    for ann in sorted(out.glob("*.ann")):
        for line in ann.read_text(encoding="utf-8").splitlines():
            if line.startswith("R"):
                label, arg1, arg2 = line.split("\t")[1].split()
                found.add((ann.stem, arg1.removeprefix("Arg1:"), arg2.removeprefix("Arg2:"), label))
    return found


def test_aif_maps_from_the_graph_get_the_predictions_of_their_files(settings: Settings, tmp_path: Path) -> None:
    bundle = load_aif(sorted(AIF_DIR.glob("*.json")), "qt30")
    units, edges = _as_stored(bundle.nodes, bundle.edges)
    ids = sorted({u.discourse for u in units.values() if u.discourse})
    nodes, rec_edges = aif_records(units, edges, ids)
    found = _predict(settings, "qt30", nodes, rec_edges, ids)
    rows = found.relations
    assert found.inputs == len(list(AIF_DIR.glob("*.json"))) and found.what == "predicted argument relations"
    assert found.scores is not None and found.scores["official_style"]["general"]["f1"] > 0
    assert found.gold == sum(
        1 for n in bundle.nodes if isinstance(n, RelationRecord) and n.aif_type in ("RA", "CA", "MA")
    )

    relations.predict_aif(settings, AIF_DIR, tmp_path / "pred")
    expected = _file_relations(tmp_path / "pred")
    got = {(r.source.split(":")[1], r.source.split(":")[2], r.target.split(":")[2], r.scheme_label or "") for r in rows}
    assert len(expected) >= 10
    assert got == expected
    kinds = {"RA": RelationLabel.SUPPORT, "CA": RelationLabel.ATTACK, "MA": RelationLabel.REPHRASE}
    assert all(r.label is kinds[r.scheme_label or ""] and 0 <= r.score <= 1 for r in rows)


def test_sciarg_papers_from_the_graph_get_the_predictions_of_their_files(settings: Settings, tmp_path: Path) -> None:
    anns = sorted(SCIARG_DIR.glob("*.ann"))
    bundle = load_sciarg(anns)
    units, edges = _as_stored(bundle.nodes, bundle.edges)
    sentences = {n.id: n.sentences for n in bundle.nodes if isinstance(n, PropositionRecord)}
    ids = sorted({u.discourse for u in units.values() if u.discourse})
    nodes, rec_edges = sciarg_records(units, edges, sentences, ids)
    found = _predict(settings, "sciarg", nodes, rec_edges, ids)
    rows = found.relations
    assert found.inputs == len(anns)
    assert found.gold and found.scores is not None and found.scores["R"]["micro"]["f1"] > 0

    relations.predict_sciarg(settings, SCIARG_DIR, tmp_path / "pred")
    expected = ann_relations(tmp_path / "pred")
    got = {(r.source.split(":")[1], r.source.split(":")[2], r.target.split(":")[2], r.scheme_label or "") for r in rows}
    assert len(expected) >= 10
    assert got == expected
    assert {r.label for r in rows} >= {RelationLabel.SUPPORT, RelationLabel.SAME_UNIT}


def test_families_are_chosen_by_corpus() -> None:
    assert family_of("m-arg") == MARG
    assert family_of("sciarg") == SCIARG
    assert family_of("qt30") == AIF
    assert family_of("my-own-aif-maps") == AIF
    # Sci-Arg papers are read back with their components; every other corpus as AIF dialogues.
    assert [TASK.scope_read(c) for c in ("sciarg", "m-arg", "qt30", "stac")] == ["sciarg", "aif", "aif", "aif"]


def test_m_arg_debates_from_the_graph_get_the_predictions_of_their_files(settings: Settings) -> None:
    from gnn.relations.live import dialogue_map
    from gnn.relations.marg_task import (
        WINDOW,
        debates_from_records,
        owner,
        pairs_from_records,
        predict_debates,
        window_starts,
    )

    spec = CORPORA["m-arg"]
    bundle = spec.load(spec.find(SAMPLES))
    units, edges = _as_stored(bundle.nodes, bundle.edges)
    ids = sorted({u.discourse for u in units.values() if u.discourse})
    nodes, rec_edges = aif_records(units, edges, ids)
    found = _predict(settings, "m-arg", nodes, rec_edges, ids)
    rows = found.relations
    pairs = pairs_from_records(bundle.nodes, bundle.edges)
    assert found.gold == sum(p.label != "Neither" for p in pairs) > 0
    # Every annotated pair scores the predictions.
    assert found.scores is not None and found.scores["pairs"] == len(pairs)

    debates = sorted(debates_from_records(bundle.nodes), key=lambda d: d.id)
    assert found.inputs == len(debates)
    qt = tasks.load(settings, "relations").model.qt30
    from_files = predict_debates(qt, debates, "general")
    expected = {(a, b, lab, round(p, 4)) for rels in from_files for a, b, lab, p in rels}
    # Graph ids are m-arg:<sentence id>:I.
    got = {(r.source.split(":")[1], r.target.split(":")[1], r.scheme_label, r.score) for r in rows}
    assert len(rows) == len(expected) > 10
    assert got == expected
    kinds = {"Support": RelationLabel.SUPPORT, "Attack": RelationLabel.ATTACK}
    assert all(r.label is kinds[r.scheme_label or ""] for r in rows)

    # A middle window of the longest debate, given to the network on its own, decides the pairs it owns alike.
    longest = max(debates, key=lambda d: len(d.sentences))
    starts = window_starts(len(longest.sentences))
    assert len(starts) > 3
    k = 2
    s = starts[k]
    alone = dialogue_map(
        "w", longest.texts[s : s + WINDOW], longest.speakers[s : s + WINDOW], [(t, t + 1) for t in range(WINDOW - 1)]
    )
    (direct,) = qt.predict([alone], "general")
    owned = {
        (longest.sentences[s + int(a)], longest.sentences[s + int(b)], {"RA": "Support", "CA": "Attack"}[lab])
        for a, b, lab, _ in direct
        if lab != "MA" and owner(s + int(a), s + int(b), starts) == k
    }
    at = {sid: i for i, sid in enumerate(longest.sentences)}
    mine = from_files[debates.index(longest)]
    assert owned and owned == {(a, b, lab) for a, b, lab, _ in mine if owner(at[a], at[b], starts) == k}
