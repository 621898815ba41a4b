"""CLI commands for audio features, AIF export and corpus fetching (registered by ``api.cli``)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``argweb`` app."""
