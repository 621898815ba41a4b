"""``argweb stats|delete|run``: the corpora in the graph as a whole."""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from api.cli.options import JsonFlag, show
from api.cli.predictions import PREDICTIONS, delete_predictions
from api.cli_common import REPORTER, console, settings
from api.services import corpora, mainjob
from api.services.graph import Graph
from ontology.errors import ApiError


def register(app: typer.Typer) -> None:
    """Add ``stats``, ``delete`` and ``run`` to the ``argweb`` app."""
    app.command("stats")(stats)
    app.command("delete")(delete)
    app.command("run")(run)


def print_stats(result: dict[str, Any]) -> None:
    """The per-corpus summary and the relations-by-type tables."""
    table = Table(title="argweb graph")
    for col in ("corpus", "status", "dialogues", "documents", "locutions", "propositions", "relations"):
        table.add_column(col, justify="right" if col not in ("corpus", "status") else "left")
    for name, entry in result["corpora"].items():
        s = entry["summary"]
        table.add_row(
            name,
            str(entry.get("status")),
            *(str(s[key]) for key in ("dialogues", "documents", "locutions", "propositions", "relations")),
        )
    Console().print(table)
    rel = Table(title="relations by type")
    rel.add_column("corpus")
    rel.add_column("type")
    rel.add_column("n", justify="right")
    for name, entry in result["corpora"].items():
        for key, n in entry["relations"].items():
            rel.add_row(name, key, str(n))
    Console().print(rel)


def stats(
    as_json: JsonFlag = False,
    predicted: Annotated[
        bool, typer.Option("--predicted", help="Count predicted relations and prediction runs too (else gold only).")
    ] = False,
) -> None:
    """Counts per label, relationship type and corpus (the corpora's gold content unless --predicted)."""
    with Graph(settings()) as graph:
        result = corpora.stats(graph, include_predicted=predicted)
    show(result, as_json, print_stats)


def delete(
    corpus: Annotated[
        str, typer.Argument(help="Corpus id (e.g. molweni, qt30, m-arg), or 'predictions' with --model.")
    ],
    model: Annotated[str | None, typer.Option(help="With 'predictions': the model whose predictions go.")] = None,
    version: Annotated[str | None, typer.Option(help="With 'predictions': only this model version.")] = None,
    run: Annotated[str | None, typer.Option(help="With 'predictions': only this prediction run (its id).")] = None,
) -> None:
    """Remove a corpus and everything in it (ingest merges, so use this before loading a smaller set).

    ``argweb delete predictions --model NAME [--version V] [--run ID]`` removes a model's predicted
    relations and prediction runs instead; gold relations are never touched.
    """
    if corpus == PREDICTIONS:
        if model is None:
            raise ApiError("argweb delete predictions needs --model NAME (and optionally --version V, --run ID)")
        delete_predictions(model, version, run)
        return
    if model is not None or version is not None or run is not None:
        raise ApiError(f"--model, --version and --run go with 'argweb delete {PREDICTIONS}', not with a corpus")
    with Graph(settings()) as graph:
        corpora.delete_corpus(graph, corpus)
    typer.echo(f"deleted corpus {corpus}")


def print_relation_counts(rows: list[dict[str, Any]]) -> None:
    """Gold and predicted relations per corpus and type, side by side (other runs' predictions apart)."""
    table = Table(title="relations: gold vs predicted")
    cols = ["corpus", "type", "gold", "predicted"]
    if any(row.get("other_runs") for row in rows):
        cols.append("other_runs")
    for col in cols:
        table.add_column(col.replace("_", " "), justify="left" if col in ("corpus", "type") else "right")
    for row in rows:
        # Gold counts are always shown; predicted ones only where there are some.
        table.add_row(row["corpus"], row["type"], str(row["gold"]), *(str(row[c] or "") for c in cols[3:]))
    Console().print(table)


def print_other_runs(others: list[mainjob.OtherRuns]) -> None:
    """The prediction runs besides the main job's, and how to remove them (without the job's own)."""
    for o in others:
        head = f"also in the graph: {o.model} {o.version}: {len(o.run_ids)} run(s), {o.relations} predicted relations"
        if not o.job_version:
            console.print(f"{head} (argweb delete predictions --model {o.model} --version {o.version} removes them)")
            continue
        # The job writes this version too: name each run, since deleting the version would take the job's.
        console.print(f"{head}; each is removed by:")
        for run_id in o.run_ids:
            console.print(f"  argweb delete predictions --model {o.model} --version {o.version} --run {run_id}")


def print_predictions(outcomes: list[mainjob.PredictionOutcome]) -> None:
    """One line per (model, corpus): written, skipped or FAILED with the reason."""
    for o in outcomes:
        model = f"{o.model} {o.version}" if o.model else o.task
        if o.status == "written":
            console.print(f"predictions {o.corpus}: {model}: {o.predicted} relations written (run {o.run_id})")
        elif o.status == "skipped":
            console.print(f"predictions {o.corpus}: {model}: already written (run {o.run_id})")
        else:
            console.print(f"[bold red]predictions {o.corpus}: {model} FAILED[/]: {o.message}")


def run(
    bulk: Annotated[
        bool | None,
        typer.Option(
            "--bulk/--no-bulk",
            help="Offline importer for the first load (default: when the embedded database is empty).",
        ),
    ] = None,
    predict: Annotated[
        bool, typer.Option("--predict/--no-predict", help="Write the default models' predictions.")
    ] = True,
    serve: Annotated[bool, typer.Option("--serve/--no-serve", help="Start the API in the background.")] = True,
    embed: Annotated[
        bool,
        typer.Option(
            "--embed/--no-embed",
            help="Embed new locutions and propositions for semantic search (off by default: a cold embedding "
            "cache costs longer than the rest of the job; `argweb embed` does it later).",
        ),
    ] = False,
) -> None:
    """Main job: start Neo4j, load every corpus found, predict, embed, export to the SPARQL store, start the API.

    Every step is idempotent: a second run loads, predicts and exports only what changed.
    """
    from api.services.apiserver import api_server

    started = time.perf_counter()
    cfg = settings()
    root = corpora.corpora_root(cfg)
    console.print(f"corpora: {root}")
    with Graph(cfg) as graph:
        report = corpora.run_all(graph, root, REPORTER, bulk=bulk)
        print_stats(report.stats)
        outcomes: list[mainjob.PredictionOutcome] = []
        if predict:
            loaded = [name for name, e in report.stats["corpora"].items() if e.get("status") == "complete"]
            outcomes = mainjob.predict_defaults(graph, loaded, REPORTER)
            print_predictions(outcomes)
        print_relation_counts(mainjob.relation_counts(graph, outcomes if predict else None))
        if predict:
            print_other_runs(mainjob.other_runs(graph, outcomes))
        if embed:
            embedded = mainjob.embed_units(graph, REPORTER)
            if embedded is None:
                outcomes.append(mainjob.PredictionOutcome("embedding", "(all)", "failed"))
        rdf = mainjob.sync_rdf(graph, REPORTER)
    console.print(
        f"SPARQL store {rdf.store_dir}: "
        + (f"{rdf.triples:,} triples loaded in {rdf.seconds:.1f}s" if rdf.exported else "unchanged")
    )
    if serve:
        server = api_server(cfg)
        info = server.start()
        console.print(f"argweb API: {info.url} (pid {info.pid}; stop with `make stop`)")
    failed = [o for o in outcomes if o.status == "failed"]
    if failed:
        console.print(
            f"[bold red]{len(failed)} prediction or embedding step(s) failed[/] (see above); the graph is loaded"
        )
    console.print(f"done in {time.perf_counter() - started:.1f}s")
