"""The experiments stay out of the product: not in the wheel, not in the benchmark list, each script
saying what it measured and where its figures are."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from setuptools import find_namespace_packages

from bench import all as bench_all

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = sorted(p for p in (ROOT / "experiments").glob("*.py") if p.stem != "__init__")


def test_the_wheel_packages_no_experiment_and_no_benchmark() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    packaged = find_namespace_packages(where=str(ROOT), include=include)
    assert "api" in packaged and "gnn.relations" in packaged
    assert not [p for p in packaged if p.split(".")[0] in ("experiments", "bench", "tests")], packaged


def test_no_experiment_is_a_benchmark() -> None:
    benchmarks = {p.stem for p in Path(bench_all.BENCH_DIR).glob("*.py") if p.stem not in bench_all.SKIP}
    assert EXPERIMENTS and not benchmarks & {p.stem for p in EXPERIMENTS}


def test_each_script_names_what_it_measured_and_where_its_figures_are() -> None:
    docs = " ".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md"))
    for script in EXPERIMENTS:
        doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
        assert "docs/" in doc and "Usage:" in doc, script.name
        # The pages that keep its figures name it, so that they can be measured again.
        assert f"experiments/{script.name}" in docs or f"experiments.{script.stem}" in docs, script.name
