"""The real corpora (``../shared/corpora``) through loaders and GraphStore into the real Neo4j.

Expected numbers are the ones stated in each corpus's PROVENANCE.md. Skipped only when the
shared corpora directory is absent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from graphstore.store import GraphStore
from ontology.formats.registry import CORPORA
from tests.conftest import shared_corpora

pytestmark = pytest.mark.corpora

ROOT = shared_corpora()
if ROOT is None:
    pytest.skip("../shared/corpora is absent", allow_module_level=True)

# PROVENANCE.md: molweni/DP/dev.json, stac/train.json, dialam-2024 my_train + my_test.
DIALOGUE_COUNTS = {
    "molweni": {"Dialogue": 500, "Locution": 4386, "DiscourseRelation": 3880},
    "stac": {"Dialogue": 1086, "Locution": 11898, "DiscourseRelation": 11563},
}
AIF_NODE_COUNTS = {
    "Locution": 49550,  # L
    "Illocution": 32626,  # YA
    "Proposition": 23465,  # I
    "Transition": 23038,  # TA
    "Rephrase": 5596,  # MA
    "Support": 5365,  # RA
    "Attack": 1181,  # CA
}
AIF_MAPS = 1478
AIF_EDGES = 136231


def files(root: Path) -> dict[str, list[Path]]:
    return {
        "molweni": [root / "molweni" / "DP" / "dev.json"],
        "stac": [root / "stac" / "train.json"],
        "qt30": CORPORA["qt30"].find(root),
    }


@pytest.fixture(scope="module")
def loaded(driver: Driver) -> Iterator[tuple[GraphStore, dict[str, list[Path]]]]:
    assert ROOT is not None
    store = GraphStore(driver, batch_size=5000)
    for name in list(store.stats()["corpora"]):
        store.delete_corpus(name)
    paths = files(ROOT)
    for name, corpus_files in paths.items():
        store.ingest(CORPORA[name].load(corpus_files))
    yield store, paths
    for name in paths:
        store.delete_corpus(name)


def entry(store: GraphStore, name: str) -> dict[str, Any]:
    result: dict[str, Any] = store.stats()["corpora"][name]
    return result


@pytest.mark.parametrize("name", ["molweni", "stac"])
def test_dialogue_corpus_counts(loaded: tuple[GraphStore, dict[str, list[Path]]], name: str) -> None:
    store, _ = loaded
    e = entry(store, name)
    assert e["status"] == "complete"
    for label, n in DIALOGUE_COUNTS[name].items():
        assert e["labels"][label] == n, label
    rels = DIALOGUE_COUNTS[name]["DiscourseRelation"]
    assert e["relationships"]["AIF_EDGE"] == 2 * rels
    assert e["relationships"]["SPOKEN_BY"] == DIALOGUE_COUNTS[name]["Locution"]
    assert sum(n for k, n in e["relations"].items() if k.startswith("DiscourseRelation:")) == rels
    assert e["relations"]["DiscourseRelation:QuestionAnswerPair"] > 0


def test_qt30_counts(loaded: tuple[GraphStore, dict[str, list[Path]]]) -> None:
    store, paths = loaded
    assert len(paths["qt30"]) == AIF_MAPS
    e = entry(store, "qt30")
    assert e["status"] == "complete"
    for label, n in AIF_NODE_COUNTS.items():
        assert e["labels"][label] == n, label
    assert e["labels"]["Dialogue"] == AIF_MAPS
    assert sum(AIF_NODE_COUNTS.values()) == 140821
    assert e["labels"]["Relation"] == sum(
        AIF_NODE_COUNTS[k] for k in ("Illocution", "Transition", "Rephrase", "Support", "Attack")
    )
    assert e["relationships"]["AIF_EDGE"] == AIF_EDGES


def test_reingest_changes_no_count(loaded: tuple[GraphStore, dict[str, list[Path]]]) -> None:
    store, paths = loaded
    before = store.stats()
    store.ingest(CORPORA["stac"].load(paths["stac"]))
    assert store.stats() == before
