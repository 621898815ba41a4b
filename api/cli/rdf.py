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

from api.cli.options import CorpusOpt, DialogueOpt
from api.cli_common import REPORTER, console, group, settings
from api.services import aif as aif_service
from api.services import query as query_service
from api.services import rdf as rdf_service
from api.services.graph import Graph
from api.services.query import sparql_store
from ontology.errors import ApiError, QueryLimitError
from ontology.sparql import compact
from ontology.sparql_protocol import check_sparql
from ontology.sparql_run import SparqlRun

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
    dialogue: DialogueOpt = None,
    corpus: CorpusOpt = None,
    include_predicted: Annotated[bool, typer.Option(help="Also export predicted relations.")] = False,
    fmt: Annotated[
        str,
        typer.Option(
            "--format", help="aif (AIFdb JSON), xaif (oAMF: integer ids, text) or ova (OVA3: with the node layout)."
        ),
    ] = "aif",
) -> None:
    """The map (nodes, edges, locutions, participants) of a dialogue/document or a corpus: AIF, xAIF or OVA3."""
    with Graph(settings()) as graph:
        done = aif_service.export_aif(
            graph, out, dialogue=dialogue, corpus=corpus, include_predicted=include_predicted, fmt=fmt
        )
    if done.aif is not None:
        aif = done.aif.get("AIF", done.aif)
        console.print(f"{out}: {len(aif['nodes'])} nodes, {len(aif['edges'])} edges, {len(aif['locutions'])} locutions")
    else:
        console.print(f"{out}: {len(done.files)} {fmt} maps of {corpus}")


def rdf_load(
    file: Annotated[Path, typer.Argument(help="RDF file (.nt, .ttl, .nq, .trig, .rdf).")],
    fmt: Annotated[str | None, typer.Option("--format", help="Format when the extension does not tell.")] = None,
    append: Annotated[
        bool, typer.Option("--append", help="Add to the store instead of replacing its content.")
    ] = False,
) -> None:
    """Load an RDF file into the SPARQL store (replacing it unless --append; a bad file changes nothing)."""
    cfg = settings()
    report = rdf_service.load_rdf(cfg, file, fmt, append=append)
    what = "triples loaded from" if cfg.sparql_endpoint or cfg.sparql_store_endpoint else "quads after loading"
    console.print(f"SPARQL store {rdf_service.store_name(cfg)}: {report.quads:,} {what} {file}")


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
    except UnicodeDecodeError as e:
        raise ApiError(f"{file}: byte {e.start}: not UTF-8 ({e.reason}); save the query as UTF-8") from e


def _term(value: str) -> str:
    """A term of a SPARQL TSV result as the table shows it (IRIs with known prefixes, bare literals)."""
    if value.startswith("<") and value.endswith(">"):
        return compact(value[1:-1])
    if value.startswith('"'):
        end = value.rfind('"')
        text = value[1:end] if end > 0 else value
        return text.replace('\\"', '"').replace("\\t", "\t").replace("\\n", "\n").replace("\\\\", "\\")
    return value


def sparql(
    query: Annotated[str | None, typer.Argument(help="SPARQL query text (or use --file).")] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", help="Read the query from a file.")] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="table, or W3C json/csv/tsv/xml for SELECT and ASK; nt/ttl/jsonld for CONSTRUCT and DESCRIBE.",
        ),
    ] = TABLE,
    store_dir: Annotated[
        Path | None,
        typer.Option("--store", help="An embedded Oxigraph store (default: the settings' SPARQL server or store)."),
    ] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Seconds before the query is stopped (default: settings).")
    ] = None,
    max_rows: Annotated[int, typer.Option("--max-rows", help="Rows the table shows (the rest is counted).")] = 1000,
) -> None:
    """Run a read-only SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE) on the RDF store.

    The prefixes aw:, aif:, sciarg:, marg:, molweni:, stac:, cdep:, qt30:, rdf:, rdfs:, owl: and
    xsd: are predeclared. Updates are refused, and so is SERVICE unless ARGWEB_ALLOW_SPARQL_SERVICE
    is set. The query runs under a time limit (ARGWEB_SPARQL_TIMEOUT or --timeout) and a memory cap,
    and its result is streamed: nothing is held in memory, whatever its size.
    """
    cfg = settings()
    text = _query_text(query, file)
    form = check_sparql(text, cfg.allow_sparql_service)
    graph_form = form in ("CONSTRUCT", "DESCRIBE")
    wire = fmt if fmt != TABLE else ("ttl" if graph_form else "tsv" if form == "SELECT" else "json")
    run = query_service.run_sparql(
        store_dir or sparql_store(cfg),
        text,
        fmt=wire,
        timeout=timeout if timeout is not None else cfg.sparql_timeout,
        memory_mb=cfg.sparql_memory_mb,
        allow_service=cfg.allow_sparql_service,
        max_workers=cfg.sparql_max_workers,
    )
    out = sys.stdout.buffer
    if fmt != TABLE or graph_form:
        last = b""
        for chunk in run.chunks:
            out.write(chunk)
            last = chunk or last
        # A final newline keeps the shell prompt off the last line; JSON/CSV readers ignore it.
        if last and not last.endswith(b"\n"):
            out.write(b"\n")
        out.flush()
        _check_cut(run)
        return
    if form == "ASK":
        typer.echo("true" if b"true" in b"".join(run.chunks) else "false")
        return
    table = Table(show_lines=False)
    count = 0
    pending = b""
    header: list[str] | None = None
    for chunk in run.chunks:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            cells = line.decode("utf-8").split("\t")
            if header is None:
                header = [c.lstrip("?$") for c in cells]
                for name in header:
                    table.add_column(name)
                continue
            if count < max_rows:
                table.add_row(*(_term(c) for c in cells))
            count += 1
    if pending.strip() and header is not None:
        if count < max_rows:
            table.add_row(*(_term(c) for c in pending.decode("utf-8").split("\t")))
        count += 1
    Console().print(table)
    more = f" ({count - max_rows} not shown; use --format csv for all)" if count > max_rows else ""
    typer.echo(f"{count} row(s){more}")
    _check_cut(run)


def _check_cut(run: SparqlRun) -> None:
    if run.cut:
        raise QueryLimitError("SPARQL result cut by the time limit: the output above is incomplete")
