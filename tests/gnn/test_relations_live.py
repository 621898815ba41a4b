"""A new dialogue in the QT30 task-A input form: each I-node anchors in its own locution, the given
transitions become TA links, and the shipped model labels its pairs."""

from __future__ import annotations

from gnn.encoder import TextEncoder
from gnn.registry import shipped_model
from gnn.relations.argmap import anchor_propositions
from gnn.relations.live import ARGUMENT, dialogue_map, predict_dialogue
from gnn.relations.qt30_run import load_qt30
from gnn.relations.qt30_task import Decoding

MODEL = shipped_model("relations")
TEXTS = [
    "We should adopt a four-day week.",
    "That is not true for hospitals.",
    "You cannot run a ward with fewer shifts.",
    "Rested staff are less likely to quit.",
]
SPEAKERS = ["Anna", "Tom", "Tom", "Anna"]


def test_dialogue_map_anchors_each_proposition_in_its_locution() -> None:
    amap = dialogue_map("d", TEXTS, SPEAKERS, [(0, 1), (1, 2), (2, 3), (3, 3), (0, 9)])
    assert anchor_propositions(amap) == [0, 1, 2, 3]
    assert amap.transitions == [(0, 1), (1, 2), (2, 3)]
    assert amap.locutions[1].text == "Tom : That is not true for hospitals." and amap.locutions[1].speaker == "Tom"
    assert [p.local_id for p in amap.props] == ["0", "1", "2", "3"]


def test_predict_dialogue_labels_pairs_of_the_dialogue() -> None:
    # The shipped model reads texts through the packaged MiniLM encoder (no cache: nothing written).
    model = load_qt30(MODEL, encoder=TextEncoder())
    links = predict_dialogue(model, TEXTS, SPEAKERS, [(0, 1), (1, 2), (2, 3)])
    assert links == predict_dialogue(model, TEXTS, SPEAKERS, [(0, 1), (1, 2), (2, 3)])
    assert links and all(0 <= s < 4 and 0 <= t < 4 and s != t and 0 < p <= 1 for s, t, _, p in links)
    assert {lab for _, _, lab, _ in links} <= set(ARGUMENT.values()) - {"none"}
    # The shipped general decoding judges each direction on its own: one label at most per ordered pair.
    assert model.decoding("general").directions == "both"
    assert len({(s, t) for s, t, _, _ in links}) == len(links)
    # With the rule "one", the two directions of a pair compete: one relation at most per unordered pair.
    model.decodings["general"] = Decoding(model.decoding("general").bias, "one")
    single = predict_dialogue(model, TEXTS, SPEAKERS, [(0, 1), (1, 2), (2, 3)])
    assert single and len({frozenset((s, t)) for s, t, _, _ in single}) == len(single) < len(links)
    assert predict_dialogue(model, TEXTS[:1], SPEAKERS[:1]) == []
