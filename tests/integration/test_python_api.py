"""The Python API (docs/python.md, run as a doctest) and the renamed nouns of the CLI, on the session's Neo4j."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.settings import get_settings
from graphstore.store import GraphStore
from ontology.formats.registry import CORPORA, SAMPLES

ROOT = Path(__file__).resolve().parents[2]


def test_docs_python_md_runs(
    store: GraphStore, cli_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in cli_env.items():
        monkeypatch.setenv(key, value)
    get_settings.cache_clear()
    try:
        result = doctest.testfile(
            str(ROOT / "docs" / "python.md"),
            module_relative=False,
            globs={"rdf_file": tmp_path / "export.nt"},
            optionflags=doctest.ELLIPSIS,
            raise_on_error=False,
        )
    finally:
        get_settings.cache_clear()
    assert result.attempted > 10 and result.failed == 0


def test_renamed_nouns_through_the_cli(store: GraphStore, cli_env: dict[str, str], tmp_path: Path) -> None:
    from api.cli.main import app

    runner = CliRunner()
    sample = [str(p) for p in CORPORA["molweni"].find(SAMPLES)]
    result = runner.invoke(app, ["corpus", "ingest", "molweni", *sample], env=cli_env)
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["corpus", "stats", "--json"], env=cli_env)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["corpora"]["molweni"]["summary"]["dialogues"] > 0
    # rdf export / query: the new names of `export rdf` and `sparql`.
    result = runner.invoke(app, ["rdf", "export", str(tmp_path / "g.nt")], env=cli_env)
    assert result.exit_code == 0, result.output
    ask = "ASK { ?d a aw:Dialogue }"
    result = runner.invoke(app, ["rdf", "query", ask], env=cli_env)
    assert result.exit_code == 0 and result.stdout.strip() == "true", result.output
    # predict discourse: the graph form writes a run, the file form writes the file.
    result = runner.invoke(app, ["predict", "discourse", "--corpus", "molweni", "--write", "--json"], env=cli_env)
    assert result.exit_code == 0, result.output
    run_id = json.loads(result.stdout)["run_id"]
    out = tmp_path / "parsed.json"
    result = runner.invoke(app, ["predict", "discourse", "--in", sample[0], "--out", str(out)], env=cli_env)
    assert result.exit_code == 0 and out.is_file(), result.output
    # runs list / delete: the new names of `predictions runs` and `delete predictions`.
    result = runner.invoke(app, ["runs", "list", "--json"], env=cli_env)
    (row,) = json.loads(result.stdout)
    assert row["run_id"] == run_id and row["relations"] > 0
    result = runner.invoke(app, ["runs", "delete", "--model", row["model"], "--run", run_id], env=cli_env)
    assert result.exit_code == 0 and f"deleted {row['relations']} predicted relations" in result.stdout
    assert json.loads(runner.invoke(app, ["runs", "list", "--json"], env=cli_env).stdout) == []
    result = runner.invoke(app, ["corpus", "delete", "molweni"], env=cli_env)
    assert result.exit_code == 0 and "deleted corpus molweni" in result.stdout
