"""Agreement measures (``gnn.agreement``) and ``argweb agreement`` against independent computations.

The reference alpha here is a direct implementation of Krippendorff's coincidence-matrix formula
for nominal data (no numpy, no ``krippendorff`` package), checked itself against a value worked out
by hand and against the published example of Krippendorff's paper (alpha = 0.691 nominal).
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable
from fractions import Fraction

import pytest

from gnn.agreement import (
    JudgementFilter,
    agreement_row,
    majority_vote_accuracy,
    marg_table,
    nominal_alpha,
)
from ontology.formats.registry import SAMPLES
from ontology.terms import Prop
from ontology.views import JudgementView

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier

MARG_FULL = SAMPLES / "m-arg" / "full_dataset.csv"
CDEP = SAMPLES / "contextdep"


def reference_alpha(units: Iterable[list[str]]) -> Fraction | None:
    """Nominal alpha = 1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c n_k, exactly."""
    o: dict[tuple[str, str], Fraction] = defaultdict(Fraction)
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    o[(a, b)] += Fraction(1, m - 1)
    n_c: dict[str, Fraction] = defaultdict(Fraction)
    for (a, _), v in o.items():
        n_c[a] += v
    n = sum(n_c.values())
    expected = sum(n_c[a] * n_c[b] for a in n_c for b in n_c if a != b)
    if not expected:
        return None
    observed = sum(v for (a, b), v in o.items() if a != b)
    return 1 - (n - 1) * observed / expected


def units_of(judgements: Iterable[JudgementView]) -> list[list[str]]:
    by_unit: dict[str, list[str]] = defaultdict(list)
    for j in judgements:
        by_unit[j.relation].append(str(j.label))
    return list(by_unit.values())


def test_reference_alpha_by_hand() -> None:
    # o_AA = 1 + 2, o_AB = o_BA = 1, o_BB = 3; n_A = n_B = 4, n = 8: alpha = 1 - 7 * 2 / 32 = 0.5625.
    units = [["A", "A", "B"], ["A", "A"], ["B", "B", "B"], ["A"]]
    assert reference_alpha(units) == Fraction(9, 16)
    js = [JudgementView(f"u{i}", f"c{k}", label) for i, unit in enumerate(units) for k, label in enumerate(unit)]
    assert nominal_alpha(js) == pytest.approx(0.5625)


def test_published_example() -> None:
    # Krippendorff (2011) "Computing Krippendorff's alpha-reliability", 4 coders x 12 units, nominal.
    data = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    }
    js = [
        JudgementView(f"u{i}", coder, str(v)) for coder, vs in data.items() for i, v in enumerate(vs) if v is not None
    ]
    assert nominal_alpha(js) == pytest.approx(0.743, abs=5e-4)
    assert float(reference_alpha(units_of(js)) or 0) == pytest.approx(0.743, abs=5e-4)


def test_undefined_alpha() -> None:
    assert nominal_alpha([]) is None
    assert nominal_alpha([JudgementView("u", "a", "X"), JudgementView("u", "b", "X")]) is None
    assert nominal_alpha([JudgementView("u", "a", "X"), JudgementView("v", "b", "Y")]) is None


def marg_rows() -> list[dict[str, str]]:
    with open(MARG_FULL, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def marg_expected(min_trust: float | None, min_conf: float | None, tainted: bool = False) -> dict[str, object]:
    chosen = [
        r
        for r in marg_rows()
        if (tainted or r["_tainted"] == "FALSE")
        and (min_trust is None or float(r["_trust"]) >= min_trust)
        and (min_conf is None or float(r["confidence"]) >= min_conf)
    ]
    by_pair: dict[str, list[str]] = defaultdict(list)
    for r in chosen:
        by_pair[r["pair_id"]].append(r["relation"])
    alpha = reference_alpha(by_pair.values())
    return {
        "alpha": None if alpha is None else float(alpha),
        "annotators": len({r["_worker_id"] for r in chosen}),
        "annotations": len(chosen),
        "support": sum(r["relation"] == "support" for r in chosen),
        "attack": sum(r["relation"] == "attack" for r in chosen),
    }


def cdep_expected() -> dict[str, object]:
    groups: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for name in ("ANON_dev.tsv", "ANON_train.tsv"):
        text = (CDEP / name).read_bytes().decode("utf-16")
        for r in csv.DictReader(io.StringIO(text, newline=""), delimiter="\t"):
            groups[(r["QID"], r["Annotator"])][r["Category"]] = r["Highlighted"]
    labels: dict[str, list[str]] = defaultdict(list)
    for (qid, _), g in groups.items():
        para = g["Referred"].strip() not in ("", "[]") and g["Paraphrase"].strip() not in ("", "[]")
        labels[qid].append("P" if para else "N")
    agree = 0
    for values in labels.values():
        majority = "P" if values.count("P") / len(values) >= 0.5 else "N"
        agree += values.count(majority)
    alpha = reference_alpha(labels.values())
    assert alpha is not None
    return {"alpha": float(alpha), "annotations": len(groups), "accuracy": agree / len(groups)}


def test_judgement_filter_drops_tainted_and_missing_attributes() -> None:
    js = [
        JudgementView("r1", "a", "Support", 0.9, 3),
        JudgementView("r1", "b", "Attack", 0.7, 5),
        JudgementView("r1", "c", "Support", None, None),
        JudgementView("r1", "d", "Support", 1.0, 4, {Prop.TAINTED.value: True}),
    ]
    assert [j.annotator for j in JudgementFilter().select(js)] == ["a", "b", "c"]
    assert [j.annotator for j in JudgementFilter(include_tainted=True).select(js)] == ["a", "b", "c", "d"]
    assert [j.annotator for j in JudgementFilter(min_trust=0.8).select(js)] == ["a"]
    assert [j.annotator for j in JudgementFilter(min_confidence=4, include_tainted=True).select(js)] == ["b", "d"]
    row = agreement_row(js, JudgementFilter(min_trust=0.8, min_confidence=3))
    assert (row.min_trust, row.min_confidence, row.annotations, row.labels) == (0.8, 3, 1, {"Support": 1})


def test_marg_table_against_reference() -> None:
    js = [
        JudgementView(
            r["pair_id"],
            r["_worker_id"],
            r["relation"],
            float(r["_trust"]),
            float(r["confidence"]),
            {Prop.TAINTED.value: r["_tainted"] == "TRUE"},
        )
        for r in marg_rows()
    ]
    table = marg_table(js)
    assert len(table) == 25
    for row in table:
        want = marg_expected(row.min_trust, row.min_confidence)
        got = {
            "alpha": row.alpha,
            "annotators": row.annotators,
            "annotations": row.annotations,
            "support": row.labels.get("support", 0),
            "attack": row.labels.get("attack", 0),
        }
        assert got == pytest.approx(want)
    overall = agreement_row(js)
    assert overall.annotations == 45 and overall.annotators == 8  # the tainted worker's 4 are out
    assert agreement_row(js, JudgementFilter(include_tainted=True)).annotations == 49


def test_majority_vote_accuracy_by_hand() -> None:
    js = [
        JudgementView("q1", "a", "Paraphrase"),
        JudgementView("q1", "b", "NonParaphrase"),  # tie -> Paraphrase
        JudgementView("q2", "a", "NonParaphrase"),
        JudgementView("q2", "b", "NonParaphrase"),
        JudgementView("q2", "c", "Paraphrase"),
    ]
    assert majority_vote_accuracy(js) == pytest.approx(3 / 5)


def test_threshold_curves_follow_what_the_judgements_record() -> None:
    from gnn.agreement import THRESHOLDS, threshold_curves

    assert threshold_curves([]) == {}
    plain = [JudgementView("u1", "a", "X"), JudgementView("u1", "b", "X"), JudgementView("u2", "a", "Y")]
    assert list(threshold_curves(plain)) == ["all judgements"]
    trusted = [JudgementView(j.relation, j.annotator, j.label, trust=0.9) for j in plain]
    curves = threshold_curves(trusted)
    assert list(curves) == ["min trust"]
    assert [t for t, _ in curves["min trust"]] == list(THRESHOLDS)
    # Above 0.9 nothing passes: no alpha at the last threshold.
    assert curves["min trust"][-1] == (1.0, None)


def test_corpus_agreement_takes_the_view_of_the_corpus_and_refuses_filters_it_lacks() -> None:
    from gnn.agreement import (
        ContextdepAgreement,
        CorpusAgreement,
        MargAgreement,
        check_filters,
        corpus_agreement,
        filtered_agreement,
    )
    from ontology.errors import ApiError

    js = [JudgementView("u1", "a", "Paraphrase", 0.9, 3), JudgementView("u1", "b", "Paraphrase", 0.8, 2)]
    everything = JudgementFilter()
    assert isinstance(corpus_agreement(js, "contextdep", everything), ContextdepAgreement)
    assert isinstance(corpus_agreement(js, "m-arg", everything), MargAgreement)
    other = corpus_agreement(js, "mine", JudgementFilter(min_trust=0.85))
    assert isinstance(other, CorpusAgreement) and other.row.annotations == 1
    check_filters("m-arg", JudgementFilter(min_trust=0.85))
    with pytest.raises(ApiError, match="ContextDeP judgements carry no trust"):
        check_filters("contextdep", JudgementFilter(min_confidence=2))
    both = filtered_agreement(js, "mine", JudgementFilter(min_confidence=3))
    assert (both.overall.annotations, both.filtered.annotations) == (2, 1)
