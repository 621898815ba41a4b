"""The main job after loading, on the packaged samples: predictions beside unchanged gold counts, a
second run that writes nothing, the SPARQL store and the API in the background."""

from __future__ import annotations

import json
import os
import shutil
import urllib.request
from pathlib import Path

import pytest
from neo4j import Driver

from api.cli.mainjob import step_summary
from api.services import corpora, mainjob, predictions
from api.services.apiserver import api_server
from api.services.corpora import ingest_files
from api.services.graph import Graph
from api.settings import Settings
from graphstore.runtime import free_port
from graphstore.store import GraphStore
from ontology.formats.registry import CORPORA
from ontology.views import RelationCount
from tests.conftest import SAMPLES
from tests.integration.cli_support import run_argweb

pytestmark = pytest.mark.integration


def _by_corpus(rows: list[RelationCount], *extra: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        cell = out.setdefault(row.corpus, dict.fromkeys(("gold", "predicted", *extra), 0))
        for key in cell:
            cell[key] += getattr(row, key)
    return out


def test_main_job_predicts_once_exports_and_serves(
    store: GraphStore, driver: Driver, neo4j_settings: Settings, tmp_path: Path
) -> None:
    settings = neo4j_settings.with_overrides(oxigraph_store=tmp_path / "store" / "oxigraph", api_port=free_port())
    graph = Graph(settings, driver=driver)
    report = corpora.run_all(graph, SAMPLES, bulk=False)
    loaded = [name for name, e in report.stats["corpora"].items() if e.get("status") == "complete"]
    assert {"molweni", "stac", "contextdep"} <= set(loaded)
    before = _by_corpus(mainjob.relation_counts(graph))

    first = mainjob.predict_defaults(graph, loaded)
    assert {(o.task, o.corpus) for o in first} == {
        ("discourse", "molweni"),
        ("discourse", "stac"),
        ("paraphrase", "contextdep"),
        ("relations", "qt30"),
        ("relations", "sciarg"),
        ("relations", "m-arg"),
    }
    assert all(o.status in ("written", "skipped") for o in first), [o.message for o in first]
    after = _by_corpus(mainjob.relation_counts(graph))
    # Gold counts unchanged; each predicted corpus gained predicted relations (origin predicted).
    assert {c: v["gold"] for c, v in after.items()} == {c: v["gold"] for c, v in before.items()}
    for corpus in ("molweni", "stac", "contextdep", "qt30", "sciarg", "m-arg"):
        assert after[corpus]["predicted"] > 0
    # Gold and predicted argument relations share their row: gold QT30 supports carry scheme names
    # ("Default Inference"), predicted ones the node type ("RA"), and neither is part of the key.
    qt30 = [row for row in mainjob.relation_counts(graph) if row.corpus == "qt30"]
    assert not any(":" in row.type for row in qt30), qt30
    assert any(row.gold and row.predicted for row in qt30), qt30
    marg = {row.type: row for row in mainjob.relation_counts(graph) if row.corpus == "m-arg"}
    assert marg["Support"].gold and marg["Support"].predicted, marg
    written = store.run("MATCH (r:Relation {origin: 'predicted'}) RETURN count(r) AS n")[0]["n"]
    assert written == sum(v["predicted"] for v in after.values())

    second = mainjob.predict_defaults(graph, loaded)
    assert [o.status for o in second] == ["skipped"] * 6
    assert {o.run_id for o in second} >= {o.run_id for o in first if o.status == "written"}
    assert store.run("MATCH (r:Relation {origin: 'predicted'}) RETURN count(r) AS n")[0]["n"] == written

    # A run the job did not write (another decoding, an earlier model version) is counted apart and named.
    assert mainjob.relation_counts(graph, second) == mainjob.relation_counts(graph)
    assert mainjob.other_runs(graph, second) == []
    focused = {"objective": "focused"}
    extra = predictions.predict_scope(graph, "relations", corpus="qt30", options=focused, write=True)
    assert extra.written and extra.predicted and extra.run_id not in {o.run_id for o in second}
    split = _by_corpus(mainjob.relation_counts(graph, second), "other_runs")
    assert split["qt30"] == {
        "gold": after["qt30"]["gold"],
        "predicted": after["qt30"]["predicted"],
        "other_runs": extra.predicted,
    }
    (other,) = mainjob.other_runs(graph, second)
    assert other == mainjob.OtherRuns(
        extra.model, extra.model_version, (extra.run_id,), extra.predicted, job_version=True
    )
    assert predictions.predict_scope(graph, "relations", corpus="qt30", options=focused, write=True).already_present
    # The run alone goes, the job's runs of the same model version stay.
    assert predictions.delete_predictions(graph, other.model, other.version, extra.run_id) == extra.predicted
    assert mainjob.relation_counts(graph, second) == mainjob.relation_counts(graph)
    assert _by_corpus(mainjob.relation_counts(graph)) == after

    rdf = mainjob.sync_rdf(graph)
    assert rdf.exported and rdf.triples > 0 and rdf.store_dir.is_dir()
    assert not mainjob.sync_rdf(graph).exported

    server = api_server(settings)
    try:
        info = server.start()
        assert server.start() == info  # already running: no second process
        with urllib.request.urlopen(f"{info.url}health", timeout=10) as resp:
            health = json.loads(resp.read())
        assert health == {"status": "ok", "neo4j": "ok", "sparql": "ok"}
    finally:
        assert server.stop()
    assert server.info() is None and not server.stop()


def test_a_failing_model_is_reported_not_fatal(store: GraphStore, driver: Driver, neo4j_settings: Settings) -> None:
    def broken(graph: Graph, corpus: str, reporter: object) -> tuple[str | None, int]:
        raise RuntimeError("weights unreadable")

    models = (mainjob.DefaultModel("discourse", ("stac", "molweni"), lambda: ("broken-model", "0"), broken),)
    outcomes = mainjob.predict_defaults(Graph(neo4j_settings, driver=driver), ["stac"], models=models)
    assert [(o.corpus, o.status, o.message) for o in outcomes] == [
        ("stac", "failed", "RuntimeError: weights unreadable")
    ]


def test_the_main_job_service_times_each_step_and_removes_the_export(
    store: GraphStore, neo4j_settings: Settings, tmp_path: Path
) -> None:
    settings = neo4j_settings.with_overrides(corpora=SAMPLES, oxigraph_store=tmp_path / "first" / "oxigraph")
    seen: list[mainjob.Step] = []
    report = mainjob.run(settings, bulk=False, predict=False, serve=False, on_step=seen.append)
    assert [s.name for s in report.steps] == ["load", "rdf"] and seen == report.steps
    assert step_summary(report.steps[0]) == "6 corpora (merged into the graph)"
    assert report.root == SAMPLES and report.load is not None and not report.load.skipped
    assert report.rdf is not None and report.rdf.exported and report.rdf.triples > 0
    assert step_summary(report.steps[1]) == f"{report.rdf.triples:,} triples loaded"
    assert report.outcomes == [] and report.api is None and report.failed == []
    assert {row.corpus for row in report.counts} == set(report.load.stats["corpora"])
    # The export is the size of the store again: it goes once the store holds it, unless kept.
    assert (tmp_path / "first" / "oxigraph").is_dir() and not (tmp_path / "first" / mainjob.RDF_EXPORT).exists()
    kept = settings.with_overrides(oxigraph_store=tmp_path / "kept" / "oxigraph")
    mainjob.run(kept, bulk=False, predict=False, serve=False, keep_export=True)
    assert (tmp_path / "kept" / mainjob.RDF_EXPORT).stat().st_size > 0
    again = mainjob.run(settings, bulk=False, predict=False, serve=False)
    assert step_summary(again.steps[1]) == "unchanged since the last run"


def test_the_command_prints_a_line_per_step_and_a_summary_and_logs_the_rest(
    store: GraphStore, cli_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**os.environ, **cli_env, "ARGWEB_CORPORA": str(SAMPLES), "ARGWEB_OXIGRAPH_STORE": str(tmp_path / "ox")}
    env.pop("PYTHONWARNINGS", None)
    done = run_argweb(env, "run", "--no-bulk", "--no-predict", "--no-serve")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = (done.stdout + done.stderr).splitlines()
    log = Path(cli_env["ARGWEB_DATA_DIR"]) / mainjob.RUN_LOG
    assert lines[0] == f"argweb run: corpora {SAMPLES}; every detail in {log}"
    assert lines[1].startswith("load     6 corpora (merged into the graph)") and lines[2].startswith("rdf      ")
    assert len(lines) <= 30 and not any("warning" in line.lower() for line in lines), lines
    assert any(line.split()[:1] == ["molweni"] for line in lines)  # the summary table
    assert any(line.startswith("log") and str(log) in line for line in lines)
    assert lines[-1].startswith("done in ")
    logged = log.read_text(encoding="utf-8")
    # The details: each corpus written, the export, and the full tables.
    assert "molweni:" in logged and "triples" in logged and "relations by type" in logged
    assert "relations: gold vs predicted" in logged

    # The shipped competency questions, answered on what the job loaded: Cypher and SPARQL agree.
    asked = run_argweb(env, "questions", "--json")
    assert asked.returncode == 0, asked.stdout + asked.stderr
    answers = json.loads(asked.stdout)
    assert len(answers) >= 8 and all(a["agree"] for a in answers), answers
    assert sum(bool(a["rows"]) for a in answers) >= 8
    unknown = run_argweb(env, "questions", "99-no-such-question")
    assert unknown.returncode == 2 and "no competency question 99-no-such-question" in unknown.stderr


def test_the_load_step_reads_a_corpus_again_only_when_its_files_or_its_digest_changed(
    store: GraphStore, driver: Driver, neo4j_settings: Settings, tmp_path: Path
) -> None:
    root = tmp_path / "corpora"
    shutil.copytree(SAMPLES, root)
    graph = Graph(neo4j_settings, driver=driver)
    names = sorted(spec.name for spec in CORPORA.values() if spec.find(root))
    first = corpora.run_all(graph, root, bulk=False, reload=True)
    assert sorted(r.corpus for r in first.ingested) == names and first.unchanged == []
    digests = store.input_digests()
    assert all(digests[name] == CORPORA[name].input_digest(root) for name in names)
    stats = store.stats()

    # Nothing changed: nothing is read, nothing written.
    again = corpora.run_all(graph, root, bulk=False)
    assert again.ingested == [] and sorted(again.unchanged) == names
    assert store.stats() == stats and store.input_digests() == digests

    # A file added to one corpus' folder: that corpus alone is read again.
    (root / CORPORA["stac"].folder / "NOTES.txt").write_text("read me", encoding="utf-8")
    changed = corpora.run_all(graph, root, bulk=False)
    assert [r.corpus for r in changed.ingested] == ["stac"] and "stac" not in changed.unchanged
    assert store.input_digests()["stac"] == CORPORA["stac"].input_digest(root) != digests["stac"]

    # A load outside the main job (other files, no digest) leaves no digest: the next run reads it again.
    molweni = CORPORA["molweni"]
    ingest_files(graph, "molweni", molweni.find(root))
    assert store.input_digests()["molweni"] is None
    after = corpora.run_all(graph, root, bulk=False)
    assert [r.corpus for r in after.ingested] == ["molweni"]
    assert store.input_digests()["molweni"] == molweni.input_digest(root)
    assert store.stats() == stats
