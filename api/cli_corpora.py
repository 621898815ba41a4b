"""CLI commands for the M-Arg, Sci-Arg and ContextDeP loaders and agreement (registered by ``api.cli``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from api.cli_common import group

PathsArg = Annotated[list[Path], typer.Argument(help="Files or directories.")]


def _print_agreement(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    def fmt(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    console = Console()
    if result["corpus"] == "m-arg":
        table = Table(title=f"M-Arg agreement (tainted judgements {'in' if result['include_tainted'] else 'out'})")
        for col in ("min trust", "min conf.", "Krippendorff's alpha", "annotators", "annotations", "support", "attack"):
            table.add_column(col, justify="right")
        rows = [result["overall"], *result["filters"]]
        for row in rows:
            table.add_row(
                "-" if row["min_trust"] is None else str(row["min_trust"]),
                "-" if row["min_confidence"] is None else str(row["min_confidence"]),
                fmt(row["alpha"]),
                str(row["annotators"]),
                str(row["annotations"]),
                str(row["labels"].get("Support", 0)),
                str(row["labels"].get("Attack", 0)),
            )
        console.print(table)
        return
    table = Table(title=f"{result['corpus']} agreement")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key, value in result.items():
        if key == "corpus":
            continue
        shown = fmt(value) if isinstance(value, float) or value is None else str(value)
        table.add_row(key, shown)
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``argweb`` app."""
    ingest_app = group(app, "ingest", "Load a corpus into the graph.")

    @ingest_app.command("m-arg")
    def ingest_marg(paths: PathsArg) -> None:
        """M-Arg CSVs: sentence files, aeneas timestamp files and pair files (aggregated, full, reference, gold)."""
        from api.cli import _ingest

        _ingest("m-arg", paths)

    @ingest_app.command("sciarg")
    def ingest_sciarg(paths: PathsArg) -> None:
        """Sci-Arg brat papers: a directory (e.g. compiled_corpus/) or .ann files with their .txt."""
        from api.cli import _ingest

        _ingest("sciarg", paths)

    @ingest_app.command("contextdep")
    def ingest_contextdep(paths: PathsArg) -> None:
        """ContextDeP: *_TOKEN-annotations.tsv (UTF-8) plus per-annotator ANON_<split>.tsv (UTF-16) files."""
        from api.cli import _ingest

        _ingest("contextdep", paths)

    @app.command("agreement")
    def agreement(
        corpus: Annotated[str, typer.Argument(help="Corpus id: m-arg or contextdep (any corpus with judgements).")],
        min_trust: Annotated[
            float | None, typer.Option("--min-trust", help="Keep judgements of annotators with trust >= X.")
        ] = None,
        min_confidence: Annotated[
            float | None, typer.Option("--min-confidence", help="Keep judgements with self-confidence >= Y.")
        ] = None,
        include_tainted: Annotated[
            bool, typer.Option("--include-tainted", help="Keep judgements marked tainted (M-Arg).")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Krippendorff's alpha of the stored judgements (M-Arg: Table-2 grid of trust/confidence filters)."""
        from api.cli import _fail, open_driver
        from api.settings import Settings
        from gnn import agreement as ag
        from graphstore.judgements import judgement_rows
        from graphstore.store import GraphStore
        from ontology.errors import ApiError, ArgwebError

        settings = Settings()
        try:
            if corpus == "contextdep" and (min_trust is not None or min_confidence is not None):
                raise ApiError("ContextDeP judgements carry no trust or confidence; drop --min-trust/--min-confidence")
            with open_driver(settings) as driver:
                rows = judgement_rows(GraphStore(driver, settings.neo4j_database), corpus)
            if not rows:
                raise ApiError(f"no judgements stored for corpus {corpus!r}; ingest its per-annotator files first")
            judgements = ag.judgements_from_rows(rows)
            if corpus == "contextdep":
                result = ag.contextdep_agreement(judgements)
            elif corpus == "m-arg":
                result = ag.marg_agreement(judgements, min_trust, min_confidence, include_tainted)
            else:
                row = ag.agreement_row(judgements, min_trust, min_confidence, include_tainted)
                result = {"corpus": corpus, **row.as_dict()}
        except ArgwebError as e:
            _fail(e)
        if as_json:
            typer.echo(json.dumps(result, indent=2, sort_keys=True))
        else:
            _print_agreement(result)
