"""``argweb questions``: the competency questions, answered in Cypher and in SPARQL."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from api.cli.options import JsonFlag, show
from api.cli_common import settings
from api.services import competency
from api.services.graph import Graph
from ontology.errors import OntologyError


def register(app: typer.Typer) -> None:
    """Add ``questions`` to the ``argweb`` app."""
    app.command("questions")(questions)


def questions(
    names: Annotated[list[str] | None, typer.Argument(help="Question names (default: every question).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Answer the competency questions in Cypher on Neo4j and in SPARQL on the RDF store (they must agree).

    Each question ships in both languages with argweb (its files: ontology/cq/NN-name.cypher and
    .rq, also runnable with `argweb sparql --file`). Fails when a question's two answers differ.
    """
    with Graph(settings()) as graph:
        answers = competency.answer(graph, names or ())
    result = [
        {
            "name": a.question.name,
            "title": a.question.title,
            "columns": a.columns,
            "rows": [list(row) for row in a.sparql],
            "agree": a.agree,
        }
        for a in answers
    ]
    show(result, as_json, _print)
    differ = [a.question.name for a in answers if not a.agree]
    if differ:
        raise OntologyError(f"Cypher and SPARQL answers differ for {', '.join(differ)}")


def _print(result: list[dict[str, object]]) -> None:
    table = Table(title="competency questions (Cypher on Neo4j = SPARQL on the RDF store)")
    table.add_column("question")
    table.add_column("title")
    table.add_column("rows", justify="right")
    table.add_column("agree")
    for row in result:
        rows = row["rows"]
        assert isinstance(rows, list)
        table.add_row(str(row["name"]), str(row["title"]), str(len(rows)), "yes" if row["agree"] else "NO")
    Console().print(table)
