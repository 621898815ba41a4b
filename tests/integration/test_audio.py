"""argweb features audio on timed utterances stored in a real Neo4j."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gnn.audio import (
    load_features,
)
from graphstore.runtime import EmbeddedNeo4j
from graphstore.store import GraphStore
from tests.conftest import PASSWORD
from tests.gnn.test_audio import _recording, _reference, _row, _timed_bundle


def test_cli_features_audio(neo4j_server: EmbeddedNeo4j, store: GraphStore, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from api.cli.main import app

    store.ingest(_timed_bundle())
    audio_dir = tmp_path / "audio"
    audio_dir.mkdir()
    _recording(audio_dir / "00.wav", 10.0, seed=3)
    (audio_dir / "split audio").mkdir()
    _recording(audio_dir / "split audio" / "us_election_2020_1st_presidential_debate_part2.wav", 10.0, seed=4)
    info = neo4j_server.info()
    assert info is not None
    env = {"ARGWEB_NEO4J_URI": info.uri, "ARGWEB_NEO4J_PASSWORD": PASSWORD}
    cache = tmp_path / "cache"
    args = ["features", "audio", "--corpus", "m-arg", "--audio-dir", str(audio_dir), "--cache-dir", str(cache)]
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "part 02: no recording" in out and "6 utterances computed" in out
    ids, matrix, _ = load_features(cache)
    assert sorted(ids) == sorted(f"m-arg:n{p}{k:04d}:L" for p in ("00", "01") for k in range(3))
    assert np.isfinite(matrix).all()
    # The features of part 00 are those of the utterance computed directly.
    ref = _reference(audio_dir / "00.wav", 3.0, 4.5)
    assert _row(ids, matrix, "m-arg:n000001:L")[0] == pytest.approx(float(ref["spectral_centroid"].mean()), rel=1e-4)
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0 and "0 utterances computed, 6 already cached" in " ".join(result.output.split())
    result = CliRunner().invoke(app, [*args[:5], str(tmp_path / "none")], env=env)
    assert result.exit_code == 2 and "none: no such directory" in " ".join(result.output.split())
