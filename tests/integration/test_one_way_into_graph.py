"""The one way a task's output reaches the graph: :func:`api.services.predictions.predict_scope`.

A task defined here (the next proposition of a map supports the one before it, with a score that
needs rounding) predicts over a stored corpus and over one dialogue: the scope is read back as
records, the run id comes from the task's decoding, scores are stored rounded, a second call finds
the run complete instead of writing it again, the gold relations are untouched, and the task's
command line (``argweb predict TASK --corpus/--dialogue --write``) goes the same way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from neo4j import Driver

from api.services.graph import Graph
from api.services.predictions import delete_predictions, predict_scope, runs
from api.settings import Settings
from gnn.modelcard import ModelCard
from gnn.task import Decoding, ScopePrediction, finish_card, register, unregister
from graphstore.scopes import resolve_scope
from graphstore.store import GraphStore
from ontology.errors import ApiError, UnknownTaskError
from ontology.labels import RelationLabel
from ontology.records import PredictedRelation, PropositionRecord, content_run_id
from ontology.scope import Scope, ScopeRecords
from tests.api.test_task_contract import Majority, MajorityConfig, MajorityTask
from tests.conftest import graph_snapshot, load_samples

NAME = "next-supports-test"
SCORE = 0.123456789  # stored as prediction_score rounds it


class NextSupports(MajorityTask):
    """Each proposition of a map supports the one before it, in file order."""

    name = NAME
    graph_corpora = ("qt30",)

    def scope_read(self, corpus: str) -> str:
        return "aif"

    def decoding(self, loaded: Majority, model_dir: Path, scope: Scope, options: Mapping[str, str]) -> Decoding:
        step = options.get("step", "1")
        if not step.isdigit():
            raise ApiError(f"option step must be a number, not {step!r}")
        parts = (NAME, "majority", step, scope.corpus, scope.dialogue or "", *scope.ids)
        return Decoding(parts, {"corpus": scope.corpus if scope.dialogue is None else None, "step": int(step)})

    def predict_scope(self, loaded: Majority, records: ScopeRecords, options: Mapping[str, str]) -> ScopePrediction:
        step = int(options.get("step", "1"))
        by_map: dict[str | None, list[PropositionRecord]] = {}
        for node in records.nodes:
            if isinstance(node, PropositionRecord):
                by_map.setdefault(node.discourse, []).append(node)
        rows = [
            PredictedRelation(source=props[k].id, target=props[k - step].id, label=RelationLabel.SUPPORT, score=SCORE)
            for props in by_map.values()
            for k in range(step, len(props))
        ]
        if not rows:
            raise ApiError("nothing to predict: no two propositions in one map")
        return ScopePrediction(tuple(rows), len(by_map), None, None, "predicted supports")


@pytest.fixture
def task(tmp_path: Path) -> Iterator[Path]:
    """The task registered, with a model directory of it (the majority model's files and card)."""
    from api.services import tasks

    contract = NextSupports()
    register(NAME, contract)
    model = tmp_path / "model"
    model.mkdir()
    (model / "shares.json").write_text('{"none": 1.0}', encoding="utf-8")
    finish_card(model, ModelCard(NAME, "majority", "1", ["shares.json"]), MajorityConfig(), "one", [], 0.0, {}, 1)
    try:
        yield model
    finally:
        unregister(NAME)
        tasks.forget()


def _graph(settings: Settings, driver: Driver) -> Graph:
    return Graph(settings, driver=driver)


def test_a_task_predicts_over_a_corpus_and_a_dialogue_through_the_one_job(
    task: Path, neo4j_settings: Settings, driver: Driver, store: GraphStore
) -> None:
    load_samples(driver, ("qt30",))
    gold = graph_snapshot(store, "qt30")
    with _graph(neo4j_settings, driver) as graph:
        looked = predict_scope(graph, NAME, corpus="qt30", model=task)
        assert looked.written == 0 and not looked.already_present and looked.predicted and looked.predicted > 0
        assert looked.by_label == {"support": looked.predicted}
        done = predict_scope(graph, NAME, corpus="qt30", model=task, write=True)
        # The same content gives the same run id, whether written or only looked at.
        assert done.run_id == looked.run_id and done.written == looked.predicted
        ids = resolve_scope(graph.store(), "qt30", None).ids
        assert len(ids) > 1 and done.run_id == content_run_id(NAME, NAME, "majority", "1", "qt30", "", *ids)
        again = predict_scope(graph, NAME, corpus="qt30", model=task, write=True)
        assert again.already_present and again.written == 0 and again.run_id == done.run_id
        stored = {r.run.run_id: r for r in runs(graph, "majority")}
        assert stored[done.run_id].status == "complete" and stored[done.run_id].relations == done.predicted
        assert stored[done.run_id].run.parameters == {"corpus": "qt30", "step": 1}
        scores = store.run(
            "MATCH (r:Relation {origin: 'predicted', run_id: $run}) RETURN DISTINCT r.score AS s", run=done.run_id
        )
        assert [row["s"] for row in scores] == [0.1235]  # the task's raw score, rounded in one place
        # Another decoding is another run; one dialogue is a run of its own.
        other = predict_scope(graph, NAME, corpus="qt30", model=task, options={"step": "2"}, write=True)
        assert other.run_id != done.run_id and other.written > 0
        dialogue = ids[0]
        one = predict_scope(graph, NAME, dialogue=dialogue, model=task, write=True)
        assert one.dialogue == dialogue and one.run_id not in (done.run_id, other.run_id)
        assert one.parameters == {"corpus": None, "step": 1}
        # The predictions go as they came: the gold graph is what was loaded, node for node.
        assert delete_predictions(graph, "majority") == done.written + other.written + one.written
    assert graph_snapshot(store, "qt30") == gold


def test_bad_requests_are_the_callers_mistake(
    task: Path, neo4j_settings: Settings, driver: Driver, store: GraphStore
) -> None:
    load_samples(driver, ("qt30",))
    with _graph(neo4j_settings, driver) as graph:
        with pytest.raises(ApiError, match="exactly one of --corpus and --dialogue"):
            predict_scope(graph, NAME, model=task)
        with pytest.raises(ApiError, match="option step must be a number"):
            predict_scope(graph, NAME, corpus="qt30", model=task, options={"step": "x"})
        with pytest.raises(UnknownTaskError, match="does not predict over dialogues stored in the graph"):
            predict_scope(graph, "pairs", corpus="qt30")
        assert runs(graph, "majority") == []
