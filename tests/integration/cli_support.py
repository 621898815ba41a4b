"""Run the argweb command line as a real subprocess with an isolated environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli_env(data_dir: Path, port: int, password: str, **extra: str) -> dict[str, str]:
    """The environment of an ``argweb`` process on its own embedded server (no ``ARGWEB_*`` leaks in)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGWEB_")}
    env.update(
        {
            "ARGWEB_NEO4J_PASSWORD": password,
            "ARGWEB_NEO4J_HEAP": "1g",
            "ARGWEB_NEO4J_PORT": str(port),
            "ARGWEB_DATA_DIR": str(data_dir),
        }
    )
    env.update(extra)
    return env


def argweb_cmd(*args: str) -> list[str]:
    """The command line of ``argweb ARGS`` run from this checkout."""
    return [sys.executable, "-m", "api.cli", *args]


def run_argweb(env: dict[str, str], *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run ``argweb ARGS`` to completion and capture its output."""
    return subprocess.run(
        argweb_cmd(*args), cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def spawn_argweb(env: dict[str, str], *args: str, log: Path) -> subprocess.Popen[bytes]:
    """Start ``argweb ARGS`` in the background with its output in ``log``."""
    with open(log, "wb") as fh:
        return subprocess.Popen(argweb_cmd(*args), cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
