"""``argweb evaluate bam`` on the hand-made fixture: JSON figures, table and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli.main import app

DATA = Path(__file__).resolve().parent.parent / "data" / "bam"
runner = CliRunner()


def test_json_output() -> None:
    result = runner.invoke(
        app, ["evaluate", "bam", "--pred", str(DATA / "pred"), "--gold", str(DATA / "gold"), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["system"]["S"] == pytest.approx(2 / 3)
    assert data["system"]["B"] == pytest.approx(1 - 2.5 / 7)
    assert data["system"]["C"] == pytest.approx(2 / 7)
    assert data["system"]["R"] == pytest.approx(0.4)
    assert data["baseline"]["S"] == 1.0


def test_table_output() -> None:
    result = runner.invoke(app, ["evaluate", "bam", "--pred", str(DATA / "pred"), "--gold", str(DATA / "gold")])
    assert result.exit_code == 0, result.output
    assert "most-frequent label" in result.stdout and "0.643" in result.stdout


def test_bad_input_is_a_client_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["evaluate", "bam", "--pred", str(tmp_path), "--gold", str(DATA / "gold")])
    assert result.exit_code == 2
    assert "no brat" in result.output
