"""BAM measures S, B, C, R on a hand-made brat fixture (tests/data/bam), every value computed by hand.

Gold (P1.txt, three sentences): T1 own_claim "We propose a new method", T2 own_claim "It is fast",
T3 data "it uses caching", T4 background_claim "Prior work is slow"; R1 T3 supports T2,
R2 T4 contradicts T1, R3 T1 semantically_same T2.
Prediction: T1 exact, T2 right span but labelled data, T3 "uses caching" (span too short), no T4;
R1 T3 supports T2 (wrong source span), R2 T2 semantically_same T1 (gold R3 reversed: symmetric).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gnn.bam import (
    BratDocument,
    Component,
    Relation,
    evaluate,
    evaluate_dirs,
    majority_baseline,
    read_brat_dir,
    token_segments,
)
from ontology.errors import LoaderError

DATA = Path(__file__).resolve().parent.parent / "data" / "bam"


@pytest.fixture(scope="module")
def result() -> dict:
    return evaluate_dirs(DATA / "pred", DATA / "gold").as_dict()


def test_the_evaluation_is_typed_and_its_json_names_the_directories() -> None:
    evaluation = evaluate_dirs(DATA / "pred", DATA / "gold")
    assert evaluation.documents == 1 and evaluation.missing_predictions == []
    assert evaluation.system.c.tp == 1 and evaluation.baseline.s.f1 == 1.0
    shown = evaluation.as_dict()
    assert shown["pred"] == str(DATA / "pred") and shown["gold"] == str(DATA / "gold")


def test_sentence_classification(result: dict) -> None:
    system = result["system"]
    # Gold: all three sentences argumentative; prediction: the third has no component.
    assert system["S"] == pytest.approx(2 / 3)
    arg = system["sentences_argumentative"]
    assert (arg["tp"], arg["predicted"], arg["gold"]) == (2, 2, 3)
    assert arg["f1"] == pytest.approx(0.8)


def test_boundary_similarity(result: dict) -> None:
    # 19 tokens; gold masses [5,1,3,1,3,1,4,1] (boundaries 5 6 9 10 13 14 18), predicted
    # [5,1,3,2,2,6] (5 6 9 11 13): 4 matches, 10~11 near miss (1/2), 14 and 18 missed.
    b = result["system"]["boundary"]
    assert (b["matches"], b["additions"], b["transpositions"]) == (4, 2, 1)
    assert result["system"]["B"] == pytest.approx(1 - 2.5 / 7)


def test_component_classification(result: dict) -> None:
    c = result["system"]["components"]
    assert (c["tp"], c["predicted"], c["gold"]) == (1, 3, 4)
    assert result["system"]["C"] == pytest.approx(2 / 7)
    by_label = result["system"]["components_by_label"]
    assert by_label["own_claim"]["tp"] == 1 and by_label["data"]["predicted"] == 2


def test_relations_symmetric_types_unordered(result: dict) -> None:
    r = result["system"]["relations"]
    assert (r["tp"], r["predicted"], r["gold"]) == (1, 2, 3)
    assert result["system"]["R"] == pytest.approx(0.4)
    assert result["system"]["relations_by_label"]["semantically_same"]["tp"] == 1


def test_majority_baseline_row(result: dict) -> None:
    base = result["baseline"]
    # Every sentence argumentative -> one own_claim per sentence (with its full stop, so no exact
    # match), each supporting the next; sentence boundaries 6 and 14 match, 5 gold ones are missed.
    assert base["S"] == 1.0
    assert base["C"] == 0.0 and base["R"] == 0.0
    assert base["B"] == pytest.approx(2 / 7)
    assert base["components"]["predicted"] == 3 and base["relations"]["predicted"] == 2


def test_gold_against_itself_is_perfect() -> None:
    gold = read_brat_dir(DATA / "gold")
    scores = evaluate(gold, gold).as_dict()
    assert [scores[k] for k in "SBCR"] == [1.0, 1.0, 1.0, 1.0]


def test_missing_prediction_counts_as_empty() -> None:
    gold = read_brat_dir(DATA / "gold")
    scores = evaluate({}, gold).as_dict()
    assert scores["S"] == 0.0 and scores["C"] == 0.0 and scores["B"] == 0.0


def test_tokens_inside_a_component_and_gap_segments() -> None:
    doc = BratDocument("x", [(0, 11)], ["ab cd ef gh"])
    tokens = doc.tokens()
    assert tokens == [(0, 2), (3, 5), (6, 8), (9, 11)]
    # A span starting inside a token takes that token; adjacent components stay separate segments.
    comps = [Component("T1", "data", ((4, 5),)), Component("T2", "data", ((6, 8),))]
    assert token_segments(tokens, comps) == [("", 0), ("T1", 0), ("T2", 0), ("", 1)]


def test_relation_to_unknown_component_is_an_error() -> None:
    doc = BratDocument(
        "x", [(0, 2)], ["ab"], {"T1": Component("T1", "data", ((0, 2),))}, [Relation("supports", "T1", "T9")]
    )
    with pytest.raises(LoaderError, match="T9"):
        evaluate({"x": doc}, {"x": doc})


def test_baseline_without_argumentative_majority_predicts_nothing() -> None:
    doc = BratDocument("x", [(0, 2), (3, 5)], ["ab", "cd"], {"T1": Component("T1", "data", ((0, 2),))})
    doc2 = BratDocument("y", [(0, 2), (3, 5)], ["ab", "cd"])
    base = majority_baseline({"x": doc, "y": doc2})
    assert not base["x"].components and not base["y"].components


def test_bad_directories(tmp_path: Path) -> None:
    with pytest.raises(LoaderError, match="not a directory"):
        read_brat_dir(tmp_path / "nope")
    with pytest.raises(LoaderError, match=r"no brat \.ann"):
        read_brat_dir(tmp_path)
    (tmp_path / "Z9.ann").write_text("T1\tdata 0 2\tab\n", encoding="utf-8")
    with pytest.raises(LoaderError, match=r"no text Z9\.txt"):
        read_brat_dir(tmp_path, texts=DATA / "gold")
    with pytest.raises(LoaderError, match="no gold"):
        pred = tmp_path / "pred"
        pred.mkdir()
        (pred / "Z9.ann").write_text("T1\tdata 0 2\tWe\n", encoding="utf-8")
        (pred / "Z9.txt").write_text("We x\n", encoding="utf-8")
        evaluate_dirs(pred, DATA / "gold")
