"""Agreement measures (``gnn.agreement``) and ``argweb agreement`` against independent computations.

The reference alpha here is a direct implementation of Krippendorff's coincidence-matrix formula
for nominal data (no numpy, no ``krippendorff`` package), checked itself against a value worked out
by hand and against the published example of Krippendorff's paper (alpha = 0.691 nominal).
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from fractions import Fraction

import pytest
from typer.testing import CliRunner

from gnn.agreement import (
    Judgement,
    agreement_row,
    contextdep_agreement,
    judgements_from_rows,
    majority_vote_accuracy,
    marg_agreement,
    marg_table,
    nominal_alpha,
)
from graphstore.judgements import judgement_rows
from graphstore.loaders.registry import CORPORA
from graphstore.runtime import EmbeddedNeo4j
from graphstore.store import GraphStore
from tests.conftest import PASSWORD, SAMPLES

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


def units_of(judgements: Iterable[Judgement]) -> list[list[str]]:
    by_unit: dict[str, list[str]] = defaultdict(list)
    for j in judgements:
        by_unit[j.unit].append(j.label)
    return list(by_unit.values())


def test_reference_alpha_by_hand() -> None:
    # o_AA = 1 + 2, o_AB = o_BA = 1, o_BB = 3; n_A = n_B = 4, n = 8: alpha = 1 - 7 * 2 / 32 = 0.5625.
    units = [["A", "A", "B"], ["A", "A"], ["B", "B", "B"], ["A"]]
    assert reference_alpha(units) == Fraction(9, 16)
    js = [Judgement(f"u{i}", f"c{k}", label) for i, unit in enumerate(units) for k, label in enumerate(unit)]
    assert nominal_alpha(js) == pytest.approx(0.5625)


def test_published_example() -> None:
    # Krippendorff (2011) "Computing Krippendorff's alpha-reliability", 4 coders x 12 units, nominal.
    data = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    }
    js = [Judgement(f"u{i}", coder, str(v)) for coder, vs in data.items() for i, v in enumerate(vs) if v is not None]
    assert nominal_alpha(js) == pytest.approx(0.743, abs=5e-4)
    assert float(reference_alpha(units_of(js)) or 0) == pytest.approx(0.743, abs=5e-4)


def test_undefined_alpha() -> None:
    assert nominal_alpha([]) is None
    assert nominal_alpha([Judgement("u", "a", "X"), Judgement("u", "b", "X")]) is None
    assert nominal_alpha([Judgement("u", "a", "X"), Judgement("v", "b", "Y")]) is None


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


def test_marg_table_against_reference() -> None:
    js = [
        Judgement(
            r["pair_id"],
            r["_worker_id"],
            r["relation"],
            float(r["_trust"]),
            float(r["confidence"]),
            r["_tainted"] == "TRUE",
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
    assert agreement_row(js, include_tainted=True).annotations == 49


def test_majority_vote_accuracy_by_hand() -> None:
    js = [
        Judgement("q1", "a", "Paraphrase"),
        Judgement("q1", "b", "NonParaphrase"),  # tie -> Paraphrase
        Judgement("q2", "a", "NonParaphrase"),
        Judgement("q2", "b", "NonParaphrase"),
        Judgement("q2", "c", "Paraphrase"),
    ]
    assert majority_vote_accuracy(js) == pytest.approx(3 / 5)


@pytest.fixture(scope="module")
def loaded(driver: object) -> GraphStore:
    from neo4j import Driver

    assert isinstance(driver, Driver)
    gs = GraphStore(driver, batch_size=500)
    gs.clear()
    for name in ("m-arg", "contextdep"):
        spec = CORPORA[name]
        gs.ingest(spec.load(spec.find(SAMPLES)))
    return gs


def test_stored_judgements_give_reference_values(loaded: GraphStore) -> None:
    marg = judgements_from_rows(judgement_rows(loaded, "m-arg"))
    assert len(marg) == 49 and Counter(j.label for j in marg) == Counter(
        r["relation"].capitalize() for r in marg_rows()
    )
    result = marg_agreement(marg, min_trust=0.9, min_confidence=3)
    want = marg_expected(0.9, 3)
    row = result["filters"][0]
    assert row["alpha"] == pytest.approx(want["alpha"]) and row["annotations"] == want["annotations"]
    assert result["overall"]["alpha"] == pytest.approx(marg_expected(None, None)["alpha"])
    cdep = contextdep_agreement(judgements_from_rows(judgement_rows(loaded, "contextdep")))
    want_c = cdep_expected()
    assert cdep["alpha"] == pytest.approx(want_c["alpha"])
    assert cdep["annotations"] == want_c["annotations"] == 128
    assert cdep["majority_vote_accuracy"] == pytest.approx(want_c["accuracy"])


def test_cli_agreement_json(neo4j_server: EmbeddedNeo4j, loaded: GraphStore) -> None:
    from api.cli.main import app

    info = neo4j_server.info()
    assert info is not None
    env = {"ARGWEB_NEO4J_URI": info.uri, "ARGWEB_NEO4J_PASSWORD": PASSWORD}
    runner = CliRunner()
    result = runner.invoke(app, ["agreement", "m-arg", "--json"], env=env)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["overall"]["alpha"] == pytest.approx(marg_expected(None, None)["alpha"])
    assert len(data["filters"]) == 25
    for row in data["filters"]:
        want = marg_expected(row["min_trust"], row["min_confidence"])
        assert row["alpha"] == pytest.approx(want["alpha"])
        assert (row["annotators"], row["annotations"]) == (want["annotators"], want["annotations"])
    result = runner.invoke(
        app, ["agreement", "m-arg", "--min-trust", "0.85", "--min-confidence", "4", "--json"], env=env
    )
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["filters"]
    assert row["alpha"] == pytest.approx(marg_expected(0.85, 4)["alpha"])
    result = runner.invoke(app, ["agreement", "m-arg", "--include-tainted", "--json"], env=env)
    assert json.loads(result.stdout)["overall"]["annotations"] == 49
    result = runner.invoke(app, ["agreement", "contextdep", "--json"], env=env)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    want_c = cdep_expected()
    assert data["alpha"] == pytest.approx(want_c["alpha"])
    assert data["majority_vote_accuracy"] == pytest.approx(want_c["accuracy"])
    result = runner.invoke(app, ["agreement", "contextdep"], env=env)
    assert result.exit_code == 0 and "majority_vote_accuracy" in result.stdout
    result = runner.invoke(app, ["agreement", "contextdep", "--min-trust", "0.9"], env=env)
    assert result.exit_code == 2 and "no trust" in result.output
    result = runner.invoke(app, ["agreement", "sciarg", "--json"], env=env)
    assert result.exit_code == 2 and "no judgements stored" in " ".join(result.output.split())


def test_cli_ingest_commands(neo4j_server: EmbeddedNeo4j, store: GraphStore) -> None:
    from api.cli.main import app

    info = neo4j_server.info()
    assert info is not None
    env = {"ARGWEB_NEO4J_URI": info.uri, "ARGWEB_NEO4J_PASSWORD": PASSWORD}
    runner = CliRunner()
    for name, paths in (
        ("m-arg", [SAMPLES / "m-arg"]),
        ("sciarg", [SAMPLES / "sciarg" / "compiled_corpus"]),
        ("contextdep", sorted(CDEP.glob("*.tsv"))),
    ):
        result = runner.invoke(app, ["ingest", name, *map(str, paths)], env=env)
        assert result.exit_code == 0, result.output
    counts = {r["corpus"]: r["n"] for r in store.run("MATCH (n:Node) RETURN n.corpus AS corpus, count(*) AS n")}
    assert set(counts) == {"m-arg", "sciarg", "contextdep"}
    result = runner.invoke(app, ["ingest", "m-arg", str(SAMPLES / "m-arg" / "full_dataset.csv")], env=env)
    assert result.exit_code == 2 and "without the sentence file" in " ".join(result.output.split())
    after = {r["corpus"]: r["n"] for r in store.run("MATCH (n:Node) RETURN n.corpus AS corpus, count(*) AS n")}
    assert after == counts
