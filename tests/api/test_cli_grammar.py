"""The command grammar (nouns then verbs), its aliases and the generated reference docs/cli.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from api.cli import grammar
from api.cli.docs import render, walk
from api.cli.main import ALIASES, app
from gnn.registry import TASKS

ROOT = Path(__file__).resolve().parents[2]
ROOT_COMMAND = typer.main.get_command(app)
EVERY_PATH = [path for path, _ in walk(ROOT_COMMAND) if path]
runner = CliRunner()


def _at(path: tuple[str, ...]) -> typer.core.TyperCommand:
    node = ROOT_COMMAND
    for name in path:
        node = node.commands[name]  # type: ignore[attr-defined]
    return node  # type: ignore[return-value]


@pytest.mark.parametrize("path", EVERY_PATH, ids=" ".join)
def test_every_command_and_alias_resolves(path: tuple[str, ...]) -> None:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output


def test_the_old_command_lines_are_aliases_of_the_same_functions() -> None:
    old_lines = {
        "ingest molweni", "delete", "stats", "parse discourse", "predict aif", "predict sciarg",
        "predict contextdep", "predict discourse", "predict relations", "train discourse", "train relations",
        "evaluate discourse", "evaluate relations", "export rdf", "export aif", "sparql", "predictions runs",
        "fetch", "report", "agreement",
    }  # fmt: skip
    for line in old_lines:
        assert _at(tuple(line.split())).callback is not None, line
    for old, new in ALIASES.items():
        if "--" in old:
            continue
        old_cmd, new_cmd = _at(tuple(old.split())), _at(tuple(new.split()))
        if new == "predict discourse":  # one command for the graph and the file form; the alias is the file form
            assert "--in" in {o for p in new_cmd.params for o in p.opts}
            continue
        # typer wraps the function; the wrapped function is the same object under both names.
        assert old_cmd.callback.__wrapped__ is new_cmd.callback.__wrapped__, old  # type: ignore[union-attr]


def test_top_level_help_lists_nouns_hides_aliases_and_names_them_in_the_epilog() -> None:
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0
    rows = [line.split()[1] for line in result.output.splitlines() if line.startswith("│ ")]
    listed = [name for name in rows if name in ROOT_COMMAND.commands]  # type: ignore[attr-defined]
    assert listed[:7] == ["corpus", "model", "predict", "runs", "rdf", "db", "features"]
    assert not {"ingest", "train", "evaluate", "parse", "export", "sparql", "predictions", "stats"} & set(listed)
    text = " ".join(result.output.split())
    assert "Aliases (older names, still accepted):" in text and "sparql = rdf query" in text
    assert "train ... = model train ..." in text and "parse discourse = predict discourse" in text


def test_group_help_describes_the_group_not_its_first_module() -> None:
    for name, text in grammar.GROUPS.items():
        result = runner.invoke(app, [*name.split(), "--help"], env={"COLUMNS": "400"})
        assert text in " ".join(result.output.split()), name


def test_model_train_and_list_come_from_the_registry() -> None:
    assert set(TASKS) <= set(_at(("model", "train")).commands)  # type: ignore[attr-defined]
    result = runner.invoke(app, ["model", "list", "--json"])
    assert result.exit_code == 0, result.output
    shipped = {row["task"]: row for row in json.loads(result.stdout) if row["shipped"]}
    assert set(shipped) == set(TASKS)
    for task, row in shipped.items():
        card = json.loads((Path(row["path"]) / "model_card.json").read_text(encoding="utf-8"))
        assert Path(row["path"]) == TASKS[task] and (row["model"], row["version"]) == (card["model"], card["version"])


def test_a_command_the_grammar_does_not_place_is_refused() -> None:
    staging = typer.Typer()
    staging.command("frobnicate")(lambda: None)
    with pytest.raises(RuntimeError, match="frobnicate"):
        grammar.build(staging)


def test_predict_discourse_file_form_needs_both_ends() -> None:
    result = runner.invoke(app, ["predict", "discourse", "--in", "x.json"])
    assert result.exit_code == 2 and "needs both --in and --out" in result.output


def test_docs_cli_md_is_the_generated_reference_of_the_whole_tree() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert text == render(app, ALIASES), "docs/cli.md is stale: python -m api.cli.docs > docs/cli.md"
    visible = [p for p in EVERY_PATH if not any(getattr(_at(p[: i + 1]), "hidden", False) for i in range(len(p)))]
    for path in visible:
        assert f"argweb {' '.join(path)}\n" in text, path
    for old in ALIASES:
        assert f"| `argweb {old}` |" in text, old
