"""The SPARQL worker (one process per query) starts without building argweb's record models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def test_the_worker_imports_neither_the_records_nor_the_rdf_mapper() -> None:
    # What ontology.sparql_worker imports before it reads a query, in a fresh interpreter.
    code = (
        "import sys; import ontology.sparql_worker, ontology.sparql, ontology.errors, ontology.namespaces; "
        "print(sorted(m for m in ('ontology.records', 'ontology.rdf', 'pydantic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
    # The one prefix table is the one the RDF mapper writes with.
    from ontology import namespaces, rdf

    assert rdf.PREFIXES is namespaces.PREFIXES
