"""Shared set-up of the ontology / RDF / SPARQL / competency tests: the sample graph.

The sample graph is every corpus the registry can find under the packaged samples plus one
prediction run (GNN-style provenance) between QT30 propositions, written through the prediction
write path, so that questions about predicted edges have answers.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from neo4j import Driver

from graphstore.predictions import PredictionStore
from graphstore.store import GraphStore
from ontology.formats.registry import CORPORA
from ontology.labels import RelationLabel
from ontology.records import PredictedRelation, PredictionRun, PropositionRecord
from tests.conftest import SAMPLES

ROOT = Path(__file__).resolve().parent.parent
LOADER_MODULES = {"m-arg": "marg", "sciarg": "sciarg", "contextdep": "contextdep"}
SAMPLE_RUN = PredictionRun(
    run_id="rgcn-sample",
    model="rgcn-link",
    model_version="0.3.1",
    task="relations",
    parameters={"threshold": 0.4},
    created_at="2025-01-01T00:00:00Z",
)
PREDICTED = ((RelationLabel.SUPPORT, 0.93), (RelationLabel.ATTACK, 0.81), (RelationLabel.SUPPORT, 0.42))
# Nodes the sample prediction run writes: one relation per prediction and the run node.
PREDICTION_NODES = len(PREDICTED) + 1


def loader_exists(corpus: str) -> bool:
    """Whether the loader module of ``corpus`` exists (molweni/stac/qt30 always do)."""
    module = LOADER_MODULES.get(corpus)
    return module is None or importlib.util.find_spec(f"ontology.formats.{module}") is not None


def sample_predictions(propositions: list[str]) -> list[PredictedRelation]:
    """Support/Attack predictions chaining the given propositions (``pred:rgcn-sample:<k>``)."""
    return [
        PredictedRelation(source=propositions[k], target=propositions[k + 1], label=label, score=score)
        for k, (label, score) in enumerate(PREDICTED)
        if k + 1 < len(propositions)
    ]


def ingest_samples(driver: Driver) -> dict[str, int]:
    """Empty the graph, load every sample corpus and the sample prediction run.

    Returns:
        Nodes written per corpus; the prediction run adds :data:`PREDICTION_NODES` more (its
        relations, filed under qt30, and the run node, in no corpus).
    """
    store = GraphStore(driver, batch_size=500)
    store.clear()
    loaded: dict[str, int] = {}
    propositions: list[str] = []
    for spec in CORPORA.values():
        files = spec.find(SAMPLES)
        if not files:
            continue
        bundle = spec.load(files)
        if spec.name == "qt30":
            propositions = [n.id for n in bundle.nodes if isinstance(n, PropositionRecord)]
        report = store.ingest(bundle)
        loaded[spec.name] = report.nodes
    if propositions:
        report = PredictionStore(driver, batch_size=500).write(SAMPLE_RUN, sample_predictions(propositions))
        assert report.relations + 1 == PREDICTION_NODES
    return loaded
