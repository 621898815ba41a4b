"""Write one prediction run into a Neo4j (a child process for the predictions crash drill).

Usage: ``python -m tests.integration.predict_writer PORT PASSWORD RUN_ID BATCH_SIZE``: one
``support`` prediction between each pair of consecutive qt30 locutions, in batches of BATCH_SIZE.
"""

from __future__ import annotations

import itertools
import sys

from graphstore.predictions import PredictionStore
from graphstore.runtime import connect
from ontology.labels import RelationLabel
from ontology.records import PredictedRelation, PredictionRun


def relations(ids: list[str]) -> list[PredictedRelation]:
    """The drill's predictions over ``ids`` (sorted locution ids)."""
    return [
        PredictedRelation(source=a, target=b, label=RelationLabel("support"), score=0.5)
        for a, b in itertools.pairwise(ids)
    ]


def main(port: str, password: str, run_id: str, batch_size: str) -> None:
    driver = connect(f"bolt://127.0.0.1:{port}", "neo4j", password)
    try:
        rows, _, _ = driver.execute_query("MATCH (l:Locution {corpus: 'qt30'}) RETURN l.id AS id ORDER BY id")
        run = PredictionRun(run_id=run_id, model="drill", model_version="1", task="relations", parameters={})
        report = PredictionStore(driver, batch_size=int(batch_size)).write(run, relations([r["id"] for r in rows]))
        print(f"written {report.written}")
    finally:
        driver.close()


if __name__ == "__main__":
    main(*sys.argv[1:5])
