"""Predicted against gold: ``GET /discourses/{id}/comparison`` and ``argweb corpus stats
--predicted`` against a comparison computed by the test's own Cypher from the graph's edges."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tests.integration.api.compare_support import RUN_A, RUN_B, ComparedMap, delete_runs, expected, write_runs
from tests.integration.api.conftest import ApiGraph


@pytest.fixture(scope="module")
def compared(api_graph: ApiGraph) -> Iterator[ComparedMap]:
    try:
        yield write_runs(api_graph.driver)
    finally:
        delete_runs(api_graph.driver)


def _counts(body: dict[str, Any]) -> dict[str, tuple[int, int, int, int, int]]:
    keys = ("gold", "predicted", "matched", "other_type", "missed")
    out = {t["type"]: tuple(t[k] for k in keys) for t in body["types"]}
    out["micro"] = tuple(body["micro"][k] for k in keys)
    return out


def test_route_counts_equal_the_graphs_edges(client: TestClient, api_graph: ApiGraph, compared: ComparedMap) -> None:
    url = f"/discourses/{compared.map_id}/comparison"
    newest = client.get(url)
    assert newest.status_code == 200, newest.text
    body = newest.json()
    # Both runs cover the map, newest first; without ?run= the newest is compared.
    assert [r["run_id"] for r in body["runs"]] == [RUN_B, RUN_A]
    assert body["run"]["run_id"] == RUN_B and body["run"]["classes"] == ["Support"]
    assert _counts(body) == expected(api_graph.driver, compared.map_id, RUN_B)
    chosen = client.get(url, params={"run": RUN_A})
    assert chosen.status_code == 200, chosen.text
    body = chosen.json()
    assert body["run"]["classes"] == ["Attack", "Support"] and body["run"]["relations"] == 5
    want = expected(api_graph.driver, compared.map_id, RUN_A)
    assert _counts(body) == want
    assert want["Support"][2] == 3 and want["Attack"][3] == 1
    predicted_marks = {k: v for k, v in body["marks"].items() if k.startswith("pred:")}
    assert predicted_marks == compared.marks
    # Every missed gold edge is listed once, and the gold relations holding them are marked.
    assert len(body["missed"]) == want["micro"][4]
    assert all(body["marks"][m["relation"]] in ("missed", "partly") for m in body["missed"])
    micro = body["micro"]
    assert micro["precision"] == pytest.approx(want["micro"][2] / want["micro"][1])
    assert micro["recall"] == pytest.approx(want["micro"][2] / want["micro"][0])


def test_route_errors(client: TestClient, compared: ComparedMap) -> None:
    unknown_run = client.get(f"/discourses/{compared.map_id}/comparison", params={"run": "run-nope"})
    assert unknown_run.status_code == 404 and RUN_A in unknown_run.json()["detail"]
    no_runs = client.get("/discourses/molweni:1078/comparison")
    assert no_runs.status_code == 404 and "no prediction run" in no_runs.json()["detail"]
    assert client.get("/discourses/qt30:nodeset0/comparison").status_code == 404


def test_corpus_stats_predicted_is_the_map_micro_over_the_maps_a_run_covers(
    client: TestClient, cli_env: dict[str, str], compared: ComparedMap
) -> None:
    from api.cli.main import app

    result = CliRunner().invoke(app, ["corpus", "stats", "--predicted", "--json"], env=cli_env)
    assert result.exit_code == 0, result.output
    rows = {(c["corpus"], c["run"]["run_id"]): c for c in json.loads(result.stdout)["predicted_against_gold"]}
    # Run A covers one map: the corpus figures are that map's.
    corpus_a = rows[("qt30", RUN_A)]
    assert corpus_a["maps"] == 1
    map_a = client.get(f"/discourses/{compared.map_id}/comparison", params={"run": RUN_A}).json()
    assert _counts(corpus_a) == _counts(map_a)
    # The fixture's run on qt30:nodeset21318 is in too, micro over its one map.
    api_run = rows[("qt30", "run-api-test")]
    map_api = client.get("/discourses/qt30:nodeset21318/comparison", params={"run": "run-api-test"}).json()
    assert api_run["maps"] == 1 and _counts(api_run) == _counts(map_api)
    table = CliRunner().invoke(app, ["corpus", "stats", "--predicted"], env=cli_env)
    assert table.exit_code == 0 and "predicted against gold" in table.stdout and RUN_A in table.stdout
