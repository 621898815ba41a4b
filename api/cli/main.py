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
    paraphrase,
    predictions,
    rdf,
    relations,
    semantic,
    serve,
)
from api.cli_common import ArgwebGroup

app = typer.Typer(cls=ArgwebGroup, help="argweb: the Argument Web knowledge backend.", no_args_is_help=True)
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
    components,
    semantic,
    mine,
):
    _module.register(app)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
