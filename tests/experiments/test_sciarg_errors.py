"""experiments/sciarg_errors.py: representable components and citation fragments on hand-made papers."""

from __future__ import annotations

from experiments.sciarg_errors import citation_fragments, representable
from gnn.bam import BratDocument, Component, Relation

TEXT = "Foster and Fedkiw [2001] show it. Stam [1999] fails. We win, they lose."


def _doc(components: list[Component], relations: list[Relation]) -> BratDocument:
    sentences = [(0, 33), (34, 52), (53, 71)]
    return BratDocument(
        "P1",
        sentences,
        [TEXT[a:b] for a, b in sentences],
        {c.id: c for c in components},
        relations,
    )


def _at(cid: str, label: str, fragment: str, start: int = 0) -> Component:
    begin = TEXT.index(fragment, start)
    return Component(cid, label, ((begin, begin + len(fragment)),))


def test_bracketed_citation_pairs_are_counted_by_their_gold_relation() -> None:
    components = [
        _at("T1", "data", "Foster and Fedkiw"),
        _at("T2", "data", "2001"),
        _at("T3", "data", "Stam"),
        _at("T4", "data", "1999"),
        _at("T5", "own_claim", "We win"),
    ]
    doc = _doc(components, [Relation("parts_of_same", "T2", "T1")])
    # T1+T2: split by " [" and related; T3+T4 too but unrelated; T2/T3 and T4/T5 have words between.
    assert citation_fragments({"P1": (doc, TEXT)}) == {"parts_of_same": 1, "none": 1}


def test_a_component_across_sentences_or_inside_a_token_is_not_representable() -> None:
    whole = _at("T1", "data", "Stam [1999]")
    across = Component("T2", "own_claim", ((TEXT.index("fails"), TEXT.index("We") + 2),))
    inside = Component("T3", "own_claim", ((TEXT.index("win") + 1, TEXT.index("win") + 3),))
    doc = _doc([whole, across, inside], [])
    assert representable({"P1": (doc, TEXT)}) == (3, 1)
