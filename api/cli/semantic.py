"""``argweb embed``, ``argweb search`` and ``argweb link --across-corpora``: the semantic layer."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from api.cli_common import REPORTER, console, settings
from api.services.graph import Graph
from ontology.terms import Prop


def register(app: typer.Typer) -> None:
    """Add ``embed``, ``search`` and ``link`` to the ``argweb`` app."""
    app.command("embed")(embed)
    app.command("search")(search)
    app.command("link")(link)


def embed(
    corpus: Annotated[str | None, typer.Option(help="Only this corpus.")] = None,
    status: Annotated[bool, typer.Option("--status", help="Show what is embedded; change nothing.")] = False,
    remove: Annotated[
        bool, typer.Option("--remove", help="Remove the embeddings (and, for all, the indexes).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Embed locutions and propositions into Neo4j vector indexes (only new or changed texts)."""
    from api.services import semantic

    s = settings()
    with Graph(s) as graph:
        if status:
            typer.echo(json.dumps(semantic.embedding_status(graph).as_dict(), indent=2, sort_keys=True, default=str))
            return
        if remove:
            semantic.remove_embeddings(graph, corpus)
            typer.echo(f"removed the embeddings of {corpus or 'every corpus'}")
            return
        report = semantic.embed_graph(graph, s, corpus, reporter=REPORTER)
    if as_json:
        typer.echo(json.dumps(report.as_dict(), indent=2, sort_keys=True))
        return
    for label, n in report.written.items():
        typer.echo(f"{label:<12} {n:>8,} embedded of {report.pending[label]:,} new or changed")
    typer.echo(
        f"model {report.model}; encode {report.encode_seconds:.1f}s, write {report.write_seconds:.1f}s, "
        f"index {report.index_seconds:.1f}s"
    )


def search(
    text: Annotated[str, typer.Argument(help="What to look for.")],
    semantic_: Annotated[
        bool, typer.Option("--semantic", help="By meaning (vector index) instead of by words (full-text index).")
    ] = False,
    corpus: Annotated[str | None, typer.Option(help="Only this corpus.")] = None,
    k: Annotated[int, typer.Option("--k", help="Number of hits.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Find locutions and propositions by words (full-text index) or by meaning (--semantic)."""
    s = settings()
    hits: list[dict[str, Any]]
    with Graph(s) as graph:
        if semantic_:
            from api.services import semantic

            hits = [
                {"id": h.id, "label": h.label, "corpus": h.corpus, "discourse": h.discourse, "text": h.text,
                 "score": round(h.score, 4)}
                for h in semantic.search(graph, s, text, k=k, corpus=corpus)
            ]  # fmt: skip
        else:
            from graphstore.browsing import BrowseService

            page = BrowseService(graph.driver(), s.neo4j_database, s.cypher_timeout).search(text, corpus, limit=k)
            hits = [
                {"id": h.node.id, "label": h.node.kind, "corpus": h.node.corpus,
                 "discourse": h.discourses[0] if h.discourses else None, "text": h.node.get(Prop.TEXT),
                 "score": round(h.score, 4)}
                for h in page.items
            ]  # fmt: skip
    if as_json:
        typer.echo(json.dumps(hits, indent=2, ensure_ascii=False))
        return
    table = Table(title=f"{'semantic' if semantic_ else 'full-text'} search: {escape(text)}")
    for col in ("score", "corpus", "label", "id", "text"):
        table.add_column(col, overflow="fold")
    for h in hits:
        table.add_row(
            f"{h['score']:.3f}",
            str(h["corpus"] or ""),
            str(h["label"]),
            str(h["id"]),
            escape(str(h["text"] or "")[:200]),
        )
    console.print(table)


def link(
    across_corpora: Annotated[
        bool, typer.Option("--across-corpora", help="Link propositions of different corpora (required).")
    ] = False,
    write: Annotated[bool, typer.Option("--write", help="Store the links as one prediction run.")] = False,
    threshold: Annotated[float, typer.Option(help="Minimum score of a link.")] = 0.5,
    k: Annotated[int, typer.Option("--k", help="Nearest propositions of other corpora per proposition.")] = 3,
    limit: Annotated[int | None, typer.Option(help="Only this many propositions (a seeded sample).")] = None,
    rephrase_cosine: Annotated[float, typer.Option(help="Cosine from which a pair is a rephrase.")] = 0.9,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Predict support/attack/rephrase links between propositions of different corpora."""
    from api.services.links import link_across_corpora
    from gnn.links import LinkOptions
    from ontology.errors import ApiError

    if not across_corpora:
        raise ApiError("argweb link needs --across-corpora (the only kind of linking there is)")
    s = settings()
    with Graph(s) as graph:
        options = LinkOptions(k=k, threshold=threshold, rephrase_cosine=rephrase_cosine, limit=limit)
        report = link_across_corpora(graph, s, options, write=write, reporter=REPORTER)
    if as_json:
        typer.echo(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
        return
    typer.echo(
        f"{report.propositions:,} propositions, {report.candidates:,} candidate pairs; "
        f"links with score >= {threshold}: "
        + (", ".join(f"{label} {n:,}" for label, n in report.counts.items()) or "none")
    )
    for pair, n in report.pairs_by_corpora.items():
        typer.echo(f"  {pair:<24} {n:>7,}")
    for x in report.sample:
        typer.echo(f"\n{x.label.value} ({x.by}, score {x.score:.3f}, cosine {x.cosine:.3f})")
        typer.echo(f"  {x.source} [{x.source_corpus}]: {x.source_text}")
        typer.echo(f"  {x.target} [{x.target_corpus}]: {x.target_text}")
    if write:
        typer.echo(f"\nrun {report.run_id}: {report.written:,} predicted relations written (model {report.model})")
