"""Pieces shared by the CLI modules: sub-command groups, settings, progress and the error wrapper."""

from __future__ import annotations

import logging
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from api.errors import no_space, outcome
from api.progress import ConsoleReporter
from api.settings import Settings, get_settings
from ontology.errors import ArgwebError

console = Console(stderr=True)


def group(app: typer.Typer, name: str, help_text: str) -> typer.Typer:
    """The sub-app ``name`` of ``app``, created when no other module registered it yet."""
    for registered in app.registered_groups:
        if registered.name == name and registered.typer_instance is not None:
            return registered.typer_instance
    sub = typer.Typer(help=help_text, no_args_is_help=True)
    app.add_typer(sub, name=name)
    return sub


REPORTER = ConsoleReporter(console)


def settings(**overrides: Any) -> Settings:
    """The settings of this command, with the options given on the command line (``None``: not given)."""
    return get_settings().with_overrides(**overrides)


class ArgwebGroup(TyperGroup):
    """The root command group: reads the settings afresh per command and reports argweb errors.

    Every :class:`~ontology.errors.ArgwebError` a command lets through, and a full disk whatever
    raised it, is printed as one line and mapped to its exit code by :func:`api.errors.outcome` (2:
    the caller's mistake, 1: failure).
    """

    def list_commands(self, ctx: Any) -> list[str]:
        """The groups (the nouns) first, then the commands that stand alone, each in registration order."""
        names = super().list_commands(ctx)
        return sorted(names, key=lambda name: not hasattr(self.commands[name], "list_commands"))

    # ``Any``: the context class is typer's vendored click, which has no public name.
    def invoke(self, ctx: Any) -> Any:
        """Run the command chain, turning argweb errors into a message and an exit code."""
        get_settings.cache_clear()
        # The driver logs each retry of a failed transaction ("Transaction failed and will be
        # retried"); a command reports the outcome itself, in one line.
        neo4j_log = logging.getLogger("neo4j")
        if not neo4j_log.handlers:
            neo4j_log.addHandler(logging.NullHandler())
            neo4j_log.propagate = False
        try:
            return super().invoke(ctx)
        except (ArgwebError, OSError) as e:
            # An OSError is reported as such only for a full disk; any other stays a traceback (a bug).
            if isinstance(e, OSError) and not no_space(e):
                raise
            result = outcome(e)
            # One line however narrow the terminal: a wrapped message reads as several errors.
            console.print(f"[bold red]error:[/] {escape(result.message)}", highlight=False, soft_wrap=True)
            raise typer.Exit(code=result.exit_code) from e
