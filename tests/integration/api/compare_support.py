"""Two prediction runs on the largest QT30 sample map, and predicted against gold computed from the
graph's edges by this module's own Cypher (independent of graphstore.comparisons)."""

from __future__ import annotations

from dataclasses import dataclass

from neo4j import Driver

from graphstore.predictions import PredictionStore
from ontology.labels import RelationLabel
from ontology.records import PredictedRelation, PredictionRun

MODEL_A, MODEL_B = "test-compare-a", "test-compare-b"
RUN_A, RUN_B = "run-compare-a", "run-compare-b"
CLASSES = ("Support", "Attack")

# Gold edges of the map: each source-target pair of a gold Support or Attack that is part of the
# map or touches one of its units.
_GOLD = (
    "MATCH (s)-[:AIF_EDGE]->(r:Relation)-[:AIF_EDGE]->(t) "
    "WHERE (r:Support OR r:Attack) AND coalesce(r.origin, 'gold') = 'gold' "
    "AND ((r)-[:PART_OF]->(:Discourse {id: $map}) OR (s)-[:PART_OF]->(:Discourse {id: $map}) "
    "OR (t)-[:PART_OF]->(:Discourse {id: $map})) "
    "RETURN DISTINCT r.id AS id, s.id AS s, t.id AS t, CASE WHEN r:Support THEN 'Support' ELSE 'Attack' END AS type"
)
_PREDICTED = (
    "MATCH (s)-[:AIF_EDGE]->(r:Relation {run_id: $run})-[:AIF_EDGE]->(t) WHERE r:Support OR r:Attack "
    "RETURN r.id AS id, s.id AS s, t.id AS t, CASE WHEN r:Support THEN 'Support' ELSE 'Attack' END AS type"
)


@dataclass(frozen=True)
class ComparedMap:
    """The map the runs were written on and what each predicted relation should be marked."""

    map_id: str
    marks: dict[str, str]


def largest_qt30_map(driver: Driver) -> str:
    records, _, _ = driver.execute_query(
        "MATCH (u:Proposition)-[:PART_OF]->(d:Dialogue {corpus: 'qt30'}) "
        "RETURN d.id AS id, count(u) AS n ORDER BY n DESC, id LIMIT 1"
    )
    return str(records[0]["id"])


def write_runs(driver: Driver) -> ComparedMap:
    """Run A (Support and Attack): three gold Support edges as Support, a fourth as Attack, and
    two propositions gold does not link as Support. Run B (newer): one gold Support edge."""
    map_id = largest_qt30_map(driver)
    gold, _, _ = driver.execute_query(_GOLD, map=map_id)
    support = sorted((r["s"], r["t"]) for r in gold if r["type"] == "Support")
    assert len(support) >= 4, f"{map_id} has too few gold Support edges for the test"
    linked = {frozenset((r["s"], r["t"])) for r in gold}
    props, _, _ = driver.execute_query(
        "MATCH (p:Proposition)-[:PART_OF]->(:Discourse {id: $map}) RETURN p.id AS id ORDER BY id", map=map_id
    )
    ids = [r["id"] for r in props]
    free = next((a, b) for a in ids for b in ids if a != b and frozenset((a, b)) not in linked)
    rows = [PredictedRelation(source=s, target=t, label=RelationLabel.SUPPORT, score=0.9) for s, t in support[:3]]
    rows.append(PredictedRelation(source=support[3][0], target=support[3][1], label=RelationLabel.ATTACK, score=0.6))
    rows.append(PredictedRelation(source=free[0], target=free[1], label=RelationLabel.SUPPORT, score=0.55))
    store = PredictionStore(driver)
    store.write(PredictionRun(run_id=RUN_A, model=MODEL_A, model_version="1", task="relations"), rows)
    store.write(
        PredictionRun(run_id=RUN_B, model=MODEL_B, model_version="1", task="relations"),
        [PredictedRelation(source=support[0][0], target=support[0][1], label=RelationLabel.SUPPORT, score=0.8)],
    )
    marks = ["match", "match", "match", "other_type", "unmatched"]
    return ComparedMap(map_id, {f"pred:{RUN_A}:{i}": mark for i, mark in enumerate(marks)})


def delete_runs(driver: Driver) -> None:
    store = PredictionStore(driver)
    for model in (MODEL_A, MODEL_B):
        store.delete(model)


def expected(driver: Driver, map_id: str, run: str) -> dict[str, tuple[int, int, int, int, int]]:
    """Per type and ``micro``: (gold, predicted, matched, other type, missed), from the graph's edges."""
    gold_rows, _, _ = driver.execute_query(_GOLD, map=map_id)
    pred_rows, _, _ = driver.execute_query(_PREDICTED, run=run)
    gold = {(r["s"], r["t"], r["type"]) for r in gold_rows}
    pred = {(r["s"], r["t"], r["type"]) for r in pred_rows}
    ends = {(s, t) for s, t, _ in gold}
    out: dict[str, tuple[int, int, int, int, int]] = {}
    for k in CLASSES:
        g = {e for e in gold if e[2] == k}
        p = {e for e in pred if e[2] == k}
        if g or p:
            matched = len(g & p)
            other = len({e for e in p - g if e[:2] in ends})
            out[k] = (len(g), len(p), matched, other, len(g) - matched)
    out["micro"] = tuple(sum(v[i] for v in out.values()) for i in range(5))  # type: ignore[assignment]
    return out
