"""Dialogues from ontology records, session groups and leak-free splits."""

from __future__ import annotations

import pytest

from gnn.discourse.data import Dialogue, dialogues_from_bundle, session_groups, split_by_groups
from ontology.formats.dialogue_json import load_dialogue_json
from ontology.formats.registry import SAMPLES
from ontology.terms import Sense

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier

CORPORA = SAMPLES


def test_dialogues_from_stac_records_keep_position_and_relations() -> None:
    path = CORPORA / "stac" / "train.json"
    dialogues = dialogues_from_bundle(load_dialogue_json([path], "stac"), source="train.json")
    assert [d.key for d in dialogues[:3]] == ["train.json#0", "train.json#1", "train.json#2"]
    # STAC reuses ids: five dialogues are called pilot01, each keeps its own EDUs.
    assert [d.local_id for d in dialogues[:5]] == ["pilot01"] * 5
    assert len({tuple(d.texts) for d in dialogues[:5]}) == 5
    import json

    raw = json.loads(path.read_text())
    for d, r in zip(dialogues, raw, strict=True):
        assert d.texts == [e["text"] for e in r["edus"]]
        assert d.speakers == [e["speaker"] for e in r["edus"]]
        assert sorted((x, y) for x, y, _ in d.relations) == sorted((rel["x"], rel["y"]) for rel in r["relations"])
    qap = [s for d in dialogues for _, _, s in d.relations if s is Sense.QuestionAnswerPair]
    assert qap, "Question-answer_pair maps to the QuestionAnswerPair sense"


def _d(key: str, texts: list[str], local_id: str = "x", domain: str = "molweni") -> Dialogue:
    return Dialogue(key, local_id, domain, texts, ["a"] * len(texts))


def test_session_groups_share_long_texts_and_stac_ids() -> None:
    shared = "this sentence is long enough to mark a session"
    ds = [
        _d("0", ["ok", shared]),
        _d("1", ["ok", "something else entirely, also long"]),
        _d("2", [shared, "thanks"]),
        _d("3", ["hello there"], local_id="g1", domain="stac"),
        _d("4", ["another game text"], local_id="g1", domain="stac"),
        _d("5", ["yet another one"], local_id="g2", domain="stac"),
    ]
    # "ok" is too short to join dialogues 0 and 1.
    assert session_groups(ds) == [[0, 2], [1], [3, 4], [5]]


def test_split_never_cuts_a_group() -> None:
    ds = [_d(str(i), [f"session {i // 3} shares this long text", f"unique text number {i}"]) for i in range(30)]
    parts = split_by_groups(ds, [0.2, 0.2], seed=3)
    assert sorted(i for p in parts for i in p) == list(range(30))
    for p in parts:
        assert {i // 3 for i in p}.isdisjoint({i // 3 for q in parts if q is not p for i in q})
    assert all(parts), "every part gets dialogues"
    assert split_by_groups(ds, [0.2, 0.2], seed=3) == parts
