"""The main job's gold-vs-predicted table and its note on the prediction runs that are not the job's."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from api.cli.corpora import print_other_runs, print_relation_counts
from api.cli.mainjob import step_summary
from api.services.mainjob import OtherRuns, PredictionOutcome, RdfSync, Step
from ontology.views import RelationCount


def _out(capsys: pytest.CaptureFixture[str], stream: str = "out") -> str:
    return " ".join(getattr(capsys.readouterr(), stream).split())


def test_other_runs_get_a_column_only_when_there_are_any(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        RelationCount("qt30", "Support", gold=5365, predicted=15719),
        RelationCount("qt30", "Transition", gold=23038),
        RelationCount("mined", "Support", gold=0, predicted=3),
    ]
    print_relation_counts(rows)
    plain = _out(capsys)
    assert "other runs" not in plain and "│ qt30 │ Support │ 5365 │ 15719 │" in plain
    assert "│ qt30 │ Transition │ 23038 │ │" in plain
    assert "│ mined │ Support │ 0 │ 3 │" in plain  # a gold count of 0 is shown, not left blank
    print_relation_counts([replace(rows[0], other_runs=15719), rows[1]])
    split = _out(capsys)
    assert "other runs" in split and "│ qt30 │ Support │ 5365 │ 15719 │ 15719 │" in split


def test_other_runs_are_named_with_the_command_that_removes_them(capsys: pytest.CaptureFixture[str]) -> None:
    print_other_runs([OtherRuns("relation-gnn", "0.5.0", ("r1", "r2"), 22934, job_version=False)])
    # Progress and notes go to stderr, like the job's other lines; stdout keeps the tables.
    assert _out(capsys, "err") == (
        "also in the graph: relation-gnn 0.5.0: 2 run(s), 22934 predicted relations "
        "(argweb runs delete --model relation-gnn --version 0.5.0 removes them)"
    )
    # The job's own model version: deleting by version would take the job's runs, so each run is named.
    print_other_runs([OtherRuns("relation-gnn", "0.6.0", ("relations-ab", "relations-cd"), 900, job_version=True)])
    assert _out(capsys, "err") == (
        "also in the graph: relation-gnn 0.6.0: 2 run(s), 900 predicted relations; each is removed by: "
        "argweb runs delete --model relation-gnn --version 0.6.0 --run relations-ab "
        "argweb runs delete --model relation-gnn --version 0.6.0 --run relations-cd"
    )
    print_other_runs([])
    assert _out(capsys, "err") == ""


def test_each_step_is_worded_by_the_command_line_from_what_it_returned(tmp_path: Path) -> None:
    outcomes = [
        PredictionOutcome("relations", "qt30", "written", "relation-gnn", "0.6.0", "r1", 1200),
        PredictionOutcome("discourse", "stac", "written", "discourse", "1", "r2", 34),
        PredictionOutcome("discourse", "molweni", "skipped", "discourse", "1", "r3"),
        PredictionOutcome("embedding", "(all)", "failed"),
    ]
    assert step_summary(Step("predict", 1.0, outcomes)) == (
        "1,234 relations written by 2 run(s), 1 already present, 1 FAILED"
    )
    assert step_summary(Step("embed", 1.0, None)) == "FAILED"
    assert step_summary(Step("rdf", 1.0, RdfSync(tmp_path, exported=True, triples=12345))) == "12,345 triples loaded"
    assert step_summary(Step("rdf", 1.0, RdfSync(tmp_path, exported=False))) == "unchanged since the last run"
