"""Agreement of judgements stored in a real Neo4j, through the library and the CLI."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from typer.testing import CliRunner

from gnn.agreement import (
    JudgementFilter,
    check_judgements,
    contextdep_agreement,
    marg_agreement,
)
from graphstore.judgements import judgements
from graphstore.runtime import EmbeddedNeo4j
from graphstore.store import GraphStore
from ontology.formats.registry import CORPORA
from tests.conftest import PASSWORD, SAMPLES
from tests.gnn.test_agreement import CDEP, cdep_expected, marg_expected, marg_rows


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
    marg = check_judgements(judgements(loaded, "m-arg"))
    assert len(marg) == 49 and Counter(j.label for j in marg) == Counter(
        r["relation"].capitalize() for r in marg_rows()
    )
    result = marg_agreement(marg, JudgementFilter(min_trust=0.9, min_confidence=3))
    want = marg_expected(0.9, 3)
    row = result.filters[0]
    assert row.alpha == pytest.approx(want["alpha"]) and row.annotations == want["annotations"]
    assert result.overall.alpha == pytest.approx(marg_expected(None, None)["alpha"])
    cdep = contextdep_agreement(check_judgements(judgements(loaded, "contextdep")))
    want_c = cdep_expected()
    assert cdep.alpha == pytest.approx(want_c["alpha"])
    assert cdep.annotations == want_c["annotations"] == 128
    assert cdep.majority_vote_accuracy == pytest.approx(want_c["accuracy"])
    assert list(cdep.as_dict())[:2] == ["corpus", "alpha"]


def test_cli_agreement_json(cli_env: dict[str, str], loaded: GraphStore) -> None:
    from api.cli.main import app

    runner = CliRunner()
    result = runner.invoke(app, ["agreement", "m-arg", "--json"], env=cli_env)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["overall"]["alpha"] == pytest.approx(marg_expected(None, None)["alpha"])
    assert len(data["filters"]) == 25
    for row in data["filters"]:
        want = marg_expected(row["min_trust"], row["min_confidence"])
        assert row["alpha"] == pytest.approx(want["alpha"])
        assert (row["annotators"], row["annotations"]) == (want["annotators"], want["annotations"])
    result = runner.invoke(
        app, ["agreement", "m-arg", "--min-trust", "0.85", "--min-confidence", "4", "--json"], env=cli_env
    )
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["filters"]
    assert row["alpha"] == pytest.approx(marg_expected(0.85, 4)["alpha"])
    result = runner.invoke(app, ["agreement", "m-arg", "--include-tainted", "--json"], env=cli_env)
    assert json.loads(result.stdout)["overall"]["annotations"] == 49
    result = runner.invoke(app, ["agreement", "contextdep", "--json"], env=cli_env)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    want_c = cdep_expected()
    assert data["alpha"] == pytest.approx(want_c["alpha"])
    assert data["majority_vote_accuracy"] == pytest.approx(want_c["accuracy"])
    result = runner.invoke(app, ["agreement", "contextdep"], env=cli_env)
    assert result.exit_code == 0 and "majority_vote_accuracy" in result.stdout
    result = runner.invoke(app, ["agreement", "contextdep", "--min-trust", "0.9"], env=cli_env)
    assert result.exit_code == 2 and "no trust" in result.output
    result = runner.invoke(app, ["agreement", "sciarg", "--json"], env=cli_env)
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
