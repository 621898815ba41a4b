"""Every public function of the services and of the model tasks returns a typed value.

The rule, read from the source (AST) so that it costs no import:

* every public function and every public method of a public class (a name without a leading
  underscore; dunder methods aside) has a return annotation;
* the annotation names no ``Any`` (``typing.Any``, ``dict[str, Any]``, ``Iterator[list[Any]]``, ...)
  and no bare ``dict`` / ``Dict`` (a mapping says what it maps: ``dict[str, int]``);
* one exception: ``Any`` may stand directly as a type argument of the task generics
  (``Task[Any, Any, Any]``, ``Recipes[Any]``, ``Fitted[Any]``), because the registry holds tasks of
  every config, example and model type; ``Any`` as a return, or as a container's element or value
  type (``dict[str, Any]``, ``list[Any]``, ``tuple[str, Any]``, ``Task[list[Any], ...]``), stays refused;
* an alias is as typed as what it stands for, except a **named document of an outside format**
  (an AIF map, an xAIF document, a SPARQL JSON result): a module-level ``Name: TypeAlias = ...``
  followed by a docstring saying which format it is. Such an alias may hold ``Any`` (the format is
  JSON, not argweb's own), and a return of that name counts as typed.

The modules checked are every module of ``api/services`` and the task modules: ``gnn/task.py`` and
each module registered in its registry (``register("name", "module:attribute")``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("api", "graphstore", "gnn", "ontology")


def _registered_task_modules() -> list[Path]:
    """``gnn/task.py`` and the modules its ``register(...)`` calls name."""
    tree = ast.parse((ROOT / "gnn" / "task.py").read_text(encoding="utf-8"))
    imported = _imported_names(tree)
    found = [ROOT / "gnn" / "task.py"]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "register"):
            continue
        if len(node.args) < 2:
            continue
        target = node.args[1]
        module = None
        if isinstance(target, ast.Constant) and isinstance(target.value, str):
            module = target.value.partition(":")[0]
        elif isinstance(target, ast.Name) and target.id in imported:
            module = imported[target.id][0]
        if module:
            path = _module_path(module)
            if path is not None and path not in found:
                found.append(path)
    return found


def _module_path(module: str) -> Path | None:
    """The source file of a module of this project (a package's ``__init__.py``), None elsewhere."""
    if module.split(".")[0] not in PACKAGES:
        return None
    base = ROOT.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imported_names(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """Local name -> (module, name) of every ``from module import name`` of the module."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                out[alias.asname or alias.name] = (node.module, alias.name)
    return out


MODULES = sorted({*(ROOT / "api" / "services").glob("*.py"), *_registered_task_modules()})


@dataclass(frozen=True)
class Alias:
    """A module-level alias: what it stands for, and whether it is a named outside-format document."""

    value: ast.expr
    document: bool


def _aliases(tree: ast.Module) -> dict[str, Alias]:
    """Module-level ``Name = ...`` and ``Name: TypeAlias = ...`` of a module."""
    out: dict[str, Alias] = {}
    body = tree.body
    for i, node in enumerate(body):
        documented = (
            i + 1 < len(body)
            and isinstance(body[i + 1], ast.Expr)
            and isinstance(body[i + 1].value, ast.Constant)  # type: ignore[attr-defined]
            and isinstance(body[i + 1].value.value, str)  # type: ignore[attr-defined]
        )
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            declared = ast.unparse(node.annotation) in ("TypeAlias", "typing.TypeAlias")
            out[node.target.id] = Alias(node.value, declared and documented)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = Alias(node.value, False)
    return out


class Resolver:
    """Finds where a name used in an annotation is defined (this module, or a project module it imports from)."""

    def __init__(self) -> None:
        self._trees: dict[Path, ast.Module] = {}

    def tree(self, path: Path) -> ast.Module:
        if path not in self._trees:
            self._trees[path] = ast.parse(path.read_text(encoding="utf-8"))
        return self._trees[path]

    def alias(self, path: Path, name: str, depth: int = 0) -> tuple[Path, Alias] | None:
        """The alias ``name`` means in module ``path`` (followed through project imports), None when it is no alias."""
        tree = self.tree(path)
        found = _aliases(tree).get(name)
        if found is not None:
            return path, found
        source = _imported_names(tree).get(name)
        if source is None or depth > 4:
            return None
        module_path = _module_path(source[0])
        return None if module_path is None else self.alias(module_path, source[1], depth + 1)


TASK_GENERICS = ("Task", "Recipes", "Fitted")
"""The generics of ``gnn/task.py`` whose type arguments may be ``Any`` (the registry holds every kind of task)."""


def _task_type_arguments(annotation: ast.expr) -> set[int]:
    """Ids of the ``Any`` nodes that stand directly as a type argument of a task generic (``Task[Any, ...]``)."""
    allowed: set[int] = set()
    for node in ast.walk(annotation):
        if not isinstance(node, ast.Subscript):
            continue
        generic = node.value
        name = (
            generic.id
            if isinstance(generic, ast.Name)
            else generic.attr
            if isinstance(generic, ast.Attribute)
            else None
        )
        if name not in TASK_GENERICS:
            continue
        arguments = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        allowed |= {id(arg) for arg in arguments if isinstance(arg, ast.Name) and arg.id == "Any"}
    return allowed


def untyped(annotation: ast.expr, path: Path, resolver: Resolver, seen: frozenset[str] = frozenset()) -> list[str]:
    """Why ``annotation`` (of a function of ``path``) is not a typed return: ``[]`` when it is."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return untyped(ast.parse(annotation.value, mode="eval").body, path, resolver, seen)
    problems: list[str] = []
    task_arguments = _task_type_arguments(annotation)
    for node in ast.walk(annotation):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name is None or id(node) in task_arguments:
            continue
        if name == "Any":
            problems.append("Any")
        elif name in ("dict", "Dict") and not _subscripted(annotation, node):
            problems.append("a bare dict")
        elif isinstance(node, ast.Name) and name not in seen:
            resolved = resolver.alias(path, name)
            if resolved is not None and not resolved[1].document:
                inner = untyped(resolved[1].value, resolved[0], resolver, seen | {name})
                problems += [f"{name} = {problem}" for problem in inner]
    return problems


def _subscripted(annotation: ast.expr, target: ast.AST) -> bool:
    """Whether ``target`` (a ``dict`` name) is subscripted within ``annotation`` (``dict[K, V]``)."""
    return any(isinstance(node, ast.Subscript) and node.value is target for node in ast.walk(annotation))


def public_functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """``(qualified name, definition)`` of every public function and public method of a public class."""
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            out.append((node.name, node))
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not item.name.startswith("_"):
                    out.append((f"{node.name}.{item.name}", item))
    return out


def violations(path: Path, resolver: Resolver) -> list[str]:
    """One line per public function of ``path`` whose return is not typed."""
    out = []
    for name, fn in public_functions(resolver.tree(path)):
        if fn.returns is None:
            out.append(f"{name}: no return annotation")
            continue
        problems = untyped(fn.returns, path, resolver)
        if problems:
            out.append(f"{name} -> {ast.unparse(fn.returns)}: {', '.join(dict.fromkeys(problems))}")
    return out


def test_the_modules_checked_include_the_services_and_the_registered_tasks() -> None:
    names = {str(path.relative_to(ROOT)) for path in MODULES}
    assert "api/services/graph.py" in names
    assert "gnn/task.py" in names
    assert "gnn/pairs.py" in names  # registered as "gnn.pairs:TASK"
    assert len([n for n in names if n.startswith("api/services/")]) >= 10


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_public_functions_return_typed_values(path: Path) -> None:
    found = violations(path, Resolver())
    assert not found, f"{path.relative_to(ROOT)}: public functions returning untyped values:\n  " + "\n  ".join(found)


CHECKED = '''
from typing import Any, TypeAlias

Doc: TypeAlias = dict[str, Any]
"""An outside-format document (JSON as the format writes it)."""

Loose = dict[str, Any]

def good() -> int: ...
def document() -> Doc: ...
def mapping() -> dict[str, list[int]]: ...
def bare() -> dict: ...
def of_any() -> dict[str, Any]: ...
def nested() -> "list[tuple[str, Any]]": ...
def loose() -> Loose: ...
def missing(): ...
def _private() -> Any: ...
def task() -> Task[Any, Any, Any]: ...
def recipes() -> "Recipes[Any]": ...
def fitted() -> list[Fitted[Any]]: ...
def task_of_any() -> Task[dict[str, Any], Any, Any]: ...
def task_list_of_any() -> Task[Any, Any, Any] | list[Any]: ...

class Public:
    def method(self) -> Any: ...
    def __repr__(self) -> Any: ...

class _Hidden:
    def method(self) -> Any: ...
'''


def test_the_rule_tells_typed_from_untyped_returns(tmp_path: Path) -> None:
    module = tmp_path / "example.py"
    module.write_text(CHECKED, encoding="utf-8")
    found = violations(module, Resolver())
    assert [line.split(" ")[0].rstrip(":") for line in found] == [
        "bare",
        "of_any",
        "nested",
        "loose",
        "missing",
        "task_of_any",
        "task_list_of_any",
        "Public.method",
    ]
    assert "Loose = Any" in found[3]
