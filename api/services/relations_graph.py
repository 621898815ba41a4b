"""Argument relations predicted for dialogues and documents read from the graph.

The relation models of :mod:`gnn.relations` read the records the corpus loaders produce. Here the
same records are rebuilt from the graph (read views, READ transactions), so a map or paper stored
in the graph gets exactly the predictions its file gets from ``argweb predict aif|sciarg`` with the
same QT30 objective (the graph's default is :data:`GRAPH_OBJECTIVE`, ``predict aif``'s ``general``):

* **AIF dialogues** (QT30 / DialAM-2024, and any corpus of AIF dialogues with propositions): the
  map in the DialAM test-input form -- L-nodes, I-nodes and gold TA transitions, numbered in file
  order without the YA/RA/CA/MA nodes (:func:`ontology.formats.aif_write.strip_relations`), since
  the model recovers each I-node's locution from that order. The gold RA/CA/MA only score the
  predictions; they are never model input.
* **Sci-Arg documents**: the gold components with their type, character span and first sentence.
* **M-Arg debates**: the sentences (propositions) and their speakers in transcript order, read by
  the QT30 network in windows (:func:`gnn.relations.marg_task.predict_debates`); M-Arg's 102 gold
  pairs are too few to train a model of its own, and only score the predictions.

Predictions are written
through the prediction write path as one run per corpus (or dialogue) whose id derives from the
model, its version, the objective and the discourses, so writing again writes nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api.services.graph import Graph
from api.services.predictions import PredictionJob
from api.services.reporting import SILENT, Reporter
from api.settings import Settings
from ontology.errors import ApiError, NotFoundError
from ontology.labels import scheme_label
from ontology.records import (
    EdgeRecord,
    NodeRecord,
    PredictedRelation,
    prediction_score,
)

TASK = "relations"
AIF, SCIARG, MARG = "aif", "sciarg", "marg"
FAMILIES = {"sciarg": SCIARG, "m-arg": MARG}
"""Corpora with a family of their own; every other corpus is read as AIF dialogues."""
# AIF nodes the DialAM test input leaves out (strip_relations drops the same).
_NOT_INPUT = ("YA", "RA", "CA", "MA")
# What each family's predicted relation types mean, from the ontology's scheme mappings.
AIF_LABELS = {t: scheme_label("qt30", t) for t in ("RA", "CA", "MA")}
SCIARG_TYPES = ("supports", "contradicts", "semantically_same", "parts_of_same")
SCIARG_LABELS = {t: scheme_label("sciarg", t) for t in SCIARG_TYPES}
MARG_LABELS = {t: scheme_label("m-arg", t) for t in ("Support", "Attack")}
DISCOURSE_BATCH = 100


@dataclass(frozen=True)
class Scope:
    """What to predict for.

    Attributes:
        family: ``aif`` (argument maps), ``sciarg`` (papers with gold components) or ``marg`` (debates).
        corpus: The corpus of the discourses.
        dialogue: The one dialogue/document asked for (None for a whole corpus).
        ids: Graph ids of the discourses, in id order.
    """

    family: str
    corpus: str
    dialogue: str | None
    ids: tuple[str, ...]


# The decoding of the predictions written into the graph: there people count supports and attacks,
# so each relation type's predicted count is kept near its gold count (gnn.relations.qt30_task).
GRAPH_OBJECTIVE = "shares"


def family_of(corpus: str) -> str:
    """The model family that predicts for ``corpus``."""
    return FAMILIES.get(corpus, AIF)


def resolve_scope(graph: Graph, corpus: str | None, dialogue: str | None) -> Scope:
    """The discourses of ``corpus`` or the one ``dialogue`` (exactly one of them).

    Raises:
        ApiError: Both or neither given. NotFoundError: Unknown corpus or dialogue.
    """
    from graphstore import cypher
    from graphstore.aif_export import resolve_discourse

    if (corpus is None) == (dialogue is None):
        raise ApiError("give exactly one of --corpus and --dialogue")
    store = graph.store()
    if dialogue is not None:
        did = resolve_discourse(store, dialogue, corpus)
        owner = str(store.read(cypher.discourse_refs(), ref=did, corpus=None)[0]["corpus"])
        return Scope(family_of(owner), owner, did, (did,))
    assert corpus is not None
    family = family_of(corpus)
    rows = store.read(cypher.corpus_discourses(), corpus=corpus)
    if not rows:
        raise NotFoundError(f"no dialogues or documents of corpus {corpus!r} in the graph")
    return Scope(family, corpus, None, tuple(str(r["id"]) for r in rows))


from graphstore.scopes import aif_records, in_order, sciarg_records  # noqa: E402

__all__ = ["aif_records", "in_order", "sciarg_records"]


@dataclass(frozen=True)
class LoadedModel:
    """A model kept in memory with the name and version its predictions carry."""

    name: str
    version: str
    path: Path
    model: Any


def load_for(settings: Settings, family: str, model_dir: Path | None = None) -> LoadedModel:
    """The relation model of ``family`` (``model_dir``, else the default one), loaded once per process."""
    from api.services import relations
    from gnn.modelcard import read_card

    if family in (AIF, MARG):
        path, model = relations.qt30_model(settings, model_dir)
    else:
        path, model = relations.sciarg_model(settings, model_dir)
    card = read_card(path, "relations")
    return LoadedModel(card.model, card.version, path, model)


def _read_chunk(graph: Graph, family: str, ids: Sequence[str]) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    from graphstore.scopes import READERS

    return READERS[SCIARG if family == SCIARG else AIF](graph.store(), ids)


def _predict_chunk(
    loaded: LoadedModel, family: str, nodes: list[NodeRecord], edges: list[EdgeRecord], objective: str
) -> tuple[list[PredictedRelation], Any, Any, int]:
    """Predictions of one chunk, plus the model inputs and raw predictions (for scoring) and the gold count."""
    # Per predicted item, the graph id of each unit the model names (by local id or sentence).
    if family == AIF:
        from gnn.relations.argmap import maps_from_records

        items: list[Any] = [m for m in maps_from_records(nodes, edges) if m.props]
        raw = loaded.model.predict(items, objective) if items else []
        graph_ids = [{p.local_id: p.id for p in amap.props} for amap in items]
        labels, gold = AIF_LABELS, sum(len(m.gold) for m in items)
    elif family == MARG:
        from gnn.relations.marg_task import debates_from_records, pairs_from_records, predict_debates

        debates = [d for d in debates_from_records(nodes) if d.sentences]
        pairs = pairs_from_records(nodes, edges)
        raw = predict_debates(loaded.model, debates, objective) if debates else []
        graph_ids = [dict(zip(d.sentences, d.node_ids, strict=True)) for d in debates]
        sentences = [set(d.sentences) for d in debates]
        items = [(d, [p for p in pairs if p.source_id in ids]) for d, ids in zip(debates, sentences, strict=True)]
        labels, gold = MARG_LABELS, sum(p.label in MARG_LABELS for p in pairs)
    else:
        from gnn.relations.sciarg_task import papers_from_records

        items = [p for p in papers_from_records(nodes, edges) if p.comps]
        raw = loaded.model.predict(items) if items else []
        graph_ids = [{c.local_id: c.id for c in paper.comps} for paper in items]
        labels, gold = SCIARG_LABELS, sum(len(p.gold) for p in items)
    rows = [
        PredictedRelation(source=g[s], target=g[t], label=labels[lab], score=prediction_score(p), scheme_label=lab)
        for g, rels in zip(graph_ids, raw, strict=True)
        for s, t, lab, p in rels
    ]
    return rows, items, raw, gold


def job_for(scope: Scope, loaded: LoadedModel, objective: str) -> PredictionJob:
    """The prediction job of ``loaded`` on ``scope``: its run id depends on model, version, objective and discourses."""
    params: dict[str, Any] = {
        "model_dir": str(loaded.path),
        "family": scope.family,
        "objective": objective,
        "corpus": scope.corpus if scope.dialogue is None else None,
        "dialogue": scope.dialogue,
        "discourses": len(scope.ids),
    }
    parts = ("relations", TASK, loaded.name, loaded.version, objective, scope.corpus, scope.dialogue or "", *scope.ids)
    return PredictionJob(TASK, loaded.name, loaded.version, parts, params)


def predict(
    graph: Graph,
    *,
    corpus: str | None = None,
    dialogue: str | None = None,
    model_dir: Path | None = None,
    objective: str = GRAPH_OBJECTIVE,
    write: bool = False,
    reporter: Reporter = SILENT,
) -> dict[str, Any]:
    """Predict argument relations for a corpus or one dialogue/document of the graph.

    Args:
        graph: The graph.
        corpus: Every dialogue/document of this corpus.
        dialogue: One dialogue/document (graph id or local id).
        model_dir: A relations model directory (default: the trained one of the settings, else the shipped one).
        objective: The QT30 decision biases (:data:`gnn.relations.qt30_task.OBJECTIVES`): ``shares``
            (default: each relation type's predicted count near its gold count, as people count
            supports and attacks in the graph), or ``general`` / ``focused``, tuned for that DialAM score.
        write: Store the predictions as one prediction run (origin ``predicted``, model, version,
            score, run id); gold relations are untouched. A run already in the graph is not predicted again.
        reporter: Progress lines.

    Returns:
        ``run_id``, ``model``, ``model_version``, ``family``, ``corpus``, ``dialogues``,
        ``predicted`` (relations), ``by_label``, ``gold`` (gold relations in scope),
        ``scores_against_gold``, ``written`` and ``already_present`` (the run is in the graph
        already; with ``write`` nothing is then predicted or written).

    Raises:
        ApiError: Not exactly one of corpus / dialogue, an unknown objective,
            a model directory that is not one, or nothing to predict over.
        NotFoundError: Unknown corpus or dialogue.
    """
    from gnn.relations.qt30_task import OBJECTIVES

    if objective not in OBJECTIVES:
        raise ApiError(f"unknown objective {objective!r}; expected one of {', '.join(OBJECTIVES)}")
    scope = resolve_scope(graph, corpus, dialogue)
    loaded = load_for(graph.settings, scope.family, model_dir)
    job = job_for(scope, loaded, objective)
    run, present = job.pick(graph)
    result: dict[str, Any] = {
        "run_id": run.run_id,
        "model": run.model,
        "model_version": run.model_version,
        "model_dir": str(loaded.path),
        "family": scope.family,
        "objective": objective,
        "corpus": scope.corpus,
        "dialogues": len(scope.ids),
        "predicted": None,
        "by_label": {},
        "gold": None,
        "scores_against_gold": None,
        "written": False,
        "already_present": present is not None,
    }
    if write and present is not None:
        reporter.log(f"run {run.run_id} of {run.model} {run.model_version} is in the graph already: nothing written")
        return {**result, "predicted": present}
    rows: list[PredictedRelation] = []
    inputs: list[Any] = []
    raw: list[Any] = []
    gold = 0
    with reporter.progress(f"{scope.corpus}: discourses predicted", len(scope.ids)) as advance:
        for start in range(0, len(scope.ids), DISCOURSE_BATCH):
            chunk = scope.ids[start : start + DISCOURSE_BATCH]
            nodes, edges = _read_chunk(graph, scope.family, chunk)
            got, items, preds, n_gold = _predict_chunk(loaded, scope.family, nodes, edges, objective)
            rows += got
            inputs += items
            raw += preds
            gold += n_gold
            advance(len(chunk))
    if not inputs:
        what = {AIF: "propositions (I-nodes)", SCIARG: "argument components", MARG: "sentences"}[scope.family]
        raise ApiError(f"nothing to predict: no {what} in {scope.dialogue or 'corpus ' + scope.corpus}")
    by_label = Counter(r.label.value for r in rows)
    result.update(predicted=len(rows), by_label=dict(sorted(by_label.items())), dialogues=len(inputs))
    # M-Arg's annotated pairs score the predictions even when all of them are Neither.
    annotated = scope.family == MARG and any(pairs for _, pairs in inputs)
    if gold or annotated:
        result["gold"] = gold
        result["scores_against_gold"] = _scores(scope.family, inputs, raw)
    if write:
        result |= job.write(graph, rows, "predicted argument relations", reporter, run)
    return result


def _scores(family: str, inputs: list[Any], raw: list[Any]) -> dict[str, Any]:
    """Scores of the predictions against the gold relations in scope (DialAM official-style, or BAM's R)."""
    if family == AIF:
        from gnn.relations.qt30_run import score_maps

        return score_maps(inputs, raw)
    if family == MARG:
        from gnn.relations.marg_task import score_transfer

        return score_transfer([p for _, pairs in inputs for p in pairs], raw)
    from gnn.relations.sciarg_task import score_papers

    return score_papers(inputs, raw)
