"""The one matching of predicted with gold edges (ontology.comparison)."""

from __future__ import annotations

from ontology.comparison import (
    FOUND,
    MATCH,
    MISSED,
    OTHER_TYPE,
    PARTLY,
    UNMATCHED,
    ComparedRelation,
    MissedEdge,
    compare,
    edge_type,
    run_scope,
)


def rel(rid: str, kind: str, sources: tuple[str, ...], targets: tuple[str, ...]) -> ComparedRelation:
    return ComparedRelation(rid, kind, sources, targets)


def test_marks_counts_and_scores_per_type() -> None:
    gold = [
        rel("g1", "Support", ("a",), ("b",)),
        rel("g2", "Support", ("c",), ("d",)),
        rel("g3", "Attack", ("e",), ("f",)),
        # A linked argument: two premises, one edge each; only one is predicted.
        rel("g4", "Support", ("g", "h"), ("i",)),
        # Out of scope: the run predicts no Illocution.
        rel("g5", "Illocution", ("a",), ("c",)),
    ]
    predicted = [
        rel("p1", "Support", ("a",), ("b",)),  # match
        rel("p2", "Attack", ("c",), ("d",)),  # same ends, another type
        rel("p3", "Support", ("b",), ("a",)),  # reversed: unmatched (edges are directed)
        rel("p4", "Support", ("g",), ("i",)),  # one of g4's edges
        rel("p5", "NonRelation", ("e",), ("f",)),  # claims no edge: not compared
    ]
    scope = run_scope(["Support", "Attack", "NonRelation"])
    assert scope == frozenset({"Support", "Attack"})
    m = compare(gold, predicted, scope)
    assert m.marks == {
        "p1": MATCH,
        "p2": OTHER_TYPE,
        "p3": UNMATCHED,
        "p4": MATCH,
        "g1": FOUND,
        "g2": MISSED,
        "g3": MISSED,
        "g4": PARTLY,
    }
    assert m.missed == [
        MissedEdge("g2", "c", "d", "Support"),
        MissedEdge("g3", "e", "f", "Attack"),
        MissedEdge("g4", "h", "i", "Support"),
    ]
    types = {t.type: t for t in m.counts.types()}
    support, attack = types["Support"], types["Attack"]
    assert (support.gold, support.predicted, support.matched, support.other_type, support.missed) == (4, 3, 2, 0, 2)
    assert (attack.gold, attack.predicted, attack.matched, attack.other_type, attack.missed) == (1, 1, 0, 1, 1)
    assert support.precision == 2 / 3 and support.recall == 0.5
    assert support.f1 is not None and abs(support.f1 - 2 * (2 / 3) * 0.5 / (2 / 3 + 0.5)) < 1e-12
    assert attack.precision == 0.0 and attack.recall == 0.0 and attack.f1 is None
    micro = m.counts.micro()
    assert (micro.gold, micro.predicted, micro.matched, micro.missed) == (5, 4, 2, 3)
    assert micro.precision == 0.5 and micro.recall == 0.4


def test_discourse_senses_are_types_and_counts_add_over_maps() -> None:
    assert edge_type("DiscourseRelation", "Elaboration") == "DiscourseRelation:Elaboration"
    scope = run_scope(["DiscourseRelation:Elaboration"])
    one = compare(
        [rel("g", "DiscourseRelation:Elaboration", ("a",), ("b",))],
        [rel("p", "DiscourseRelation:Contrast", ("a",), ("b",))],
        scope,
    )
    two = compare(
        [rel("g2", "DiscourseRelation:Contrast", ("c",), ("d",))],
        [rel("p2", "DiscourseRelation:Contrast", ("c",), ("d",))],
        scope,
    )
    # Every sense of a predicted class is in scope, not only those the run happened to predict.
    assert one.marks == {"p": OTHER_TYPE, "g": MISSED}
    both = {t.type: t for t in (one.counts + two.counts).types()}
    assert both["DiscourseRelation:Contrast"].predicted == 2 and both["DiscourseRelation:Contrast"].matched == 1
    assert both["DiscourseRelation:Elaboration"].gold == 1 and both["DiscourseRelation:Elaboration"].predicted == 0
    assert both["DiscourseRelation:Elaboration"].precision is None
    assert (one.counts + two.counts).micro().recall == 0.5


def test_no_predictions_in_scope_means_no_scores() -> None:
    m = compare([rel("g", "Support", ("a",), ("b",))], [], run_scope(["Support"]))
    micro = m.counts.micro()
    assert (micro.gold, micro.predicted, micro.precision, micro.recall, micro.f1) == (1, 0, None, 0.0, None)
