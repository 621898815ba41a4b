"""``argweb export rdf|aif``, ``argweb rdf load`` and ``argweb sparql``: the graph as RDF and AIF.

``export rdf`` streams the graph into an RDF file and loads it into the persistent Oxigraph store
under the data directory; ``rdf load`` (re)loads a file; ``sparql`` queries the store.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from api.cli_common import REPORTER, console, group, settings
from api.services import aif as aif_service
from api.services import rdf as rdf_service
from api.services import sparql as sparql_service
from api.services.graph import Graph
from ontology.errors import ApiError

TABLE = "table"


def register(app: typer.Typer) -> None:
    """Add the export, RDF store and SPARQL commands to the ``argweb`` app."""
    export_app = group(app, "export", "Export the graph.")
    export_app.command("rdf")(export_rdf)
    export_app.command("aif")(export_aif)
    group(app, "rdf", "The RDF store that SPARQL queries run on.").command("load")(rdf_load)
    app.command("sparql")(sparql)


def export_rdf(
    out: Annotated[Path, typer.Argument(help="Output file (.nt, .ttl or .nq).")],
    fmt: Annotated[
        str | None, typer.Option("--format", help="nt, ttl or nq (nq: one named graph per corpus); default from OUT.")
    ] = None,
    corpus: Annotated[str | None, typer.Option(help="Export only this corpus.")] = None,
    base: Annotated[str | None, typer.Option(help="Base IRI of minted resources (default: settings.rdf_base).")] = None,
    no_load: Annotated[bool, typer.Option("--no-load", help="Do not load the export into the SPARQL store.")] = False,
    page_size: Annotated[
        int | None, typer.Option(help="Nodes read from Neo4j per transaction (default: settings.page_size).")
    ] = None,
) -> None:
    """Stream the graph (with the ontology) into an RDF file, then load it into the SPARQL store."""
    with Graph(settings()) as graph:
        rdf_service.export_rdf(
            graph, out, fmt=fmt, corpus=corpus, base=base, load=not no_load, page_size=page_size, reporter=REPORTER
        )


def export_aif(
    out: Annotated[Path, typer.Argument(help="Output .json file (--dialogue) or directory (--corpus).")],
    dialogue: Annotated[
        str | None, typer.Option("--dialogue", help="Dialogue/document id or local id (e.g. nodeset21318).")
    ] = None,
    corpus: Annotated[
        str | None, typer.Option("--corpus", help="Export every dialogue/document of this corpus (one file each).")
    ] = None,
    include_predicted: Annotated[bool, typer.Option(help="Also export predicted relations.")] = False,
) -> None:
    """AIF JSON (nodes, edges, locutions, participants) of a dialogue/document or a whole corpus."""
    with Graph(settings()) as graph:
        done = aif_service.export_aif(graph, out, dialogue=dialogue, corpus=corpus, include_predicted=include_predicted)
    if done.aif is not None:
        aif = done.aif
        console.print(f"{out}: {len(aif['nodes'])} nodes, {len(aif['edges'])} edges, {len(aif['locutions'])} locutions")
    else:
        console.print(f"{out}: {len(done.files)} AIF maps of {corpus}")


def rdf_load(
    file: Annotated[Path, typer.Argument(help="RDF file (.nt, .ttl, .nq, .trig, .rdf).")],
    fmt: Annotated[str | None, typer.Option("--format", help="Format when the extension does not tell.")] = None,
    append: Annotated[
        bool, typer.Option("--append", help="Add to the store instead of replacing its content.")
    ] = False,
) -> None:
    """Load an RDF file into the SPARQL store (replacing it unless --append; a bad file changes nothing)."""
    store_dir = settings().rdf_store_dir
    report = rdf_service.load_rdf(store_dir, file, fmt, append=append)
    console.print(f"SPARQL store {store_dir}: {report.quads:,} quads after loading {file}")


def _query_text(query: str | None, file: Path | None) -> str:
    if (query is None) == (file is None):
        raise ApiError("give the query as an argument or with --file, not both")
    if file is None:
        assert query is not None
        return query
    try:
        return file.read_text(encoding="utf-8")
    except OSError as e:
        raise ApiError(f"{file}: cannot read the query: {e.strerror}") from e


def sparql(
    query: Annotated[str | None, typer.Argument(help="SPARQL query text (or use --file).")] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", help="Read the query from a file.")] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="table, or W3C json/csv/tsv/xml for SELECT and ASK; nt/ttl for CONSTRUCT and DESCRIBE.",
        ),
    ] = TABLE,
    store_dir: Annotated[Path | None, typer.Option("--store", help="Oxigraph store (default: settings).")] = None,
) -> None:
    """Run a read-only SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE) on the RDF store.

    The prefixes aw:, aif:, sciarg:, marg:, molweni:, stac:, cdep:, qt30:, rdf:, rdfs:, owl: and
    xsd: are predeclared. Updates are refused.
    """
    if fmt != TABLE and fmt not in sparql_service.SERIALIZED_FORMATS:
        raise ApiError(f"--format must be one of {TABLE}, {', '.join(sparql_service.SERIALIZED_FORMATS)}, not {fmt!r}")
    text = _query_text(query, file)
    answer = sparql_service.query(store_dir or settings().rdf_store_dir, text, None if fmt == TABLE else fmt)
    if answer.body is not None:
        body = answer.body
        # A final newline keeps the shell prompt off the last line; JSON/CSV readers ignore it.
        sys.stdout.buffer.write(body if body.endswith(b"\n") or fmt == TABLE else body + b"\n")
        sys.stdout.buffer.flush()
    elif answer.boolean is not None:
        typer.echo("true" if answer.boolean else "false")
    else:
        table = Table(show_lines=False)
        for name in answer.variables:
            table.add_column(name)
        for row in answer.rows:
            table.add_row(*(sparql_service.compact(value) for value in row))
        Console().print(table)
        typer.echo(f"{len(answer.rows)} row(s)")
