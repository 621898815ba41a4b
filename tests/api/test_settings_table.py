"""docs/operations.md documents every setting: its table is the one generated from Settings."""

from __future__ import annotations

from pathlib import Path

from api.settings import Settings
from api.settings_table import markdown

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def test_the_operations_page_holds_the_current_settings_table() -> None:
    assert markdown() in OPERATIONS.read_text(encoding="utf-8"), "run: python -m api.settings_table"


def test_every_setting_has_a_row_with_a_description() -> None:
    rows = [line for line in markdown().splitlines() if line.startswith("| `ARGWEB_")]
    assert len(rows) == len(Settings.model_fields)
    assert all(not row.rstrip().endswith("|  |") for row in rows)
