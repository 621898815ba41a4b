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
    tasks,
)
from api.cli.grammar import build


def build_app() -> tuple[typer.Typer, dict[str, str]]:
    """The ``argweb`` app and its aliases, from the modules' commands and the task registry as it is now.

    Each module registers its commands under their old names; the grammar places them
    (:mod:`api.cli.grammar`); every task on the contract gets its commands from :mod:`api.cli.tasks`.
    """
    staging = typer.Typer()
    for module in (
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
        tasks,
        paraphrase,  # after tasks: its commands keep their own flags
        components,
        semantic,
        mine,
    ):
        module.register(staging)
    return build(staging)


app, ALIASES = build_app()


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
