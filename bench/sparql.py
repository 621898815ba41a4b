"""Benchmark: RDF export throughput and memory, and the competency questions on Oxigraph vs rdflib.

Starts its own embedded Neo4j in a temporary directory, loads every corpus the registry finds
under ``$ARGWEB_CORPORA`` or ``../shared/corpora`` (the shipped samples when neither exists),
then:

1. exports the graph to N-Triples, one corpus at a time and whole, each in a fresh process, and
   prints triples/s and peak memory (RSS of the process, and the Python-heap peak measured with
   tracemalloc in a second run) against the number of triples: memory stays flat as the graph grows;
2. loads the whole export into an in-memory Oxigraph store and into an rdflib ``Graph`` (in a
   child process, which is killed when ``--rdflib-timeout`` runs out);
3. runs every competency question (``ontology/cq``) in SPARQL on both, and in Cypher on Neo4j, checks
   the three answers agree, and prints per-query times and the rdflib/Oxigraph ratio;
4. starts Apache Jena Fuseki and the Oxigraph server on loopback (:mod:`bench.sparql_servers`),
   pushes the export to each, and prints the latency of every competency question on the three
   stores side by side, through the path ``/sparql`` takes (checking their answers agree);
5. counts ``?x a aw:Attack`` per corpus (the end-to-end check of the issue).

Usage: ``python -m bench.sparql [--corpora DIR] [--repeat 3] [--rdflib-timeout 1800] [--keep DIR]
[--servers fuseki,oxigraph|none]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import peak_rss_mb  # noqa: E402

PASSWORD = "argweb-bench-password"
BENCH_QUICK_ARGS = ["--corpora", "graphstore/samples", "--repeat", "1", "--rdflib-timeout", "300", "--heap", "1g"]


def _corpora_root(arg: str | None) -> Path:
    from api.services.corpora import corpora_root
    from api.settings import get_settings

    return corpora_root(get_settings().with_overrides(corpora=Path(arg) if arg else None))


# -- child processes -------------------------------------------------------------------------------


def child_export(work: str, port: int, out: str, corpus: str | None, trace: bool) -> None:
    """Export (all or one corpus) and print one JSON line with the figures."""
    import tracemalloc

    from api.services.graph import open_driver, private_settings
    from graphstore.export import GraphReader
    from ontology.rdf import RdfMapper, write_export

    mapper = RdfMapper()
    if trace:
        tracemalloc.start()
    settings = private_settings(Path(work), PASSWORD, port=port)
    driver = open_driver(settings, start=False)
    baseline = peak_rss_mb()
    try:
        reader = GraphReader(driver, page_size=settings.page_size, corpus=corpus)
        report = write_export(Path(out), reader.nodes(), reader.relationships(), fmt="nt", mapper=mapper)
    finally:
        driver.close()
    peak_heap = tracemalloc.get_traced_memory()[1] / 2**20 if trace else None
    print(
        json.dumps(
            {
                "corpus": corpus or "ALL",
                "triples": report.triples,
                "nodes": report.nodes,
                "relationships": report.relationships,
                "seconds": report.seconds,
                "rss_before_mb": baseline,
                "rss_peak_mb": peak_rss_mb(),
                "heap_peak_mb": peak_heap,
            }
        )
    )


def child_rdflib(path: str, queries_json: str, repeat: int) -> None:
    """Load the export into rdflib and run the queries (median of ``repeat``), one JSON line per step."""
    from rdflib import Graph
    from rdflib.query import ResultRow

    from ontology.competency import normalise

    started = time.perf_counter()
    g = Graph()
    g.parse(path, format="nt")
    print(json.dumps({"load_seconds": time.perf_counter() - started, "triples": len(g), "rss_mb": peak_rss_mb()}))
    sys.stdout.flush()
    for name, text in json.loads(queries_json):
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            result = g.query(text)
            columns = [str(v) for v in result.vars or []]
            # Iterate the rows: result.bindings holds one empty binding for an aggregate over nothing.
            rows = [
                {c: _rdflib_value(row.asdict().get(c)) for c in columns} for row in cast(Iterable[ResultRow], result)
            ]
            times.append(time.perf_counter() - t0)
        seconds = statistics.median(times)
        print(json.dumps({"name": name, "seconds": seconds, "rows": normalise(rows, columns)}, default=str))
        sys.stdout.flush()


def _rdflib_value(term: Any) -> Any:
    from rdflib import BNode, Literal, URIRef

    if term is None:
        return None
    if isinstance(term, Literal):
        value = term.toPython()
        return value if isinstance(value, int | float | bool | str) else str(term)
    if isinstance(term, URIRef):
        return str(term)
    if isinstance(term, BNode):
        return f"_:{term}"
    return str(term)


# -- the three stores --------------------------------------------------------------------------------


def _timed(run: Any, repeat: int) -> tuple[float, Any]:
    """Median seconds of ``run()`` over ``repeat`` runs, and its last result."""
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def three_stores(
    export: Path,
    questions: list[Any],
    embedded: dict[str, tuple[float, list[tuple[Any, ...]]]],
    work: Path,
    repeat: int,
    servers: list[str],
    server_heap: str = "6g",
) -> None:
    """The competency questions on the embedded store and on real SPARQL servers, side by side.

    Every store answers through :func:`api.services.query.run_sparql`, the path of ``/sparql``:
    the embedded store in its worker process, the servers over HTTP on loopback; the export is
    pushed to each server as ``argweb rdf load`` does. Latency is the median of ``repeat`` runs of
    the whole exchange (check, evaluation, the complete JSON result read), after one warm-up run.
    """
    from contextlib import ExitStack

    from api.services.query import run_sparql
    from bench.harness import record
    from bench.sparql_servers import fuseki, oxigraph_server
    from ontology.competency import normalise
    from ontology.sparql import load_store, solutions_from_json
    from ontology.sparql_remote import push

    store_dir = work / "oxigraph-disk"
    load_store(store_dir, export)
    stores: dict[str, Any] = {"embedded": store_dir}
    with ExitStack() as stack:
        for name in servers:
            t0 = time.perf_counter()
            if name == "fuseki":
                # Fuseki holds the graph in its JVM heap: the whole export (4.8M triples) does not fit in 1 GB.
                server = stack.enter_context(fuseki(work, query_timeout=600.0, heap=server_heap))
            else:
                server = stack.enter_context(oxigraph_server(work, query_timeout=600.0))
            started = time.perf_counter() - t0
            report = push(server.store, export)
            print(
                f"{server.name}: started in {started:.1f}s, {report.quads:,} triples loaded in {report.seconds:.1f}s "
                f"({server.store.query_url})"
            )
            stores[server.name] = server.store
        answers: dict[str, dict[str, tuple[float, list[tuple[Any, ...]]]]] = {}
        for name, store in stores.items():
            answers[name] = {}
            for q in questions:

                def ask(store: Any = store, q: Any = q) -> Any:
                    return solutions_from_json(run_sparql(store, q.sparql, fmt="json", timeout=600).collect(1 << 30))

                ask()  # warm-up: the embedded worker's first start, the servers' first plan
                seconds, (columns, rows) = _timed(ask, repeat)
                answers[name][q.name] = (seconds, normalise(rows, columns))
    names = list(stores)
    print(f"\n== competency questions on three stores: /sparql's path, median of {repeat} (ms)")
    print(f"{'question':<36} {'rows':>5} {'in-process':>11} " + " ".join(f"{n:>16}" for n in names) + "  agree")
    differ = 0
    for q in questions:
        base_t, base_rows = embedded[q.name]
        same = all(answers[n][q.name][1] == base_rows for n in names)
        differ += 0 if same else 1
        cells = " ".join(f"{answers[n][q.name][0] * 1000:>16.1f}" for n in names)
        print(f"{q.name:<36} {len(base_rows):>5} {base_t * 1000:>11.1f} {cells}  {'yes' if same else 'DIFFERS'}")
    totals = " ".join(f"{sum(answers[n][q.name][0] for q in questions) * 1000:>16.1f}" for n in names)
    print(f"{'all 11 questions':<36} {'':>5} {sum(embedded[q.name][0] for q in questions) * 1000:>11.1f} {totals}")
    record(
        "sparql: competency questions where a store's answer differs from the embedded store",
        differ,
        "",
        0,
        "lower",
        f"{', '.join(names)}; {len(questions)} questions",
    )


# -- main ------------------------------------------------------------------------------------------


def _run_child(args: list[str], timeout: float | None = None) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.sparql", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"child {args[0]} failed:\n{proc.stderr[-3000:]}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", help="Corpora directory (default: $ARGWEB_CORPORA, ../shared/corpora).")
    parser.add_argument("--repeat", type=int, default=3, help="Runs per query and engine (median).")
    parser.add_argument("--rdflib-timeout", type=float, default=1800.0, help="Seconds for rdflib load + queries.")
    parser.add_argument("--keep", help="Directory to keep the export in (default: a temporary one).")
    parser.add_argument("--heap", default="3g", help="Neo4j heap.")
    parser.add_argument(
        "--servers",
        default="fuseki,oxigraph",
        help="SPARQL servers timed beside the embedded store (fuseki, oxigraph; 'none' to skip).",
    )
    parser.add_argument("--server-heap", default="6g", help="Fuseki's JVM heap (it holds the graph in memory).")
    args = parser.parse_args()

    from api.services.graph import embedded_server, open_driver, private_settings
    from graphstore.store import GraphStore
    from ontology.competency import load_questions, normalise
    from ontology.formats.registry import CORPORA
    from ontology.rdf import PREFIXES
    from ontology.sparql import SparqlStore

    root = _corpora_root(args.corpora)
    questions = load_questions()
    work = Path(tempfile.mkdtemp(prefix="argweb-bench-sparql-"))
    keep = Path(args.keep) if args.keep else work
    keep.mkdir(parents=True, exist_ok=True)
    print(f"corpora: {root}\nwork dir: {work}")
    settings = private_settings(work, PASSWORD, heap=args.heap)
    server = embedded_server(settings)
    info = server.start()
    driver = open_driver(settings, start=False)
    try:
        store = GraphStore(driver, batch_size=settings.batch_size)
        print("\n== ingest")
        loaded: list[str] = []
        for spec in CORPORA.values():
            files = spec.find(root)
            if not files:
                print(f"{spec.name:<11} no files, skipped")
                continue
            report = store.ingest(spec.load(files))
            loaded.append(spec.name)
            print(f"{spec.name:<11} {report.nodes:>9,} nodes {report.edges:>9,} relationships {report.seconds:7.1f}s")

        print("\n== export (N-Triples, each run in a fresh process; memory must not grow with the graph)")
        print(
            f"{'scope':<11} {'triples':>11} {'seconds':>8} {'triples/s':>10} {'peak RSS MB':>12} "
            f"{'py-heap peak MB':>16}"
        )
        runs: list[dict[str, Any]] = []
        for corpus in [*loaded, None]:
            out = keep / ("export.nt" if corpus is None else f"export-{corpus}.nt")
            plain = _run_child(["--child-export", str(work), str(info.port), str(out), corpus or "", "0"])[0]
            traced = _run_child(["--child-export", str(work), str(info.port), str(out), corpus or "", "1"])[0]
            plain["heap_peak_mb"] = traced["heap_peak_mb"]
            runs.append(plain)
            print(
                f"{plain['corpus']:<11} {plain['triples']:>11,} {plain['seconds']:>8.1f} "
                f"{plain['triples'] / plain['seconds']:>10,.0f} {plain['rss_peak_mb']:>12.0f} "
                f"{plain['heap_peak_mb']:>16.1f}"
            )
            if corpus is not None:
                out.unlink()
        whole = runs[-1]
        smallest = min(runs, key=lambda r: r["triples"])
        print(
            f"graph grows {whole['triples'] / smallest['triples']:.0f}x ({smallest['corpus']} -> ALL): "
            f"peak RSS {smallest['rss_peak_mb']:.0f} -> {whole['rss_peak_mb']:.0f} MB, "
            f"Python heap peak {smallest['heap_peak_mb']:.1f} -> {whole['heap_peak_mb']:.1f} MB"
        )
        export = keep / "export.nt"

        print("\n== load")
        t0 = time.perf_counter()
        ox_store = SparqlStore()
        ox_store.add_file(export)
        print(f"oxigraph   {len(ox_store):>11,} triples in {time.perf_counter() - t0:6.1f}s")

        print(f"\n== competency questions: Cypher on Neo4j, SPARQL on Oxigraph and rdflib, median of {args.repeat}")
        cypher_answers: dict[str, tuple[float, list[tuple[Any, ...]]]] = {}
        ox_answers: dict[str, tuple[float, list[tuple[Any, ...]]]] = {}
        for q in questions:
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                columns, rows = ox_store.select(q.sparql)
                times.append(time.perf_counter() - t)
            ox_answers[q.name] = (statistics.median(times), normalise(rows, columns))
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                crow = store.read(q.cypher)
                times.append(time.perf_counter() - t)
            cypher_answers[q.name] = (statistics.median(times), normalise(crow, columns))

        queries = json.dumps([[q.name, q.sparql] for q in questions])
        rdflib_rows: dict[str, dict[str, Any]] = {}
        rdflib_load: dict[str, Any] = {}
        proc = subprocess.Popen(
            [sys.executable, "-m", "bench.sparql", "--child-rdflib", str(export), queries, str(args.repeat)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + args.rdflib_timeout
        try:
            stdout, err = proc.communicate(timeout=args.rdflib_timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, err = proc.communicate()
        for line in stdout.splitlines():
            item = json.loads(line)
            if "load_seconds" in item:
                rdflib_load = item
            else:
                rdflib_rows[item["name"]] = item
        if proc.returncode not in (0, -9) and err:
            print(f"rdflib child failed: {err[-2000:]}")
        if rdflib_load:
            print(
                f"rdflib load: {rdflib_load['triples']:,} triples in {rdflib_load['load_seconds']:.1f}s "
                f"(RSS {rdflib_load['rss_mb']:.0f} MB)"
            )
        timed_out = time.monotonic() > deadline

        header = (
            f"{'question':<36} {'rows':>5} {'neo4j ms':>9} {'oxigraph ms':>12} {'rdflib ms':>11} {'ratio':>8}  agree"
        )
        print(header)
        ratios = []
        for q in questions:
            ox_t, ox_rows = ox_answers[q.name]
            cy_t, cy_rows = cypher_answers[q.name]
            rd = rdflib_rows.get(q.name)
            agree = "cypher" if cy_rows == ox_rows else "CYPHER-DIFFERS"
            if rd is None:
                rd_text, ratio_text = ("timeout" if timed_out else "n/a"), "-"
            else:
                same = rd["rows"] == json.loads(json.dumps(ox_rows, default=str))
                agree += "+rdflib" if same else "+RDFLIB-DIFFERS"
                ratio = rd["seconds"] / max(ox_t, 1e-9)
                ratios.append(ratio)
                rd_text, ratio_text = f"{rd['seconds'] * 1000:.1f}", f"{ratio:.0f}x"
            print(
                f"{q.name:<36} {len(ox_rows):>5} {cy_t * 1000:>9.1f} {ox_t * 1000:>12.1f} {rd_text:>11} "
                f"{ratio_text:>8}  {agree}"
            )
        from bench.harness import record

        if ratios:
            record("sparql: rdflib / oxigraph, slowest query", min(ratios), "x", 10, "higher", f"{len(ratios)} queries")
        else:
            record("sparql: rdflib / oxigraph, slowest query", 0, "x", 10, "higher", "rdflib gave no answer")
        record(
            "sparql: competency questions where Cypher and SPARQL differ",
            sum(1 for q in questions if cypher_answers[q.name][1] != ox_answers[q.name][1]),
            "",
            0,
            "lower",
        )
        record(
            "export: N-Triples throughput, whole graph",
            whole["triples"] / whole["seconds"],
            "triples/s",
            20_000,
            "higher",
            f"{whole['triples']:,} triples; goal set by the harness",
        )
        record(
            "export: peak RSS whole graph / smallest corpus",
            whole["rss_peak_mb"] / max(smallest["rss_peak_mb"], 1e-9),
            "x",
            1.5,
            "lower",
            f"{smallest['rss_peak_mb']:.0f} -> {whole['rss_peak_mb']:.0f} MB; memory must not grow with the graph",
        )
        if ratios:
            print(
                f"rdflib / oxigraph: min {min(ratios):.0f}x, median {statistics.median(ratios):.0f}x, "
                f"max {max(ratios):.0f}x over {len(ratios)} queries; goal >= 10x on every query: "
                f"{'met' if min(ratios) >= 10 else 'NOT met'}"
            )

        if args.servers != "none":
            three_stores(export, questions, ox_answers, work, args.repeat, args.servers.split(","), args.server_heap)

        print("\n== end to end: SELECT (COUNT(*) AS ?n) WHERE { ?x a aw:Attack }")
        aw = PREFIXES["aw"]
        _, total = ox_store.select(f"SELECT (COUNT(*) AS ?n) WHERE {{ ?x a <{aw}Attack> }}")
        _, per = ox_store.select(
            f"SELECT ?corpus (COUNT(*) AS ?n) WHERE {{ ?x a <{aw}Attack> ; <{aw}corpus> ?corpus }} "
            "GROUP BY ?corpus ORDER BY ?corpus"
        )
        print(f"total {total[0]['n']:,}: " + ", ".join(f"{r['corpus']} {r['n']:,}" for r in per))
    finally:
        driver.close()
        server.stop()
    print(f"\npeak RSS of this process: {peak_rss_mb():.0f} MB")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child-export":
        child_export(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5] or None, sys.argv[6] == "1")
    elif len(sys.argv) > 1 and sys.argv[1] == "--child-rdflib":
        child_rdflib(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        raise SystemExit(main())
