"""Predicted against gold on a map and over a corpus, read in READ mode.

The matching itself is :func:`ontology.comparison.compare` (its docstring and
docs/graph-model.md give the rules); this module reads from Neo4j what it compares. Shared by
``GET /discourses/{id}/comparison`` (the explorer's compare view), ``argweb corpus stats
--predicted`` and the dashboard.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from neo4j import Driver

from graphstore import browse, cypher
from graphstore.readonly import ReadRunner
from ontology.comparison import (
    ComparedRelation,
    Matching,
    MissedEdge,
    TypeScore,
    compare,
    edge_type,
    run_scope,
)
from ontology.errors import NotFoundError
from ontology.terms import Label, Prop
from ontology.views import most_specific


@dataclass(frozen=True)
class RunInfo:
    """A prediction run as a comparison names it.

    Attributes:
        run_id: The run.
        model: Model name.
        model_version: Model version.
        task: What it predicts.
        created_at: When it was made (ISO 8601).
        relations: Its predicted relations on the map (or in the corpus) compared.
        classes: The classes it predicts (its scope: :func:`ontology.comparison.run_scope`).
    """

    run_id: str
    model: str
    model_version: str
    task: str
    created_at: str
    relations: int
    classes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class MapComparison:
    """One run's predicted relations on a map against the map's gold ones.

    Attributes:
        discourse: The map (dialogue or document id).
        run: The run compared.
        runs: Every run with predicted relations on the map, newest first.
        types: Scores per edge type.
        micro: Scores over all types.
        marks: Mark of each compared relation (``match``, ``other_type``, ``unmatched`` for
            predicted ones; ``found``, ``partly``, ``missed`` for gold ones).
        missed: Gold edges no prediction of the run matches.
    """

    discourse: str
    run: RunInfo
    runs: list[RunInfo]
    types: list[TypeScore]
    micro: TypeScore
    marks: dict[str, str]
    missed: list[MissedEdge]


@dataclass(frozen=True)
class CorpusComparison:
    """One run against gold over the maps of a corpus it covers (micro over those maps).

    Attributes:
        corpus: The corpus.
        run: The run.
        maps: Maps with at least one of its predictions (their gold relations are compared).
        types: Scores per edge type.
        micro: Scores over all types.
    """

    corpus: str
    run: RunInfo
    maps: int
    types: list[TypeScore]
    micro: TypeScore


def _relation(row: dict[str, Any]) -> ComparedRelation:
    return ComparedRelation(
        id=row["id"],
        type=edge_type(most_specific(row["labels"]), row["sense"]),
        sources=tuple(sorted(row["sources"] or ())),
        targets=tuple(sorted(row["targets"] or ())),
    )


def _runs(reader: ReadRunner, counts: dict[str, int]) -> list[RunInfo]:
    """The runs ``counts`` names (run id -> relations), newest first."""
    out = []
    for row in reader.rows(cypher.comparison_runs(), "prediction runs", runs=sorted(counts)):
        p = row["props"]
        by_class = json.loads(p.get(Prop.COUNTS.value) or "{}").get("by_class", {})
        out.append(
            RunInfo(
                run_id=p[Prop.RUN_ID.value],
                model=p[Prop.MODEL.value],
                model_version=p[Prop.MODEL_VERSION.value],
                task=p.get(Prop.TASK.value) or "",
                created_at=p.get(Prop.CREATED_AT.value) or "",
                relations=counts[p[Prop.RUN_ID.value]],
                classes=sorted(run_scope(by_class)),
            )
        )
    out.sort(key=lambda r: (r.created_at, r.run_id), reverse=True)
    return out


def _pick(runs: list[RunInfo], run: str | None, where: str) -> RunInfo:
    if not runs:
        raise NotFoundError(f"no prediction run has relations on {where}: nothing to compare with gold")
    if run is None:
        return runs[0]
    for r in runs:
        if r.run_id == run:
            return r
    raise NotFoundError(
        f"prediction run {run!r} has no relations on {where}; runs there: {', '.join(r.run_id for r in runs)}"
    )


def map_comparison(reader: ReadRunner, discourse: str, run: str | None = None) -> MapComparison:
    """Compare a run's predicted relations on a map with the map's gold relations.

    Args:
        reader: Reads in READ mode.
        discourse: The map's id (or local id).
        run: The run (default: the newest with relations on the map).

    Raises:
        NotFoundError: No such map, no run on it, or ``run`` has no relations on it.
    """
    found = reader.rows(browse.discourse_node(), "discourse", id=discourse)
    if not found:
        raise NotFoundError(f"no dialogue or document {discourse!r} in the graph")
    map_id = str(found[0]["id"])
    rows = reader.rows(cypher.comparison_map_relations(), "map relations", id=map_id)
    counts: dict[str, int] = {}
    for r in rows:
        if r["origin"] == "predicted" and r["run"]:
            counts[r["run"]] = counts.get(r["run"], 0) + 1
    runs = _runs(reader, counts)
    chosen = _pick(runs, run, f"map {map_id}")
    gold = [_relation(r) for r in rows if r["origin"] == "gold"]
    predicted = [_relation(r) for r in rows if r["origin"] == "predicted" and r["run"] == chosen.run_id]
    matching = compare(gold, predicted, frozenset(chosen.classes))
    return MapComparison(
        discourse=map_id,
        run=chosen,
        runs=runs,
        types=matching.counts.types(),
        micro=matching.counts.micro(),
        marks=matching.marks,
        missed=matching.missed,
    )


def _corpus_matching(reader: ReadRunner, corpus: str, run: RunInfo) -> tuple[Matching, int]:
    classes = [*run.classes, Label.NonRelation.value]
    rows = reader.rows(
        cypher.comparison_corpus_relations(), "corpus relations", corpus=corpus, run=run.run_id, classes=classes
    )
    predicted_rows = [r for r in rows if r["origin"] == "predicted"]
    # Maps the run covers: those of its predictions (a "no relation" prediction covers its map too).
    covered = {d for r in predicted_rows for d in r["discourses"]}
    gold = [_relation(r) for r in rows if r["origin"] == "gold" and covered.intersection(r["discourses"])]
    return compare(gold, [_relation(r) for r in predicted_rows], frozenset(run.classes)), len(covered)


def corpus_comparisons(reader: ReadRunner, corpus: str) -> list[CorpusComparison]:
    """Every run with relations in ``corpus`` against gold, over the maps it covers (newest run first)."""
    counts = {
        str(r["run"]): int(r["n"])
        for r in reader.rows(cypher.comparison_corpus_runs(), "corpus runs", corpus=corpus)
        if r["run"]
    }
    out = []
    for run in _runs(reader, counts):
        matching, maps = _corpus_matching(reader, corpus, run)
        out.append(CorpusComparison(corpus, run, maps, matching.counts.types(), matching.counts.micro()))
    return out


def all_corpus_comparisons(reader: ReadRunner, corpora: Iterable[str]) -> list[CorpusComparison]:
    """:func:`corpus_comparisons` of each corpus of ``corpora``, in that order."""
    return [c for corpus in corpora for c in corpus_comparisons(reader, corpus)]


def graph_comparisons(driver: Driver, database: str = "neo4j", timeout: float = 600.0) -> list[CorpusComparison]:
    """:func:`corpus_comparisons` of every corpus in the graph (for ``argweb corpus stats --predicted``).

    Args:
        driver: An open Neo4j driver.
        database: Database name.
        timeout: Seconds each read may take (a whole corpus is read at once).
    """
    reader = ReadRunner(driver, database, timeout)
    corpora = sorted(str(r["id"]) for r in reader.rows(cypher.corpora(), "corpora"))
    return all_corpus_comparisons(reader, corpora)
