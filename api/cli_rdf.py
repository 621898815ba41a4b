"""CLI commands for RDF export, the Oxigraph store and SPARQL (registered by ``api.cli``).

``argweb export rdf OUT`` streams the graph into an RDF file and loads it into the persistent
Oxigraph store under the data directory; ``argweb rdf load FILE`` (re)loads a file; ``argweb
sparql`` queries the store. ``api.cli`` is imported inside the commands (it imports this module).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from api.cli_common import group, progress_bar

RDF_FORMATS = ("nt", "ttl", "nq")
QUERY_FORMATS = ("table", "json", "csv", "tsv", "xml", "nt", "ttl")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``argweb`` app."""
    export_app = group(app, "export", "Export the graph.")
    rdf_app = group(app, "rdf", "The RDF store that SPARQL queries run on.")
    export_app.command("rdf")(export_rdf)
    rdf_app.command("load")(rdf_load)
    app.command("sparql")(sparql)


def _rdf_format(out: Path, fmt: str | None) -> str:
    from ontology.errors import ApiError

    if fmt is None:
        suffix = out.suffix.lower().lstrip(".")
        return suffix if suffix in RDF_FORMATS else "nt"
    if fmt not in RDF_FORMATS:
        raise ApiError(f"--format must be one of {', '.join(RDF_FORMATS)}, not {fmt!r}")
    return fmt


def export_rdf(
    out: Annotated[Path, typer.Argument(help="Output file (.nt, .ttl or .nq).")],
    fmt: Annotated[
        str | None, typer.Option("--format", help="nt, ttl or nq (nq: one named graph per corpus); default from OUT.")
    ] = None,
    corpus: Annotated[str | None, typer.Option(help="Export only this corpus.")] = None,
    base: Annotated[str | None, typer.Option(help="Base IRI of minted resources (default: settings.rdf_base).")] = None,
    no_load: Annotated[bool, typer.Option("--no-load", help="Do not load the export into the SPARQL store.")] = False,
    page_size: Annotated[int, typer.Option(help="Nodes read from Neo4j per transaction.")] = 2000,
) -> None:
    """Stream the graph (with the ontology) into an RDF file, then load it into the SPARQL store."""

    from api.cli import _fail, console, open_driver
    from api.settings import Settings
    from graphstore.export import GraphReader
    from ontology.errors import ArgwebError
    from ontology.rdf import RdfMapper, write_export
    from ontology.sparql import load_store

    settings = Settings()
    try:
        rdf_format = _rdf_format(out, fmt)
        mapper = RdfMapper(base or settings.rdf_base)
        with open_driver(settings) as driver:
            reader = GraphReader(driver, settings.neo4j_database, page_size=page_size, corpus=corpus)
            size = reader.size()
            if corpus is not None and size.nodes == 0:
                console.print(f"[yellow]warning:[/] corpus {corpus!r} has no nodes in the graph")
            with progress_bar("export") as bar:
                task = bar.add_task("export", total=size.nodes + size.relationships)
                report = write_export(
                    out,
                    reader.nodes(),
                    reader.relationships(),
                    fmt=rdf_format,
                    mapper=mapper,
                    progress=lambda n: bar.advance(task, n),
                )
        console.print(
            f"{out}: {report.triples:,} triples ({report.nodes:,} nodes, {report.relationships:,} relationships, "
            f"{report.ontology_triples:,} ontology triples) in {report.seconds:.1f}s "
            f"({report.triples_per_second:,.0f} triples/s)"
        )
        if not no_load:
            loaded = load_store(settings.rdf_store_dir, out, rdf_format)
            console.print(
                f"SPARQL store {settings.rdf_store_dir}: {loaded.quads:,} quads loaded in {loaded.seconds:.1f}s"
            )
    except ArgwebError as e:
        _fail(e)


def rdf_load(
    file: Annotated[Path, typer.Argument(help="RDF file (.nt, .ttl, .nq, .trig, .rdf).")],
    fmt: Annotated[str | None, typer.Option("--format", help="Format when the extension does not tell.")] = None,
    append: Annotated[
        bool, typer.Option("--append", help="Add to the store instead of replacing its content.")
    ] = False,
) -> None:
    """Load an RDF file into the SPARQL store (replacing it unless --append; a bad file changes nothing)."""
    from api.cli import _fail, console
    from api.settings import Settings
    from ontology.errors import ArgwebError
    from ontology.sparql import load_store

    settings = Settings()
    try:
        report = load_store(settings.rdf_store_dir, file, fmt, append=append)
    except ArgwebError as e:
        _fail(e)
    console.print(f"SPARQL store {settings.rdf_store_dir}: {report.quads:,} quads after loading {file}")


def _compact(value: Any) -> str:
    from ontology.rdf import PREFIXES

    if value is None:
        return ""
    text = str(value)
    for prefix, iri in PREFIXES.items():
        if text.startswith(iri) and len(text) > len(iri):
            return f"{prefix}:{text[len(iri) :]}"
    return text


def sparql(
    query: Annotated[str | None, typer.Argument(help="SPARQL query text (or use --file).")] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", help="Read the query from a file.")] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="table, or W3C json/csv/tsv/xml for SELECT and ASK; nt/ttl for CONSTRUCT and DESCRIBE.",
        ),
    ] = "table",
    store_dir: Annotated[Path | None, typer.Option("--store", help="Oxigraph store (default: settings).")] = None,
) -> None:
    """Run a read-only SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE) on the RDF store.

    The prefixes aw:, aif:, sciarg:, marg:, molweni:, stac:, cdep:, qt30:, rdf:, rdfs:, owl: and
    xsd: are predeclared. Updates are refused.
    """
    import pyoxigraph as ox
    from rich.console import Console
    from rich.table import Table

    from api.cli import _fail
    from api.settings import Settings
    from ontology.errors import ApiError, ArgwebError
    from ontology.sparql import SparqlStore, python_value, serialize_result

    try:
        if fmt not in QUERY_FORMATS:
            raise ApiError(f"--format must be one of {', '.join(QUERY_FORMATS)}, not {fmt!r}")
        if (query is None) == (file is None):
            raise ApiError("give the query as an argument or with --file, not both")
        if file is not None:
            try:
                text = file.read_text(encoding="utf-8")
            except OSError as e:
                raise ApiError(f"{file}: cannot read the query: {e.strerror}") from e
        else:
            assert query is not None
            text = query
        with SparqlStore(store_dir or Settings().rdf_store_dir, read_only=True) as store:
            result = store.query(text)
            if fmt != "table":
                body = serialize_result(result, fmt)
                # A final newline keeps the shell prompt off the last line; JSON/CSV readers ignore it.
                sys.stdout.buffer.write(body if body.endswith(b"\n") else body + b"\n")
                sys.stdout.buffer.flush()
                return
            if isinstance(result, ox.QueryBoolean):
                typer.echo("true" if bool(result) else "false")
            elif isinstance(result, ox.QueryTriples):
                sys.stdout.buffer.write(serialize_result(result, "ttl"))
            else:
                names = [v.value for v in result.variables]
                table = Table(show_lines=False)
                for name in names:
                    table.add_column(name)
                count = 0
                for solution in result:
                    table.add_row(*(_compact(python_value(solution[name])) for name in names))
                    count += 1
                Console().print(table)
                typer.echo(f"{count} row(s)")
    except ArgwebError as e:
        _fail(e)
