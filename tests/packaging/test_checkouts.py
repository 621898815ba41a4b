"""Two checkouts on one machine, set up one after the other with scripts/setup.sh, both work.

Each gets its own ``.venv`` with its own editable install over the one base environment of the
dependency spec (the one this checkout was set up over: nothing is downloaded), so setting up one
never repoints the other's ``argweb`` (the old shared environment did: ``No module named 'api'``).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.packaging.support import base_env, clean_env, copy_checkout

# A line per step, no tool output: the rest is in the log that the last line names.
STEP = re.compile(r"^setup: (.+) \.\.\. (.+) \((\d+)s\)$")


def _setup(checkout: Path, env: dict[str, str]) -> tuple[list[str], float]:
    started = time.monotonic()
    proc = subprocess.run(
        ["bash", "scripts/setup.sh"], cwd=checkout, env=env, capture_output=True, text=True, timeout=1200, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.splitlines(), time.monotonic() - started


def _check(checkout: Path, env: dict[str, str]) -> None:
    """``argweb --help`` and a SPARQL query run from ``checkout``, with ``checkout``'s own code."""
    venv = checkout / ".venv" / "bin"
    where = subprocess.run(
        [str(venv / "python"), "-c", "import api, graphstore; print(api.__file__); print(graphstore.__file__)"],
        cwd="/",
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert [Path(p).resolve().parents[1] for p in where] == [checkout.resolve()] * 2
    help_ = subprocess.run([str(venv / "argweb"), "--help"], cwd=checkout, env=env, capture_output=True, text=True)
    assert help_.returncode == 0 and "main job" in help_.stdout.lower(), help_.stdout + help_.stderr
    for args in (
        ["rdf", "load", "ontology/argweb.ttl"],
        ["sparql", "SELECT (COUNT(*) AS ?n) WHERE { ?c a owl:Class }", "--format", "csv"],
    ):
        proc = subprocess.run(
            [str(venv / "argweb"), *args], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.split()
    assert lines[0] == "n" and int(lines[1]) > 20, proc.stdout


@pytest.mark.timeout(2400)
def test_two_clones_set_up_one_after_the_other_both_work(tmp_path: Path) -> None:
    base = base_env()
    env = clean_env()
    if "ARGWEB_BASE_ENV" in os.environ:
        env["ARGWEB_BASE_ENV"] = os.environ["ARGWEB_BASE_ENV"]
    first, second = (copy_checkout(tmp_path / name) for name in ("first", "second"))

    out_first, seconds_first = _setup(first, env)
    out_second, seconds_second = _setup(second, env)
    for out in (out_first, out_second):
        # Every step on one line; the dependencies come from the base environment, not a download.
        assert all(STEP.match(line) for line in out[:-1]) and out[-1].startswith("setup: ok (log: "), out
        assert f"setup: dependencies in {base} ... present" in out[0], out
        assert any(line.startswith("setup: environment .venv of this checkout ... created") for line in out), out
    print(f"set-up of a checkout over the present base: {seconds_first:.0f}s, {seconds_second:.0f}s")
    _check(first, env)
    _check(second, env)

    # The first one set up again (as if it had come last): the second still runs its own code.
    again, seconds_again = _setup(first, env)
    assert any(line.startswith("setup: environment .venv of this checkout ... present") for line in again), again
    print(f"set-up again, nothing to do: {seconds_again:.0f}s")
    _check(second, env)
    _check(first, env)
    # Each .venv is small: the dependencies stay in the base.
    size = sum(p.stat().st_size for p in (first / ".venv").rglob("*") if p.is_file() and not p.is_symlink())
    assert size < 5_000_000, size
