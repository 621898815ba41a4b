"""The format readers and writers are pure: importing them loads neither Neo4j nor another argweb layer."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.unit


def test_every_format_module_imports_without_neo4j_graphstore_gnn_or_api() -> None:
    # A fresh interpreter: this test process has long since imported the driver and the API.
    script = (
        "import pkgutil, importlib, sys\n"
        "import ontology.formats as f\n"
        "names = [m.name for m in pkgutil.iter_modules(f.__path__)]\n"
        "for n in names: importlib.import_module('ontology.formats.' + n)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'neo4j', 'graphstore', 'gnn', 'api'})\n"
        "print(len(names), bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    count, bad = out.strip().split(" ", 1)
    assert int(count) >= 12, out
    assert bad == "[]", out
