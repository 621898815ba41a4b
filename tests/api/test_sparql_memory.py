"""A SPARQL worker that runs out of its memory limit is reported as such (issue 35, finding 15),
not as the time limit, and leaves no process behind."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from api.services.query import run_sparql
from ontology.errors import QueryLimitError
from ontology.sparql import load_store
from ontology.sparql_run import running_workers


def test_a_worker_out_of_memory_is_the_memory_limit(tmp_path: Path) -> None:
    data = tmp_path / "data.nt"
    data.write_text("".join(f'<urn:s{i}> <urn:p> "{i}" .\n' for i in range(4000)), encoding="utf-8")
    load_store(tmp_path / "store", data)
    # Sorting 16 million solutions needs far more than 400 MB; the time limit is far away.
    started = time.perf_counter()
    with pytest.raises(QueryLimitError) as caught:
        run = run_sparql(
            tmp_path / "store",
            "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?c ?f",
            timeout=120,
            memory_mb=400,
        )
        run.collect(10**10)
    assert "exceeded the memory limit of 400 MB" in str(caught.value)
    assert time.perf_counter() - started < 60
    assert running_workers() == 0
