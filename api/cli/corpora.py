"""``argweb stats|delete|run``: the corpora in the graph as a whole (the main job's steps: api.services.mainjob)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from api.cli.mainjob import step_summary
from api.cli.options import JsonFlag, show
from api.cli.predictions import PREDICTIONS, delete_predictions
from api.cli_common import console, settings
from api.progress import ConsoleReporter
from api.services import corpora, mainjob
from api.services.graph import Graph
from graphstore import comparisons
from ontology.errors import ApiError
from ontology.views import RelationCount


def register(app: typer.Typer) -> None:
    """Add ``stats``, ``delete`` and ``run`` to the ``argweb`` app."""
    app.command("stats")(stats)
    app.command("delete")(delete)
    app.command("run")(run)


def print_stats(result: dict[str, Any], out: Console | None = None) -> None:
    """The per-corpus summary and the relations-by-type tables (on stdout unless ``out``)."""
    out = out or Console()
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
    out.print(table)
    rel = Table(title="relations by type")
    rel.add_column("corpus")
    rel.add_column("type")
    rel.add_column("n", justify="right")
    for name, entry in result["corpora"].items():
        for key, n in entry["relations"].items():
            rel.add_row(name, key, str(n))
    out.print(rel)


def print_comparisons(result: dict[str, Any], out: Console | None = None) -> None:
    """The stats tables, then predicted against gold per corpus, run and relation type (if any run)."""
    out = out or Console()
    print_stats(result, out)
    rows = result.get("predicted_against_gold") or []
    if not rows:
        return
    table = Table(title="predicted against gold (micro over the maps each run covers)")
    for col in ("corpus", "run", "model", "maps", "type", "gold", "predicted", "matched", "other type", "missed"):
        table.add_column(col, justify="right" if col in ("maps", "gold", "predicted", "matched") else "left")
    for col in ("P", "R", "F1"):
        table.add_column(col, justify="right")

    def shown(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    for c in rows:
        run = c["run"]
        for t in [*c["types"], c["micro"]]:
            table.add_row(
                c["corpus"],
                run["run_id"],
                f"{run['model']} {run['model_version']}",
                str(c["maps"]),
                t["type"],
                *(str(t[k]) for k in ("gold", "predicted", "matched", "other_type", "missed")),
                *(shown(t[k]) for k in ("precision", "recall", "f1")),
            )
    out.print(table)


def stats(
    as_json: JsonFlag = False,
    predicted: Annotated[
        bool,
        typer.Option(
            "--predicted",
            help="Count predicted relations and prediction runs too, and each run against gold per type "
            "(else gold only).",
        ),
    ] = False,
) -> None:
    """Counts per label, relationship type and corpus (the corpora's gold content unless --predicted).

    With --predicted also each prediction run against gold per corpus and relation type: matched,
    other type, missed, precision, recall and F1, micro over the maps the run covers (the rules:
    docs/graph-model.md, "Predicted against gold").
    """
    with Graph(settings()) as graph:
        result = corpora.stats(graph, include_predicted=predicted).as_dict()
        if predicted:
            result["predicted_against_gold"] = [
                asdict(c) for c in comparisons.graph_comparisons(graph.driver(), graph.settings.neo4j_database)
            ]
    show(result, as_json, print_comparisons if predicted else print_stats)


def delete(
    corpus: Annotated[
        str, typer.Argument(help="Corpus id (e.g. molweni, qt30, m-arg), or 'predictions' with --model.")
    ],
    model: Annotated[str | None, typer.Option(help="With 'predictions': the model whose predictions go.")] = None,
    version: Annotated[str | None, typer.Option(help="With 'predictions': only this model version.")] = None,
    run: Annotated[str | None, typer.Option(help="With 'predictions': only this prediction run (its id).")] = None,
) -> None:
    """Remove a corpus and everything in it (ingest merges, so use this before loading a smaller set).

    ``argweb runs delete --model NAME [--version V] [--run ID]`` removes a model's predicted relations
    and prediction runs (also spelt ``argweb delete predictions --model NAME``); gold relations are
    never touched.
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


def print_relation_counts(rows: list[RelationCount], out: Console | None = None) -> None:
    """Gold and predicted relations per corpus and type, side by side (other runs' predictions apart)."""
    table = Table(title="relations: gold vs predicted")
    cols = ["corpus", "type", "gold", "predicted"]
    if any(row.other_runs for row in rows):
        cols.append("other_runs")
    for col in cols:
        table.add_column(col.replace("_", " "), justify="left" if col in ("corpus", "type") else "right")
    for row in rows:
        # Gold counts are always shown; predicted ones only where there are some.
        table.add_row(row.corpus, row.type, str(row.gold), *(str(getattr(row, c) or "") for c in cols[3:]))
    (out or Console()).print(table)


def print_other_runs(others: list[mainjob.OtherRuns]) -> None:
    """The prediction runs besides the main job's, and how to remove them (without the job's own)."""
    for o in others:
        head = f"also in the graph: {o.model} {o.version}: {len(o.run_ids)} run(s), {o.relations} predicted relations"
        if not o.job_version:
            console.print(f"{head} (argweb runs delete --model {o.model} --version {o.version} removes them)")
            continue
        # The job writes this version too: name each run, since deleting the version would take the job's.
        console.print(f"{head}; each is removed by:")
        for run_id in o.run_ids:
            console.print(f"  argweb runs delete --model {o.model} --version {o.version} --run {run_id}")


def print_summary(report: mainjob.MainJobReport) -> None:
    """Per corpus: its units, gold relations and the predictions the job wrote or found (one table)."""
    predicted: dict[str, int] = {}
    for row in report.counts:
        predicted[row.corpus] = predicted.get(row.corpus, 0) + row.predicted
    corpora = report.load.stats.get("corpora", {}) if report.load else {}
    table = Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        collapse_padding=True,
        title="per corpus (gold and predicted: relations)",
    )
    columns = ("dialogues", "documents", "locutions", "propositions", "relations")
    table.add_column("corpus", no_wrap=True)
    for col in columns:
        table.add_column("gold" if col == "relations" else col, justify="right", no_wrap=True)
    table.add_column("predicted", justify="right", no_wrap=True)
    for name, entry in corpora.items():
        counts = entry["summary"]
        status = "" if entry.get("status") == "complete" else f" ({entry.get('status')})"
        table.add_row(name + status, *(f"{counts[c]:,}" for c in columns), f"{predicted.get(name, 0):,}")
    console.print(table)
    models: dict[str, list[str]] = {}
    for o in report.outcomes:
        if o.status != "failed" and o.model:
            models.setdefault(f"{o.model} {o.version}", []).append(o.corpus)
    if models:
        text = "; ".join(f"{m} ({', '.join(cs)})" for m, cs in models.items())
        console.print(f"models: {escape(text)}", highlight=False, soft_wrap=True)
    embedded = next((s for s in report.steps if s.name == "embed"), None)
    if embedded is not None and report.embedded is not None:
        line = f"semantic search: {escape(step_summary(embedded))} ({embedded.seconds:.1f}s added)"
        console.print(line, highlight=False, soft_wrap=True)
    for o in report.failed:
        console.print(
            f"[bold red]{o.task} on {o.corpus} FAILED[/]: {escape(o.message)}", highlight=False, soft_wrap=True
        )


def print_next(report: mainjob.MainJobReport, log: Path) -> None:
    """What to open and what to run next, one line each."""
    rows: list[tuple[str, str, str]] = []
    if report.api is not None:
        url = report.api.url
        rows += [("open", url, "graph page"), ("", f"{url}docs", "REST API reference"), ("", f"{url}sparql", "SPARQL")]
    else:
        rows.append(("open", "argweb serve", "graph page, REST API and SPARQL endpoint"))
    rows += [
        ("then", "argweb corpus stats --predicted", "relations per type, gold and predicted"),
        ("", "argweb questions", "the competency questions, in Cypher and SPARQL"),
        ("", "make stop", "stop the API and Neo4j"),
        ("log", str(log), ""),
    ]
    width = max(len(target) for _, target, _ in rows)
    for head, target, what in rows:
        console.print(escape(f"{head:<5} {target:<{width}}  {what}".rstrip()), highlight=False, soft_wrap=True)


def run(
    bulk: Annotated[
        bool | None,
        typer.Option(
            "--bulk/--no-bulk",
            help="Offline importer for the first load (default: when the embedded database is empty).",
        ),
    ] = None,
    reload: Annotated[
        bool,
        typer.Option(
            "--reload",
            help="Read every corpus again, even one whose files and reader are unchanged since its last load.",
        ),
    ] = False,
    predict: Annotated[
        bool, typer.Option("--predict/--no-predict", help="Write the default models' predictions.")
    ] = True,
    serve: Annotated[bool, typer.Option("--serve/--no-serve", help="Start the API in the background.")] = True,
    embed: Annotated[
        bool | None,
        typer.Option(
            "--embed/--no-embed",
            help="Semantic search: by default the job writes the vectors its predictions left in the encoder "
            "cache (nothing is encoded again); --embed also encodes the texts the cache lacks (a cold cache "
            "costs longer than the rest of the job; `argweb embed` does it later); --no-embed skips the step.",
        ),
    ] = None,
    keep_export: Annotated[
        bool,
        typer.Option(
            "--keep-export", help="Keep the RDF export file (export.nt) after the SPARQL store was loaded from it."
        ),
    ] = False,
) -> None:
    """Main job: start Neo4j, load every corpus found, predict, embed, export to the SPARQL store, start the API.

    Every step is idempotent: a second run loads, predicts and exports only what changed (a
    corpus whose files and reader are unchanged since its last load is not read again). The
    console shows one line per step and a summary; every detail goes to ``<data dir>/run.log``.
    """
    cfg = settings()
    log = cfg.data_dir / mainjob.RUN_LOG
    log.unlink(missing_ok=True)
    # Off a terminal, progress lines come at growing gaps: an hour-long step stays a dozen lines.
    reporter = ConsoleReporter(console, details=False, log_file=log, slowdown=2.0)
    root = corpora.corpora_root(cfg)
    console.print(escape(f"argweb run: corpora {root}; every detail in {log}"), highlight=False, soft_wrap=True)

    def show_step(step: mainjob.Step) -> None:
        summary = step_summary(step)
        reporter.log(f"step {step.name}: {summary} ({step.seconds:.1f}s)")
        line = f"{step.name:<8} {escape(summary)}  [dim]{step.seconds:.1f}s[/]"
        console.print(line, highlight=False, soft_wrap=True)

    try:
        report = mainjob.run(
            cfg,
            bulk=bulk,
            reload=reload,
            predict=predict,
            embed=embed,
            serve=serve,
            keep_export=keep_export,
            reporter=reporter,
            on_step=show_step,
        )
        # The full tables stay in the log; the console gets one table per corpus.
        with log.open("a", encoding="utf-8") as fh:
            detail = Console(file=fh, width=160)
            print_stats(report.load.stats if report.load else {"corpora": {}}, detail)
            print_relation_counts(report.counts, detail)
    finally:
        reporter.close()
    print_summary(report)
    print_other_runs(report.others)
    print_next(report, log)
    failed = f"; [bold red]{len(report.failed)} step(s) failed[/] (above)" if report.failed else ""
    console.print(f"done in {report.seconds:.1f}s{failed}", highlight=False, soft_wrap=True)
