"""CLI commands for the M-Arg, Sci-Arg and ContextDeP loaders and agreement (registered by ``api.cli``)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``argweb`` app."""
