"""``ontology/terms.py`` is generated from ``ontology/argweb.ttl`` and must be fresh."""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ontology import codegen

ROOT = Path(__file__).resolve().parents[2]

EXTRA_CLASS = """
aw:TestOnlyThing a owl:Class ; rdfs:subClassOf aw:Node ;
    rdfs:label "test-only thing"@en ;
    aw:neo4jLabel "TestOnlyThing" .
"""
ORIGINAL_RENDER = codegen.render


def test_committed_terms_are_fresh() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ontology.codegen", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_render_reproduces_terms_file() -> None:
    assert codegen.render() == codegen.TERMS_FILE.read_text(encoding="utf-8")


def test_a_changed_ontology_renders_differently(tmp_path: Path) -> None:
    changed = tmp_path / "argweb.ttl"
    changed.write_text(codegen.ONTOLOGY_FILE.read_text(encoding="utf-8") + EXTRA_CLASS, encoding="utf-8")
    text = codegen.render(changed)
    assert text != codegen.TERMS_FILE.read_text(encoding="utf-8")
    assert '    TestOnlyThing = "TestOnlyThing"' in text
    assert "    Label.TestOnlyThing: (Label.Node,)," in text


def test_check_detects_a_stale_terms_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "terms.py"
    shutil.copyfile(codegen.TERMS_FILE, stale)
    monkeypatch.setattr(codegen, "TERMS_FILE", stale)
    monkeypatch.setattr(sys, "argv", ["codegen", "--check"])
    assert codegen.main() == 0

    changed = tmp_path / "argweb.ttl"
    changed.write_text(codegen.ONTOLOGY_FILE.read_text(encoding="utf-8") + EXTRA_CLASS, encoding="utf-8")
    # main() renders through the module-level render(); make it read the changed ontology.
    monkeypatch.setattr(codegen, "render", functools.partial(ORIGINAL_RENDER, changed))
    before = stale.read_text(encoding="utf-8")
    assert codegen.main() == 1
    assert stale.read_text(encoding="utf-8") == before  # --check never writes

    monkeypatch.setattr(sys, "argv", ["codegen"])
    assert codegen.main() == 0
    assert "TestOnlyThing" in stale.read_text(encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["codegen", "--check"])
    assert codegen.main() == 0
