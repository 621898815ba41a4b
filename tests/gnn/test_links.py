"""Cross-corpus link candidates and labels (:mod:`gnn.links`), without the vector index or a model."""

from __future__ import annotations

import pytest

from gnn.links import LinkOptions, LinkReport, add_candidates, label_candidates, sample_propositions
from gnn.task import TextPair
from ontology.errors import ApiError
from ontology.labels import RelationLabel
from ontology.views import SemanticHit


def _prop(pid: str, corpus: str) -> dict[str, str]:
    return {"id": pid, "corpus": corpus, "text": f"text of {pid}"}


def _hit(pid: str, corpus: str, score: float) -> SemanticHit:
    return SemanticHit(pid, "Proposition", corpus, None, f"text of {pid}", score)


def test_a_pair_found_from_both_ends_is_one_candidate() -> None:
    found: list[tuple[dict[str, str], SemanticHit]] = []
    seen: set[tuple[str, str]] = set()
    add_candidates(found, seen, [_prop("a", "qt30"), _prop("b", "qt30")], [[_hit("x", "m-arg", 0.8)], []])
    add_candidates(found, seen, [_prop("x", "m-arg")], [[_hit("a", "qt30", 0.8), _hit("b", "qt30", 0.4)]])
    assert [(q["id"], h.id) for q, h in found] == [("a", "x"), ("x", "b")]
    assert seen == {("a", "x"), ("b", "x")}


def test_close_pairs_are_rephrases_the_rest_go_to_the_classifier_and_weak_ones_are_dropped() -> None:
    cands = [
        (_prop("a", "qt30"), _hit("x", "m-arg", 0.95)),
        (_prop("b", "qt30"), _hit("y", "m-arg", 0.6)),
        (_prop("c", "qt30"), _hit("z", "m-arg", 0.5)),
        (_prop("d", "qt30"), _hit("w", "m-arg", 0.7)),
    ]
    asked: list[TextPair] = []

    def classify(pairs: list[TextPair]) -> list[tuple[RelationLabel, float]]:
        asked.extend(pairs)
        return [(RelationLabel.SUPPORT, 0.8), (RelationLabel.ATTACK, 0.3), (RelationLabel.NONE, 0.99)]

    links = label_candidates(cands, classify, LinkOptions(threshold=0.5, rephrase_cosine=0.9))
    assert [p.source for p in asked] == ["text of b", "text of c", "text of d"]  # never the rephrase
    assert [(x.source, x.target, x.label, x.by) for x in links] == [
        ("a", "x", RelationLabel.REPHRASE, "encoder-cosine"),
        ("b", "y", RelationLabel.SUPPORT, "relation-classifier"),
    ]
    report = LinkReport()
    report.keep(links, sample_size=1)
    assert report.counts == {"rephrase": 1, "support": 1}
    assert report.pairs_by_corpora == {"qt30->m-arg": 2} and len(report.sample) == 1


def test_a_limit_takes_a_seeded_sample_in_id_order() -> None:
    rows = [_prop(f"p{i:02}", "qt30" if i % 2 else "m-arg") for i in range(20)]
    picked = sample_propositions(rows, 5)
    assert picked == sample_propositions(rows, 5) and len(picked) == 5
    assert [r["id"] for r in picked] == sorted(r["id"] for r in picked)
    assert sample_propositions(rows, None) is rows and sample_propositions(rows, 50) is rows


@pytest.mark.parametrize("options", [LinkOptions(k=0), LinkOptions(threshold=1.5), LinkOptions(limit=0)])
def test_options_out_of_range_are_refused(options: LinkOptions) -> None:
    with pytest.raises(ApiError):
        options.check()
