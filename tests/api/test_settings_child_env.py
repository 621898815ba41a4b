"""The background API gets exactly the settings of the process that started it."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.settings import Settings


def test_child_env_round_trips_every_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    given = Settings(
        data_dir=Path("rel/data"),
        api_key="k3y",
        cors_origins=["http://a.example"],
        neo4j_port=7999,
        api_port=8123,
        allow_sparql_service=True,
        _env_file=None,
    )
    env = given.child_env()
    assert env["ARGWEB_DATA_DIR"] == str(tmp_path / "rel" / "data")
    assert "ARGWEB_NEO4J_URI" not in env  # unset stays unset (embedded server)
    for key, value in env.items():
        if key.startswith("ARGWEB_"):
            monkeypatch.setenv(key, value)
    child = Settings(_env_file=None)
    assert child.model_dump() == given.with_overrides(data_dir=tmp_path / "rel" / "data").model_dump()
    assert child.api_key is not None and child.api_key.get_secret_value() == "k3y"
