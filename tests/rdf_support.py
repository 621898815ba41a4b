"""Shared set-up of the ontology / RDF / SPARQL / competency tests: the sample graph.

The sample graph is every corpus the registry can find under ``tests/data/corpora`` plus a few
predicted relations (GNN-style provenance) added to the QT30 bundle, so that questions about
predicted edges have answers.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from neo4j import Driver

from graphstore.loaders.registry import CORPORA
from graphstore.store import GraphStore
from ontology.records import CorpusBundle, PropositionRecord, RelationRecord, link
from ontology.terms import Label

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "tests" / "data" / "corpora"
LOADER_MODULES = {"m-arg": "marg", "sciarg": "sciarg", "contextdep": "contextdep"}
PREDICTED = (
    (Label.Support, 0.93, "rgcn-link", "0.3.1"),
    (Label.Attack, 0.81, "rgcn-link", "0.3.1"),
    (Label.Support, 0.42, "rgcn-link", "0.3.1"),
)


def loader_exists(corpus: str) -> bool:
    """Whether the loader module of ``corpus`` exists (molweni/stac/qt30 always do)."""
    module = LOADER_MODULES.get(corpus)
    return module is None or importlib.util.find_spec(f"graphstore.loaders.{module}") is not None


def add_predictions(bundle: CorpusBundle) -> int:
    """Append predicted Support/Attack relations between the bundle's first propositions."""
    props = [n.id for n in bundle.nodes if isinstance(n, PropositionRecord)]
    added = 0
    for k, (kind, confidence, model, version) in enumerate(PREDICTED):
        if len(props) < k + 2:
            break
        rel = RelationRecord(
            id=f"{bundle.corpus.id}:predicted:{k}",
            corpus=bundle.corpus.id,
            kind=kind,
            origin="predicted",
            confidence=confidence,
            model=model,
            model_version=version,
            created_at="2025-01-01T00:00:00Z",
        )
        bundle.nodes.append(rel)
        bundle.edges.extend(link(rel, [props[k]], [props[k + 1]]))
        bundle.edges.extend(rel.links())
        added += 1
    return added


def ingest_samples(driver: Driver) -> dict[str, int]:
    """Empty the graph and load every sample corpus; returns nodes per corpus."""
    store = GraphStore(driver, batch_size=500)
    store.clear()
    loaded: dict[str, int] = {}
    for spec in CORPORA.values():
        files = spec.find(SAMPLES)
        if not files:
            continue
        bundle = spec.load(files)
        if spec.name == "qt30":
            add_predictions(bundle)
        report = store.ingest(bundle)
        loaded[spec.name] = report.nodes
    return loaded
