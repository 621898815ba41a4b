"""Every data file the packages read at run time is shipped by ``pip install .``.

An installed argweb once lacked ``graphstore/data/fetch_registry.json`` (``argweb run`` failed at
start-up outside the checkout) because ``[tool.setuptools.package-data]`` did not name it. This
compares the files under each package with what its package-data globs select.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Build inputs and outputs that are not read by the installed package.
NOT_SHIPPED = {
    "api/web/src",
    "api/web/scripts",
    "api/web/package.json",
    "api/web/package-lock.json",
    "api/web/node_modules",
}
BUILD_DIRS = {"__pycache__", "target", "node_modules"}


def _data_files(package: str) -> set[str]:
    found = set()
    for path in (ROOT / package).rglob("*"):
        rel = path.relative_to(ROOT).as_posix()
        if (
            path.is_file()
            and path.suffix not in {".py", ".pyc"}
            and not BUILD_DIRS & set(path.parts)
            and not any(rel == skip or rel.startswith(skip + "/") for skip in NOT_SHIPPED)
        ):
            found.add(rel)
    return found


def test_package_data_covers_every_data_file() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs: dict[str, list[str]] = config["tool"]["setuptools"]["package-data"]
    packages = config["tool"]["importlinter"]["root_packages"]
    missing = {}
    for package in packages:
        shipped = {
            p.relative_to(ROOT).as_posix() for pattern in globs.get(package, []) for p in (ROOT / package).glob(pattern)
        }
        left_out = sorted(_data_files(package) - shipped)
        if left_out:
            missing[package] = left_out
    assert not missing, f"data files not in [tool.setuptools.package-data]: {missing}"


def test_the_fetch_registry_is_package_data() -> None:
    # The file whose absence broke an installed argweb; guards the test above against an empty walk.
    assert "graphstore/data/fetch_registry.json" in _data_files("graphstore")
