"""docs/bench.md is generated from bench/results.json: the page shows the last run as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import report
from bench.harness import RESULTS


def test_the_page_in_the_repository_is_the_one_the_results_file_makes() -> None:
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    assert not results["quick"], "bench/results.json must come from a full `make bench`, not a --quick run"
    page = report.render(results)
    assert report.DOC.read_text(encoding="utf-8") == page, "run `python -m bench.report` after `make bench`"


def test_every_figure_and_failure_is_a_row_with_its_verdict(tmp_path: Path) -> None:
    (tmp_path / "fast.py").write_text('"""Benchmark: how fast | it is.\n\nMore."""\n', encoding="utf-8")
    results = {
        "generated_at": "2026-12-05T00:00:00Z",
        "quick": False,
        "commit": "abc1234",
        "machine": {"cpus": 2, "memory_gb": 24.0, "python": "3.11.7"},
        "figures": [
            {
                "bench": "fast",
                "name": "wall",
                "figure": 2.5,
                "unit": "s",
                "goal": 3.0,
                "better": "lower",
                "note": "n=5",
                "ratio": 1.2,
                "pass": True,
            },
            {
                "bench": "fast",
                "name": "rate",
                "figure": 10.0,
                "unit": "x",
                "goal": 20.0,
                "better": "higher",
                "note": "",
                "ratio": 0.5,
                "pass": False,
            },
        ],
        "failures": {"broken": "exited with 1 after 3s"},
        "seconds_per_script": {"fast": 12.0, "broken": 3.0},
        "load_per_script": {"fast": [0.5, 1.25]},
    }
    page = report.render(results, bench_dir=tmp_path)
    assert "at commit `abc1234`" in page and "2 CPU cores" in page
    assert "2 figures, 1 met their goal, 1 missed, 1 script(s) failed" in page
    assert "| `fast.py` | how fast \\| it is. | 12 | 0.5 → 1.2 | 1 / 2 |" in page
    assert "| `broken.py` |  | 3 | - | FAIL |" in page
    assert "| fast | wall | 2.5 s | <= 3 s | 1.20 | pass | n=5 |" in page
    assert "| fast | rate | 10 x | >= 20 x | 0.50 | **MISS** |  |" in page
    assert "- `broken.py`: exited with 1 after 3s" in page


def test_a_merged_run_replaces_the_scripts_run_again_and_names_each_scripts_commit(tmp_path: Path) -> None:
    from bench import all as bench_all

    def figure(bench: str, name: str, value: float) -> dict[str, object]:
        return {
            "bench": bench,
            "name": name,
            "figure": value,
            "unit": "s",
            "goal": 1.0,
            "better": "lower",
            "note": "",
            "ratio": 1.0 / value,
            "pass": value <= 1.0,
        }

    earlier = {
        "quick": False,
        "commit": "aaa",
        "figures": [figure("api", "x", 0.5), figure("sparql", "y", 2.0)],
        "failures": {"sparql": "exited with 1 after 814s"},
        "seconds_per_script": {"api": 60, "sparql": 814},
        "load_per_script": {"api": [1, 1], "sparql": [2, 3]},
    }
    now = {
        "quick": False,
        "commit": "bbb",
        "figures": [figure("sparql", "y", 0.9)],
        "failures": {},
        "seconds_per_script": {"sparql": 700},
        "load_per_script": {"sparql": [1, 2]},
        "commit_per_script": {"sparql": "bbb"},
    }
    out = bench_all.merged(earlier, now, {"sparql"})
    assert [(f["bench"], f["figure"]) for f in out["figures"]] == [("api", 0.5), ("sparql", 0.9)]
    assert out["failures"] == {} and out["seconds_per_script"] == {"api": 60, "sparql": 700}
    assert out["commit_per_script"] == {"api": "aaa", "sparql": "bbb"}
    page = report.render(out, bench_dir=tmp_path)
    assert (
        "at commits `aaa` (api) and `bbb` (sparql)" in page
        and "| `api.py` |  | 60 | 1.0 → 1.0 | 1 / 1 | `aaa` |" in page
    )
    with pytest.raises(SystemExit, match="other kind"):
        bench_all.merged({**earlier, "quick": True}, now, {"sparql"})
    # A script that is no longer a benchmark leaves the page with its figures, time and commit.
    out = bench_all.merged(earlier, now, {"sparql"}, benchmarks={"sparql"})
    assert [f["bench"] for f in out["figures"]] == ["sparql"]
    assert out["seconds_per_script"] == {"sparql": 700} and out["commit_per_script"] == {"sparql": "bbb"}
