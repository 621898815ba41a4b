"""Assembles the ``argweb`` command line from its modules (entry point of the ``argweb`` script)."""

from __future__ import annotations

import typer

from api.cli import (
    analysis,
    bam,
    competency,
    components,
    corpora,
    db,
    discourse,
    fetch,
    ingest,
    mine,
    pairs,
    paraphrase,
    predictions,
    rdf,
    relations,
    semantic,
    serve,
)
from api.cli.grammar import build

# Each module registers its commands under their old names; the grammar places them (api.cli.grammar).
_staging = typer.Typer()
for _module in (
    db,
    ingest,
    corpora,
    predictions,
    rdf,
    competency,
    analysis,
    fetch,
    serve,
    discourse,
    relations,
    bam,
    paraphrase,
    pairs,
    components,
    semantic,
    mine,
):
    _module.register(_staging)
app, ALIASES = build(_staging)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
