"""Bulk load service and CLI refusals that need no database."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli.main import app
from api.services.corpora import bulk_load
from api.services.graph import Graph, private_settings
from ontology.errors import ApiError
from ontology.formats.registry import SAMPLES


def test_bulk_load_is_refused_for_an_external_server(tmp_path: Path) -> None:
    settings = private_settings(tmp_path, "pw-unused").model_copy(update={"neo4j_uri": "bolt://127.0.0.1:9"})
    parsed: list[str] = []
    with pytest.raises(ApiError, match="external server"):
        bulk_load(Graph(settings), [lambda: parsed.append("x")])  # type: ignore[list-item]
    assert parsed == []  # refused before parsing anything
    assert not (tmp_path / "neo4j").exists()


def test_cli_bulk_ingest_on_an_external_server_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from api.settings import get_settings

    monkeypatch.setenv("ARGWEB_NEO4J_URI", "bolt://127.0.0.1:9")
    monkeypatch.setenv("ARGWEB_DATA_DIR", str(tmp_path))
    get_settings.cache_clear()
    try:
        sample = SAMPLES / "molweni"
        result = CliRunner().invoke(app, ["ingest", "molweni", str(sample), "--bulk"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 2, result.output
    assert "bulk load refused" in result.output
