"""The package structure: import contracts (pyproject ``[tool.importlinter]``) and a light CLI import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept() -> None:
    # ontology -> nothing else; graphstore/gnn -> never api; gnn -> never graphstore; no circles.
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "4 kept, 0 broken" in proc.stdout


def test_cli_import_pulls_in_no_model_stack() -> None:
    heavy = ("torch", "transformers", "librosa", "torch_geometric")
    code = f"import sys, api.cli.main, api.app; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_model_tests_do_not_import_the_application_layer() -> None:
    # tests/gnn tests the models as a library: like gnn itself, it never reaches into api (nor into
    # tests.conftest, which does); tests of the services that wrap the models live in tests/api.
    offenders = []
    for path in sorted((ROOT / "tests" / "gnn").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            offenders += [
                f"{path.relative_to(ROOT)}:{node.lineno}: {name}"
                for name in names
                if name.split(".")[0] == "api" or name == "tests.conftest"
            ]
    assert offenders == []


def test_cypher_lives_in_graphstore_query_builders() -> None:
    # Services, routes, the CLI and the models hand Cypher over to graphstore's builders and stores;
    # a query written inline escapes the builders' READ/WRITE split and their parameter batching.
    # (Docstrings and a query shown as an OpenAPI example, ``examples=[...]``, are documentation.)
    import re

    cypher = re.compile(r"\b(MATCH|MERGE|UNWIND|CREATE|DETACH DELETE)\b\s*[(`$a-z]|\bCALL db\.")
    offenders = []
    for package in ("api", "gnn"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            documentation: set[int] = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.keyword) and node.arg == "examples":
                    documentation.update(id(const) for const in ast.walk(node.value))
                elif isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    first = node.body[0] if node.body else None
                    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                        documentation.add(id(first.value))
            offenders += [
                f"{path.relative_to(ROOT)}:{node.lineno}"
                for node in ast.walk(tree)
                if isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in documentation
                and cypher.search(node.value)
            ]
    assert offenders == []


def _service_imports() -> dict[str, set[str]]:
    """Each module of ``api/services`` and the sibling services it imports (at any depth of its code)."""
    root = ROOT / "api" / "services"
    modules = {p.stem: p for p in root.glob("*.py") if p.stem != "__init__"}
    found: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith("api.services."):
                    deps.add(node.module.split(".")[2])
                elif node.module == "api.services":
                    deps.update(a.name for a in node.names)
            elif isinstance(node, ast.Import):
                deps.update(a.name.split(".")[2] for a in node.names if a.name.startswith("api.services."))
        found[name] = {d for d in deps if d in modules and d != name}
    return found


def test_services_stand_on_at_most_three_floors() -> None:
    # Floor 1 imports no other service; a service on floor n imports some service of floor n - 1.
    deps = _service_imports()
    floors: dict[str, int] = {}

    def floor(name: str, seen: tuple[str, ...] = ()) -> int:
        assert name not in seen, f"import circle between services: {' -> '.join((*seen, name))}"
        if name not in floors:
            floors[name] = 1 + max((floor(d, (*seen, name)) for d in deps[name]), default=0)
        return floors[name]

    high = {name: floor(name) for name in deps if floor(name) > 3}
    assert high == {}, f"services above the third floor: {high}"
    assert len(deps) >= 20 and max(floors.values()) == 3
