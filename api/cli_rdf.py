"""CLI commands for RDF export, the Oxigraph store and SPARQL (registered by ``api.cli``)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``argweb`` app."""
