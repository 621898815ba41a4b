"""``argweb agreement`` refuses a trust threshold outside [0, 1] before it touches the graph (no Neo4j)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from api.cli.main import app


@pytest.mark.parametrize("value", ["1.5", "-0.1", "80"])
def test_min_trust_outside_the_trust_scale_is_a_usage_error(value: str) -> None:
    result = CliRunner().invoke(app, ["agreement", "m-arg", "--min-trust", value])
    assert result.exit_code == 2
    assert "Invalid value for '--min-trust'" in result.output
