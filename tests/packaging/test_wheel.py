"""The built wheel, installed into a fresh environment, runs the main job on its samples and answers
the competency questions, from a directory that is not a checkout.

The fresh environment is a new virtual environment that sees the base environment's third-party
packages (torch is not downloaded again) and holds argweb from the wheel only; ``pip check``
confirms that the wheel's declared dependencies are met by them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from graphstore.runtime import free_port
from tests.packaging.support import base_env, clean_env, copy_checkout


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"{args}:\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
    return proc


@pytest.mark.timeout(3600)
def test_the_installed_wheel_runs_the_main_job_and_answers_the_competency_questions(tmp_path: Path) -> None:
    base = base_env()
    env = clean_env()
    source = copy_checkout(tmp_path / "source")
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), "."],
        source,
        env,
    )
    (wheel,) = (tmp_path / "dist").glob("argweb-*.whl")

    fresh = tmp_path / "fresh"
    _run([str(base / "bin" / "python"), "-m", "venv", "--without-pip", str(fresh)], tmp_path, env)
    site = Path(sysconfig.get_paths(vars={"base": str(fresh), "platbase": str(fresh)})["purelib"])
    base_site = sysconfig.get_paths(vars={"base": str(base), "platbase": str(base)})["purelib"]
    (site / "_argweb_base.pth").write_text(f"import site; site.addsitedir({base_site!r})\n", encoding="utf-8")
    python, argweb = str(fresh / "bin" / "python"), str(fresh / "bin" / "argweb")
    _run([python, "-m", "pip", "install", "--no-deps", str(wheel)], tmp_path, env)
    _run([python, "-m", "pip", "check"], tmp_path, env)

    work = tmp_path / "work"  # not a checkout: no ./corpora, no ../shared/corpora
    work.mkdir()
    where = _run([python, "-c", "import api, ontology; print(api.__file__); print(ontology.__file__)"], work, env)
    assert all(Path(p).is_relative_to(site) for p in where.stdout.split()), where.stdout
    run_env = clean_env(
        ARGWEB_DATA_DIR=str(tmp_path / "data"),
        ARGWEB_NEO4J_PORT=str(free_port()),
        ARGWEB_NEO4J_HEAP="1g",
        ARGWEB_API_PORT=str(free_port()),
    )
    try:
        done = _run([argweb, "run"], work, run_env, timeout=2400)
        out = done.stdout + done.stderr
        assert f"corpora {site / 'graphstore' / 'samples'}" in " ".join(out.split()), out
        for corpus in ("molweni", "stac", "qt30", "m-arg", "sciarg", "contextdep"):
            assert corpus in out
        assert "FAILED" not in out and "Warning" not in out, out
        # The RDF export is removed once the SPARQL store holds it.
        assert not (tmp_path / "data" / "export.nt").exists() and (tmp_path / "data" / "oxigraph").is_dir()

        answers = json.loads(_run([argweb, "questions", "--json"], work, run_env).stdout)
        assert len(answers) >= 8 and all(a["agree"] for a in answers), answers
        assert sum(bool(a["rows"]) for a in answers) >= 8, answers
        shipped = _run(
            [argweb, "sparql", "--file", str(site / "ontology" / "cq" / "05-support-attack-by-type.rq")], work, run_env
        )
        assert "row(s)" in shipped.stdout
    finally:
        subprocess.run([argweb, "serve", "--stop"], cwd=work, env=run_env, capture_output=True, timeout=120)
        subprocess.run([argweb, "db", "stop"], cwd=work, env=run_env, capture_output=True, timeout=300)
