"""Helpers shared by the loaders."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ontology.errors import LoaderError


def read_json(path: Path) -> Any:
    """Parse a JSON file; errors name the file, line and column."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as e:
        raise LoaderError(f"{path}: line {e.lineno}, column {e.colno}: invalid JSON ({e.msg})") from e
    except UnicodeDecodeError as e:
        raise LoaderError(f"{path}: byte {e.start}: not UTF-8 ({e.reason})") from e
    except OSError as e:
        raise LoaderError(f"{path}: cannot read ({e.strerror})") from e


def expand(paths: Iterable[Path | str], pattern: str) -> list[Path]:
    """Files given directly plus files matching ``pattern`` under given directories, sorted."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob(pattern) if p.is_file()))
        elif path.is_file():
            out.append(path)
        else:
            raise LoaderError(f"{path}: no such file or directory")
    if not out:
        raise LoaderError(f"no {pattern} files found in {', '.join(str(p) for p in paths)}")
    return out


def require(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``obj[key]`` checked for presence and type; errors name ``where``."""
    if not isinstance(obj, dict):
        raise LoaderError(f"{where}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise LoaderError(f"{where}: missing field {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise LoaderError(f"{where}: field {key!r} has type {type(value).__name__}")
    return value
