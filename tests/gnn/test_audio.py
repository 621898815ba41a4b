"""Audio features: generated recordings, checked against librosa called directly."""

from __future__ import annotations

from pathlib import Path

import librosa
import numpy as np
import pytest
import soundfile as sf

from gnn.audio import (
    FeatureConfig,
    Segment,
    compute_features,
    find_part_audio,
    load_features,
    plan_segments,
    read_cache,
    utterance_vector,
)
from ontology.errors import ModelError
from ontology.records import CorpusBundle, CorpusRecord, DiscourseRecord, LocutionRecord, NodeRecord
from ontology.views import NodeView, UnitView

SR = 22050


def _recording(path: Path, seconds: float, sr: int = SR, seed: int = 0) -> Path:
    """Tones that change every 2 s over a little noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    freq = 220.0 * (1 + (t // 2.0) % 4)
    y = 0.4 * np.sin(2 * np.pi * freq * t) + 0.05 * rng.standard_normal(t.size)
    sf.write(path, y.astype(np.float32), sr)
    return path


def _reference(path: Path, start: float, end: float, buffer: float = 2.0) -> dict[str, np.ndarray]:
    """The M-Arg paper's per-frame features, computed with librosa's own functions on the clip."""
    y, sr = librosa.load(path, sr=SR)
    lo, hi = max(0.0, start - buffer), min(len(y) / sr, end + buffer)
    clip = y[round(lo * sr) : round(hi * sr)]
    return {
        "spectral_centroid": librosa.feature.spectral_centroid(y=clip, sr=sr),
        "spectral_bandwidth": librosa.feature.spectral_bandwidth(y=clip, sr=sr),
        "spectral_rolloff": librosa.feature.spectral_rolloff(y=clip, sr=sr),
        "spectral_contrast": librosa.feature.spectral_contrast(y=clip, sr=sr),
        "chroma": librosa.feature.chroma_stft(y=clip, sr=sr),
        "mfcc": librosa.feature.mfcc(y=clip, sr=sr, n_mfcc=25)[2:],
    }


def _row(ids: list[str], matrix: np.ndarray, uid: str) -> np.ndarray:
    return matrix[ids.index(uid)]


def test_features_match_librosa(tmp_path: Path) -> None:
    audio = _recording(tmp_path / "part.wav", 20.0)
    # Utterances inside the file, at its start (left buffer clamped) and at its end (right clamped).
    spans = {"mid": (6.3, 9.1), "first": (0.5, 2.0), "last": (18.2, 19.9)}
    segments = [Segment(uid, audio, s, e) for uid, (s, e) in spans.items()]
    report = compute_features(segments, tmp_path / "cache")
    assert (report.computed, report.cached, report.files) == (3, 0, 1)
    ids, matrix, columns = load_features(tmp_path / "cache")
    config = FeatureConfig()
    assert columns == config.columns() and len(columns) == 90 and matrix.shape == (3, 90)
    assert columns[:3] == ["spectral_centroid_mean", "spectral_bandwidth_mean", "spectral_rolloff_mean"]
    for uid, (start, end) in spans.items():
        ref = _reference(audio, start, end)
        row = dict(zip(columns, _row(ids, matrix, uid), strict=True))
        stacked = np.concatenate(list(ref.values()))
        assert stacked.shape[0] == 45
        for stat, fn in (("mean", np.mean), ("std", np.std)):
            expected = fn(stacked, axis=1)
            got = np.array([row[f"{name}_{stat}"] for name in config.frame_names()])
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
        assert row["chroma_A_mean"] == pytest.approx(float(ref["chroma"][9].mean()), rel=1e-4)
        assert row["mfcc_2_std"] == pytest.approx(float(ref["mfcc"][0].std()), rel=1e-4, abs=1e-4)


def test_buffer_and_resampling_follow_config(tmp_path: Path) -> None:
    audio = _recording(tmp_path / "p44.wav", 12.0, sr=44100)
    config = FeatureConfig(buffer_s=0.5, statistics=("mean", "max"))
    compute_features([Segment("u", audio, 4.0, 6.0)], tmp_path / "c", config)
    _, matrix, columns = load_features(tmp_path / "c")
    y, sr = librosa.load(audio, sr=SR)
    clip = y[round(3.5 * sr) : round(6.5 * sr)]
    centroid = librosa.feature.spectral_centroid(y=clip, sr=sr)
    assert columns[-1] == "mfcc_24_max"
    row = dict(zip(columns, matrix[0], strict=True))
    assert row["spectral_centroid_mean"] == pytest.approx(float(centroid.mean()), rel=1e-4)
    assert row["spectral_centroid_max"] == pytest.approx(float(centroid.max()), rel=1e-4)


def test_cache_is_per_file_and_resumable(tmp_path: Path) -> None:
    a = _recording(tmp_path / "a.wav", 10.0, seed=1)
    b = _recording(tmp_path / "b.wav", 10.0, seed=2)
    cache = tmp_path / "cache"
    first = [Segment("a1", a, 1.0, 2.0), Segment("a2", a, 3.0, 4.5), Segment("b1", b, 2.0, 3.0)]
    done: list[int] = []
    report = compute_features(first, cache, progress=done.append, checkpoint_every=1)
    assert report.computed == 3 and sum(done) == 3
    assert sorted(p.name for p in cache.glob("*.npz")) == ["a.npz", "b.npz"]
    before = read_cache(cache / "a.npz", FeatureConfig())
    # Second run: the cached utterances are skipped (b.wav is not even decoded: deleting it is fine).
    b.unlink()
    more = [*first, Segment("a3", a, 6.0, 8.0)]
    done.clear()
    report = compute_features(more, cache, progress=done.append)
    assert (report.computed, report.cached) == (1, 3) and sum(done) == 4
    ids, matrix = read_cache(cache / "a.npz", FeatureConfig())
    assert ids == ["a1", "a2", "a3"]
    np.testing.assert_array_equal(matrix[:2], before[1])
    # A cache computed with other settings is reported, not silently mixed.
    with pytest.raises(ModelError, match=r"a\.npz: cached with other settings"):
        compute_features(more, cache, FeatureConfig(n_mfcc=13))


def test_missing_and_undecodable_audio(tmp_path: Path) -> None:
    missing = tmp_path / "nope.mp3"
    with pytest.raises(ModelError, match=r"nope\.mp3: audio file not found"):
        compute_features([Segment("u", missing, 0.0, 1.0)], tmp_path / "cache")
    broken = tmp_path / "broken.mp3"
    broken.write_bytes(b"this is not audio at all" * 100)
    with pytest.raises(ModelError, match=r"broken\.mp3: cannot decode audio"):
        compute_features([Segment("u", broken, 0.0, 1.0)], tmp_path / "cache")
    assert not list(tmp_path.glob("cache/*.npz"))


def test_bad_segments_name_file_and_utterance(tmp_path: Path) -> None:
    audio = _recording(tmp_path / "short.wav", 5.0)
    with pytest.raises(ModelError, match=r"short\.wav: utterance late: segment 30\.000-31\.000 s lies outside"):
        compute_features([Segment("late", audio, 30.0, 31.0)], tmp_path / "cache")
    with pytest.raises(ModelError, match=r"invalid segment start=3\.0 end=2\.0"):
        compute_features([Segment("back", audio, 3.0, 2.0)], tmp_path / "cache")
    with pytest.raises(ModelError, match="given twice"):
        compute_features([Segment("x", audio, 1.0, 2.0), Segment("x", audio, 2.0, 3.0)], tmp_path / "cache")
    y = np.zeros(SR, dtype=np.float32)
    with pytest.raises(ModelError, match="invalid segment"):
        utterance_vector(y, float("nan"), 1.0, FeatureConfig())


def test_config_is_checked() -> None:
    with pytest.raises(ModelError, match="unknown statistic"):
        FeatureConfig(statistics=("mean", "kurtosis"))
    with pytest.raises(ModelError, match="mfcc_skip"):
        FeatureConfig(n_mfcc=2, mfcc_skip=2)


def _timed_bundle() -> CorpusBundle:
    """M-Arg-shaped locutions with times in parts 00 (as ``00.wav``), 01 (official name), 02 (no audio)."""
    c = "m-arg"
    nodes: list[NodeRecord] = []
    for part in ("00", "01", "02"):
        d = f"{c}:part:{part}"
        nodes.append(DiscourseRecord(id=d, corpus=c, kind="Dialogue", local_id=part, part=part))
        for k in range(3):
            sid = f"n{part}{k:04d}"
            nodes.append(
                LocutionRecord(
                    id=f"{c}:{sid}:L",
                    corpus=c,
                    discourse=d,
                    local_id=sid,
                    text=f"sentence {k}",
                    start_time=1.0 + 2 * k,
                    end_time=2.5 + 2 * k,
                )
            )
    nodes.append(LocutionRecord(id=f"{c}:untimed", corpus=c, discourse=f"{c}:part:00", local_id="n009999"))
    return CorpusBundle(CorpusRecord(id=c, corpus=c, name="m-arg test"), nodes)


@pytest.mark.unit
def test_utterances_find_the_recording_of_their_part_once_per_part(tmp_path: Path) -> None:
    (tmp_path / "split audio").mkdir()
    official = tmp_path / "split audio" / "debate_part1.mp3"
    official.write_bytes(b"")
    (tmp_path / "01.wav").write_bytes(b"")

    def unit(node_id: str, part: str | None) -> UnitView:
        props = {"start_time": 1.0, "end_time": 2.5, **({"part": part} if part else {})}
        return UnitView(NodeView(node_id, ("Locution",), props))

    utterances = [unit("a", "00"), unit("b", "01"), unit("c", "02"), unit("d", None), unit("e", "00")]
    plan = plan_segments(utterances, tmp_path, {"00": "debate_part1"})
    assert [(s.utterance_id, s.audio_file.name) for s in plan.segments] == [
        ("a", "debate_part1.mp3"),
        ("b", "01.wav"),
        ("e", "debate_part1.mp3"),
    ]
    assert plan.segments[0].start == 1.0 and plan.segments[0].end == 2.5
    assert plan.missing == {"02": 1, "(no part)": 1}
    assert find_part_audio(tmp_path, "02", {}) is None
