"""RDF export of the graph and the Oxigraph store SPARQL runs on."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from api.services.graph import Graph
from api.settings import Settings
from graphstore.export import GraphReader
from ontology.progress import SILENT, Reporter
from ontology.rdf import ExportReport, RdfMapper, export_format, write_export
from ontology.sparql import LoadReport, load_store
from ontology.sparql_remote import RemoteStore, push
from ontology.views import EdgeView


@dataclass(frozen=True)
class RdfExport:
    """An export and, unless skipped, its load into the SPARQL store."""

    out: Path
    export: ExportReport
    loaded: LoadReport | None
    store_dir: Path


def export_rdf(
    graph: Graph,
    out: Path,
    *,
    fmt: str | None = None,
    corpus: str | None = None,
    base: str | None = None,
    load: bool = True,
    page_size: int | None = None,
    reporter: Reporter = SILENT,
) -> RdfExport:
    """Stream the graph (with the ontology) into ``out``, then load it into the SPARQL store.

    Args:
        graph: The graph to read.
        out: Output file.
        fmt: ``nt``, ``ttl`` or ``nq`` (one named graph per corpus); default from ``out``.
        corpus: Export only this corpus.
        base: Base IRI of minted resources (default: the settings).
        load: Replace the SPARQL store's content with the export.
        page_size: Nodes per read transaction (default: the settings).
        reporter: Receives the progress and a warning for an empty corpus.

    Raises:
        ApiError: Bad format. OntologyError: Bad base IRI. CorpusIncompleteError: The corpus (or, for
        the whole graph, any corpus) is still marked ``loading``, or a write run started while the
        export read the graph (nothing written). GraphStoreError: Neo4j failed.
    """
    settings = graph.settings
    chosen = export_format(out, fmt)
    mapper = RdfMapper(base or settings.rdf_base)
    store = graph.store()
    # One state of the graph: no corpus half-loaded when the export starts (it would be exported
    # as if whole), and no write run started before it ends (pages are read in transactions of
    # their own, so a write in between would be exported half-done): checked through the write
    # turns, before the file is renamed into place.
    before = store.write_state()
    store.require_complete(corpus)
    reader = GraphReader(
        graph.driver(), settings.neo4j_database, page_size=page_size or settings.page_size, corpus=corpus
    )
    size = reader.size()
    if corpus is not None and size.nodes == 0:
        reporter.warn(f"warning: corpus {corpus!r} has no nodes in the graph")

    def relationships() -> Iterator[EdgeView]:
        yield from reader.relationships()
        store.require_unchanged(before, "the RDF export")

    with reporter.progress("export", size.nodes + size.relationships) as advance:
        report = write_export(out, reader.nodes(), relationships(), fmt=chosen, mapper=mapper, progress=advance)
    reporter.log(
        f"{out}: {report.triples:,} triples ({report.nodes:,} nodes, {report.relationships:,} relationships, "
        f"{report.ontology_triples:,} ontology triples) in {report.seconds:.1f}s "
        f"({report.triples_per_second:,.0f} triples/s)"
    )
    loaded = None
    if load:
        loaded = load_rdf(settings, out, chosen)
        reporter.log(f"SPARQL store {store_name(settings)}: {loaded.quads:,} quads loaded in {loaded.seconds:.1f}s")
    return RdfExport(out, report, loaded, settings.rdf_store_dir)


def store_name(settings: Settings) -> str:
    """Where the export goes, for messages: the SPARQL server's Graph Store endpoint, or the embedded store."""
    return settings.sparql_store_endpoint or settings.sparql_endpoint or str(settings.rdf_store_dir)


def load_rdf(settings: Settings, file: Path, fmt: str | None = None, *, append: bool = False) -> LoadReport:
    """Load an RDF file into the SPARQL store SPARQL queries run on (replacing it unless ``append``).

    That is the configured SPARQL server (its Graph Store endpoint, default graph) when one is set,
    else the embedded Oxigraph store. A bad file changes nothing in either.

    Raises:
        ApiError: A SPARQL server is configured without a Graph Store endpoint to load it through.
        NotFoundError: No such file. ClientError: Malformed file or unknown format.
        DatabaseUnavailableError: The server is unreachable or refused the data.
    """
    if settings.sparql_endpoint or settings.sparql_store_endpoint:
        query_url = settings.sparql_endpoint or ""
        remote = RemoteStore(query_url, settings.sparql_store_endpoint)
        return push(remote, file, fmt, append=append, timeout=settings.sparql_load_timeout)
    return load_store(settings.rdf_store_dir, file, fmt, append=append)
