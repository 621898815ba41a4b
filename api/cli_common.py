"""Pieces shared by the CLI modules: sub-command groups and the progress bar."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(stderr=True)


def group(app: typer.Typer, name: str, help_text: str) -> typer.Typer:
    """The sub-app ``name`` of ``app``, created when no other module registered it yet."""
    for registered in app.registered_groups:
        if registered.name == name and registered.typer_instance is not None:
            return registered.typer_instance
    sub = typer.Typer(help=help_text, no_args_is_help=True)
    app.add_typer(sub, name=name)
    return sub


def progress_bar(title: str) -> Progress:
    """A transient progress bar on stderr with a count and the elapsed time."""
    return Progress(
        TextColumn(f"[bold]{title}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
