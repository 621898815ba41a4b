"""The benchmark harness: figures against goals, one table, failed scripts visible."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import all as bench_all
from bench import harness

pytestmark = pytest.mark.model  # runs the benchmarks, models included


@pytest.fixture
def records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "out" / "records.jsonl"
    monkeypatch.setattr(harness, "OUT_DIR", path.parent)
    monkeypatch.setattr(harness, "RECORDS", path)
    return path


def test_ratio_and_verdict_follow_the_direction_of_better(records: Path) -> None:
    fast = harness.record("wall", 30.0, "s", 60.0, "lower")
    slow = harness.record("wall 2", 90.0, "s", 60.0, "lower")
    many = harness.record("rate", 25.0, "x", 20.0, "higher")
    few = harness.record("rate 2", 10.0, "x", 20.0, "higher")
    none = harness.record("mismatches", 0, "", 0, "lower")
    some = harness.record("mismatches 2", 3, "", 0, "lower")
    assert (fast.ratio, fast.passed) == (2.0, True)
    assert (round(slow.ratio, 3), slow.passed) == (0.667, False)
    assert (many.ratio, many.passed) == (1.25, True)
    assert (few.ratio, few.passed) == (0.5, False)
    assert none.passed and not some.passed
    stored = [json.loads(line) for line in records.read_text().splitlines()]
    assert [row["pass"] for row in stored] == [True, False, True, False, True, False]
    assert harness.read_records(records) == [fast, slow, many, few, none, some]
    with pytest.raises(ValueError):
        harness.record("x", 1, "s", 1, "faster")  # type: ignore[arg-type]


def test_table_has_one_row_per_figure_and_a_fail_row_per_broken_script(records: Path) -> None:
    harness.record("wall", 30.0, "s", 60.0, "lower", note="3 corpora")
    text = harness.table(harness.read_records(records), {"broken": "exited with 1 after 3s"})
    lines = text.splitlines()
    assert lines[0].split(" | ")[0].strip() == "benchmark"
    assert "wall (3 corpora)" in lines[2] and "<= 60 s" in lines[2] and lines[2].rstrip().endswith("pass")
    assert lines[3].startswith("broken") and lines[3].rstrip().endswith("FAIL")


def test_bench_args_are_read_without_importing_the_script(tmp_path: Path) -> None:
    script = tmp_path / "fake.py"
    script.write_text('raise SystemExit("imported!")\nBENCH_ARGS = ["--repeat", 1]\n')
    assert bench_all.bench_args(script) == ["--repeat", "1"]
    assert bench_all.bench_args(Path(bench_all.__file__)) == []


def test_bench_all_quick_runs_a_script_and_writes_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results.json"
    code = bench_all.main(["--quick", "--only", "audio_features", "--results", str(results), "--timeout", "300"])
    printed = capsys.readouterr().out
    data = json.loads(results.read_text())
    assert data["quick"] is True and data["failures"] == {}
    names = [f["name"] for f in data["figures"]]
    assert names == ["audio features: utterances per second"]
    assert data["figures"][0]["bench"] == "audio_features" and data["figures"][0]["figure"] > 0
    assert code == (0 if data["figures"][0]["pass"] else 1)
    header = next(line for line in printed.splitlines() if line.startswith("benchmark"))
    assert [c.strip() for c in header.split("|")] == ["benchmark", "figure", "value", "goal", "ratio", "result"]
    assert "audio features: utterances per second" in printed
    # The repository's own records stay untouched.
    assert (tmp_path / "out" / "records.jsonl").is_file()


def test_bench_all_refuses_an_unknown_benchmark(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench_all.main(["--only", "no_such_bench", "--results", str(tmp_path / "r.json")])
    assert exit_info.value.code == 2


def test_every_benchmark_has_a_quick_form() -> None:
    scripts = sorted(p for p in Path(bench_all.BENCH_DIR).glob("*.py") if p.stem not in bench_all.SKIP)
    assert {p.stem for p in scripts} >= {"api", "ingest", "sparql", "scale", "models", "predictions"}
    for script in scripts:
        source = script.read_text(encoding="utf-8")
        assert "BENCH_QUICK_ARGS" in source, f"{script.name} has no BENCH_QUICK_ARGS"
        assert "record(" in source, f"{script.name} records no figure"


def test_models_bench_times_every_task(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    bench_all.main(["--quick", "--only", "models", "--results", str(results), "--timeout", "600"])
    data = json.loads(results.read_text())
    assert data["failures"] == {}
    figures = {f["name"]: f["figure"] for f in data["figures"]}
    # One training row per `argweb model train` command: the relations command trains every family.
    for task in ("discourse", "relations", "paraphrase", "components", "pairs"):
        assert figures[f"{task}: training"] > 0, figures
    assert not any(name.startswith("relations/") and name.endswith(": training") for name in figures)
    rates = [name for name in figures if ", cold cache" in name or ", warm cache" in name]
    tasks = {name.split(":")[0] for name in rates}
    assert tasks == {"discourse", "relations/qt30", "relations/sciarg", "relations/m-arg", "paraphrase", "components"}
    assert all(figures[name] > 0 for name in rates)


def test_models_bench_times_the_training_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--train`` times ``argweb model train TASK`` itself, into a directory it removes afterwards."""
    import argparse
    import tempfile

    from bench import models

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the model directory goes
    commands: list[list[str]] = []
    run = models.subprocess.run

    def spy(command: list[str], **kwargs: Any) -> Any:
        commands.append(command)
        return run(command, **kwargs)

    monkeypatch.setattr(models.subprocess, "run", spy)
    args = argparse.Namespace(train="quick")
    row = models.training("paraphrase", args, models.ROOT / "gnn" / "models" / "paraphrase")
    assert row["trained_here"] is True and row["training_seconds"] > 0
    assert row["training_profile"].startswith("quick (")
    (command,) = commands
    assert command[1:7] == ["-m", "api.cli", "model", "train", "paraphrase", "--profile"]
    out = Path(command[command.index("--out") + 1])
    assert out.parent == tmp_path and not out.exists()
    args = argparse.Namespace(train="no-such-profile")
    with pytest.raises(RuntimeError, match="exited with"):
        models.training("paraphrase", args, models.ROOT / "gnn" / "models" / "paraphrase")
