"""Copies of this checkout and environments over the base environment that scripts/setup.sh made."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def base_env() -> Path:
    """The shared base environment this checkout's ``.venv`` was set up over (``scripts/setup.sh``)."""
    marker = ROOT / ".venv" / ".argweb-base"
    assert marker.is_file(), f"{marker} is missing: set this checkout up with scripts/setup.sh (make setup)"
    return Path(marker.read_text(encoding="utf-8").strip())


def copy_checkout(dest: Path) -> Path:
    """The files of this checkout (committed or not, minus what git ignores) copied to ``dest``.

    Modification times are kept, so that set-up's "is the built page older than its source" test
    answers as it does here. The Neo4j launcher this checkout built is copied too (Maven takes
    minutes and is not what these tests are about).
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        src = ROOT / name
        if src.is_file():  # a deleted file is still listed until the deletion is committed
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name, follow_symlinks=False)
    target = ROOT / "graphstore" / "java" / "target"
    if target.is_dir():
        shutil.copytree(target, dest / "graphstore" / "java" / "target", symlinks=True)
    return dest


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would point a child at this checkout or its settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ARGWEB_") and k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    env["COLUMNS"] = "200"
    env.update(extra)
    return env
