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


def test_no_experiment_is_a_product_task_profile_or_import() -> None:
    # A recipe measured and not adopted runs from experiments/ on a task of its own (as
    # experiments/pairs_lora.py does); the product's registries name product modules only, so an
    # experiment cannot come back as a task or a `--profile` the CLI lists.
    from gnn.pairs import RECIPE_MODULES
    from gnn.task import contract_tasks, get_task

    assert RECIPE_MODULES and [m for m in RECIPE_MODULES if m.split(".")[0] != "gnn"] == []
    for name in contract_tasks():
        task = get_task(name)
        assert type(task).__module__.split(".")[0] == "gnn", name
        outside = {p: type(c).__module__ for p, c in task.recipes.profiles.items()}
        assert {p: m for p, m in outside.items() if m.split(".")[0] != "gnn"} == {}, name
    # Nor does a product module import one (lint-imports does not look at experiments/).
    offenders = []
    for package in ("ontology", "graphstore", "gnn", "api"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                offenders += [
                    f"{path.relative_to(ROOT)}:{node.lineno}" for n in names if n.split(".")[0] == "experiments"
                ]
    assert offenders == []
