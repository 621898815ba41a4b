"""``python -m api.cli.docs > docs/cli.md``: the command reference, written from the ``argweb`` command tree.

Every command of the tree gets a heading, its help and its options; the aliases (older names, hidden
from ``argweb --help``) get one table. A test checks that docs/cli.md is what this prints.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer

HEADER = """# argweb command line

Generated from the command tree by `python -m api.cli.docs > docs/cli.md`; do not edit by hand.

Nouns, then verbs: `argweb corpus ingest|delete|stats|fetch|report|agreement|export`,
`argweb model train|evaluate|list`, `argweb predict TASK`, `argweb runs list|delete`,
`argweb rdf export|load|query`, `argweb db start|stop|status`, and the commands that stand alone
(`run`, `serve`, `questions`, `search`, `embed`, `link`, `mine`). `argweb COMMAND --help` shows the same text.
"""


def walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command and group under ``command`` (a click command), with its path, in help order."""
    yield path, command
    if hasattr(command, "list_commands"):
        ctx = typer.Context(command)
        for name in command.list_commands(ctx):
            yield from walk(command.commands[name], (*path, name))


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _option(param: Any) -> str:
    names = ", ".join(f"`{n}`" for n in [*param.opts, *param.secondary_opts])
    if param.param_type_name == "argument":
        names = f"`{param.name.upper()}`"
    return f"| {names} | {_one_line(getattr(param, 'help', None)).replace('|', '/')} |"


def render(app: typer.Typer, aliases: dict[str, str]) -> str:
    """The markdown reference of ``app``'s visible commands and of ``aliases``."""
    root = typer.main.get_command(app)
    lines = [HEADER]
    for path, command in walk(root):
        if not path or any(getattr(c, "hidden", False) for c in _chain(root, path)):
            continue
        level = "#" * min(len(path) + 1, 4)
        lines.append(f"{level} argweb {' '.join(path)}\n")
        lines.append(_one_line(command.help) + "\n")
        params = [p for p in command.params if p.name != "help"]
        if params and not hasattr(command, "list_commands"):
            lines += ["| argument / option | meaning |", "|---|---|", *(_option(p) for p in params), ""]
    lines.append("## Aliases\n")
    lines.append("Older names, still accepted with the same flags and output (hidden from `argweb --help`).\n")
    lines += ["| alias | command |", "|---|---|"]
    lines += [f"| `argweb {old}` | `argweb {new}` |" for old, new in aliases.items()]
    return "\n".join(lines) + "\n"


def _chain(root: Any, path: tuple[str, ...]) -> Iterator[Any]:
    node = root
    for name in path:
        node = node.commands[name]
        yield node


def main() -> None:
    """Print the reference of the ``argweb`` command tree."""
    from api.cli.main import ALIASES, app

    print(render(app, ALIASES), end="")


if __name__ == "__main__":
    main()
