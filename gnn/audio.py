"""Acoustic features per utterance, as in the M-Arg paper (Mestre et al., ArgMining 2021).

Each utterance is a segment ``(utterance id, audio file, start s, end s)`` of a longer recording
(an M-Arg debate part). The segment is clipped with a buffer of ``buffer_s`` seconds on both sides,
clamped to the file, like the paper's clips (its preprocessing script cuts ``[start - 2 s, end + 2 s]``;
unlike that script, a segment starting within the first 2 s still gets the left buffer up to 0 s).

Per frame, the paper's 45 features are computed with librosa: spectral centroid, bandwidth and
roll-off (1 each), spectral contrast (7 bands), chroma (12 pitch classes) and MFCCs 2..24 of 25
(the paper drops the first two coefficients). The frame sequence is summarised per utterance by
statistics over frames (mean and standard deviation by default) into one fixed-length vector with
named columns, so that utterances of any length can be fed to a model.

Vectors are cached on disk, one ``.npz`` per audio file (= per debate part), holding ``ids``,
``features`` (float32, one row per utterance), ``columns`` and the ``config`` they were computed
with. A run skips utterances already in the cache, and writes the cache every few utterances, so an
interrupted run resumes where it stopped. librosa is imported inside the functions: importing this
module stays cheap.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gnn.modelcard import atomic_savez
from ontology.errors import ApiError, ModelError
from ontology.progress import Advance, Reporter
from ontology.terms import Prop
from ontology.views import UnitView

CHROMA_NAMES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
STATISTICS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "mean": lambda x: x.mean(axis=1),
    "std": lambda x: x.std(axis=1),
    "min": lambda x: x.min(axis=1),
    "max": lambda x: x.max(axis=1),
    "median": lambda x: np.median(x, axis=1),
}


@dataclass(frozen=True)
class Segment:
    """One utterance inside an audio file.

    Attributes:
        utterance_id: Key of the utterance in the cache (argweb uses the graph node id).
        audio_file: The recording that contains the utterance.
        start: Start of the utterance in seconds.
        end: End of the utterance in seconds.
    """

    utterance_id: str
    audio_file: Path
    start: float
    end: float


AUDIO_SUFFIXES = (".mp3", ".wav", ".flac", ".ogg", ".m4a")


def find_part_audio(audio_dir: Path, part: str, names: Mapping[str, str]) -> Path | None:
    """The recording of ``part`` in ``audio_dir``, or None.

    Accepts the official file name (``names[part]`` plus an audio suffix, e.g.
    ``us_election_2020_1st_presidential_debate_part1.mp3``) or the part id itself (``00.wav``),
    directly in ``audio_dir`` or one level below (``split audio/``).
    """
    stems = [s for s in (names.get(part), part) if s]
    for folder in (audio_dir, *sorted(p for p in audio_dir.iterdir() if p.is_dir())):
        for stem in stems:
            for suffix in AUDIO_SUFFIXES:
                candidate = folder / f"{stem}{suffix}"
                if candidate.is_file():
                    return candidate
    return None


@dataclass(frozen=True)
class SegmentPlan:
    """The utterances whose recording was found, and how many were not, per part.

    Attributes:
        segments: One segment per utterance with a recording.
        missing: Utterances without a recording, per part (``(no part)``: the utterance names none).
    """

    segments: list[Segment]
    missing: dict[str, int]


def plan_segments(utterances: Iterable[UnitView], audio_dir: Path, names: Mapping[str, str]) -> SegmentPlan:
    """The segment of each timed utterance in the recording of its part (looked up once per part)."""
    segments: list[Segment] = []
    missing: dict[str, int] = {}
    files: dict[str, Path | None] = {}
    for u in utterances:
        part = u.node.get(Prop.PART) or ""
        if part not in files:
            files[part] = find_part_audio(audio_dir, part, names) if part else None
        path = files[part]
        if path is None:
            missing[part or "(no part)"] = missing.get(part or "(no part)", 0) + 1
            continue
        segments.append(Segment(u.id, path, float(u.node.get(Prop.START_TIME)), float(u.node.get(Prop.END_TIME))))
    return SegmentPlan(segments, missing)


@dataclass(frozen=True)
class FeatureConfig:
    """How features are computed; stored with every cache file so stale caches are detected.

    Attributes:
        sample_rate: Audio is resampled to this rate (librosa's default, as in the paper).
        buffer_s: Seconds added before and after each utterance.
        n_mfcc: MFCCs computed per frame.
        mfcc_skip: Leading MFCCs dropped (the paper keeps coefficients 2..24).
        n_fft: FFT window length in samples.
        hop_length: Hop between frames in samples.
        n_bands: Spectral-contrast bands (gives ``n_bands + 1`` rows).
        statistics: Summaries over frames, from :data:`STATISTICS`.
    """

    sample_rate: int = 22050
    buffer_s: float = 2.0
    n_mfcc: int = 25
    mfcc_skip: int = 2
    n_fft: int = 2048
    hop_length: int = 512
    n_bands: int = 6
    statistics: tuple[str, ...] = ("mean", "std")

    def __post_init__(self) -> None:
        unknown = [s for s in self.statistics if s not in STATISTICS]
        if unknown:
            raise ModelError(f"unknown statistic(s) {unknown}; choose from {sorted(STATISTICS)}")
        if not 0 <= self.mfcc_skip < self.n_mfcc:
            raise ModelError(f"mfcc_skip={self.mfcc_skip} must be in [0, n_mfcc={self.n_mfcc})")
        if self.buffer_s < 0:
            raise ModelError(f"buffer_s={self.buffer_s} must not be negative")

    def frame_names(self) -> list[str]:
        """Names of the per-frame features, in row order of :func:`frame_features`."""
        return [
            "spectral_centroid",
            "spectral_bandwidth",
            "spectral_rolloff",
            *(f"spectral_contrast_{i}" for i in range(self.n_bands + 1)),
            *(f"chroma_{name}" for name in CHROMA_NAMES),
            *(f"mfcc_{i}" for i in range(self.mfcc_skip, self.n_mfcc)),
        ]

    def columns(self) -> list[str]:
        """Names of the summary vector's entries: ``<feature>_<statistic>``, grouped by statistic."""
        return [f"{name}_{stat}" for stat in self.statistics for name in self.frame_names()]

    def to_json(self) -> str:
        """Canonical JSON of the settings (stored in the cache)."""
        return json.dumps(asdict(self), sort_keys=True)


@dataclass
class FeatureReport:
    """What one :func:`compute_features` run did."""

    computed: int = 0
    cached: int = 0
    files: int = 0
    audio_seconds: float = 0.0
    seconds: float = 0.0
    cache_files: list[Path] = field(default_factory=list)

    @property
    def per_second(self) -> float:
        """Utterance vectors computed per wall-clock second."""
        return self.computed / self.seconds if self.seconds > 0 else 0.0


# -- pure feature computation ------------------------------------------------------------------


def load_audio(path: Path, sample_rate: int) -> np.ndarray:
    """Decode an audio file to mono float32 at ``sample_rate``.

    Raises:
        ModelError: The file is missing or cannot be decoded; the message names the file.
    """
    import librosa

    path = Path(path)
    if not path.is_file():
        raise ModelError(f"{path}: audio file not found")
    try:
        with warnings.catch_warnings():
            # librosa warns before falling back to audioread; the failure is reported below.
            warnings.simplefilter("ignore")
            y, _ = librosa.load(path, sr=sample_rate, mono=True)
    except Exception as e:  # decoders raise many unrelated types (RuntimeError, EOFError, NoBackendError...)
        raise ModelError(f"{path}: cannot decode audio ({type(e).__name__}: {e})") from e
    if y.size == 0:
        raise ModelError(f"{path}: audio file holds no samples")
    return np.asarray(y, dtype=np.float32)


def clip_bounds(start: float, end: float, duration: float, buffer_s: float) -> tuple[float, float]:
    """The clip ``[start - buffer, end + buffer]`` clamped to ``[0, duration]``."""
    return max(0.0, start - buffer_s), min(duration, end + buffer_s)


def frame_features(y: np.ndarray, config: FeatureConfig) -> np.ndarray:
    """The per-frame feature matrix (``len(config.frame_names())`` x frames) of one clip.

    One STFT is shared by all features; the results equal librosa's functions called on ``y``.
    """
    import librosa

    sr = config.sample_rate
    with warnings.catch_warnings():
        # Very short clips make librosa warn that n_fft exceeds the signal; it pads, as intended.
        warnings.simplefilter("ignore", UserWarning)
        magnitude = np.abs(librosa.stft(y, n_fft=config.n_fft, hop_length=config.hop_length))
        power = magnitude**2
        kwargs: dict[str, Any] = {"sr": sr, "n_fft": config.n_fft, "hop_length": config.hop_length}
        centroid = librosa.feature.spectral_centroid(S=magnitude, **kwargs)
        bandwidth = librosa.feature.spectral_bandwidth(S=magnitude, **kwargs)
        rolloff = librosa.feature.spectral_rolloff(S=magnitude, **kwargs)
        contrast = librosa.feature.spectral_contrast(S=magnitude, n_bands=config.n_bands, **kwargs)
        chroma = librosa.feature.chroma_stft(S=power, **kwargs)
        mel = librosa.feature.melspectrogram(S=power, **kwargs)
        mfcc = librosa.feature.mfcc(S=librosa.power_to_db(mel), n_mfcc=config.n_mfcc)[config.mfcc_skip :]
    return np.concatenate([centroid, bandwidth, rolloff, contrast, chroma, mfcc], axis=0)


def summarise(frames: np.ndarray, config: FeatureConfig) -> np.ndarray:
    """Collapse a frame matrix into the fixed-length vector described by ``config.columns()``."""
    return np.concatenate([STATISTICS[s](frames) for s in config.statistics]).astype(np.float32)


def utterance_vector(
    y: np.ndarray, start: float, end: float, config: FeatureConfig, where: str = "utterance"
) -> np.ndarray:
    """Feature vector of the utterance ``[start, end]`` (seconds) of the decoded signal ``y``.

    Raises:
        ModelError: The times are invalid or the clip is empty; the message names ``where``.
    """
    sr = config.sample_rate
    duration = len(y) / sr
    if not (np.isfinite(start) and np.isfinite(end)) or start < 0 or end < start:
        raise ModelError(f"{where}: invalid segment start={start} end={end}")
    lo, hi = clip_bounds(start, end, duration, config.buffer_s)
    first, last = round(lo * sr), round(hi * sr)
    if last - first < 1:
        raise ModelError(f"{where}: segment {start:.3f}-{end:.3f} s lies outside the audio ({duration:.3f} s long)")
    return summarise(frame_features(y[first:last], config), config)


# -- cache -----------------------------------------------------------------------------------------


def cache_path(cache_dir: Path, audio_file: Path) -> Path:
    """The cache file of one audio file: ``<cache_dir>/<audio file stem>.npz``."""
    return Path(cache_dir) / f"{Path(audio_file).stem}.npz"


def read_cache(path: Path, config: FeatureConfig | None = None) -> tuple[list[str], np.ndarray]:
    """Ids and feature matrix of one cache file (empty when the file does not exist).

    Args:
        path: The ``.npz`` file.
        config: When given, the cache must have been computed with the same settings.

    Raises:
        ModelError: The file is unreadable or was computed with other settings.
    """
    if not path.is_file():
        width = len(config.columns()) if config else 0
        return [], np.zeros((0, width), dtype=np.float32)
    try:
        with np.load(path, allow_pickle=False) as data:
            ids = [str(i) for i in data["ids"]]
            features = np.asarray(data["features"], dtype=np.float32)
            stored = str(data["config"])
    except (OSError, ValueError, KeyError) as e:
        raise ModelError(f"{path}: unreadable feature cache ({e}); delete it to recompute") from e
    if config is not None and stored != config.to_json():
        raise ModelError(
            f"{path}: cached with other settings {stored}, not {config.to_json()}; "
            "use another cache directory or delete the file"
        )
    return ids, features


def _write_cache(path: Path, ids: Sequence[str], features: np.ndarray, config: FeatureConfig) -> None:
    # Written atomically, so that an interrupted run never leaves a half-written cache.
    atomic_savez(
        path,
        ids=np.asarray(list(ids), dtype=str),
        features=np.asarray(features, dtype=np.float32),
        columns=np.asarray(config.columns(), dtype=str),
        config=np.asarray(config.to_json()),
    )


def load_features(cache_dir: Path) -> tuple[list[str], np.ndarray, list[str]]:
    """All cached vectors under ``cache_dir``: ids, matrix (one row per id) and column names.

    Raises:
        ModelError: The cache files disagree on their columns.
    """
    ids: list[str] = []
    blocks: list[np.ndarray] = []
    columns: list[str] | None = None
    for path in sorted(Path(cache_dir).glob("*.npz")):
        if path.name.startswith("."):
            continue
        with np.load(path, allow_pickle=False) as data:
            cols = [str(c) for c in data["columns"]]
            if columns is not None and cols != columns:
                raise ModelError(f"{path}: columns differ from the other cache files in {cache_dir}")
            columns = cols
            ids.extend(str(i) for i in data["ids"])
            blocks.append(np.asarray(data["features"], dtype=np.float32))
    if not blocks:
        return [], np.zeros((0, 0), dtype=np.float32), []
    return ids, np.concatenate(blocks, axis=0), columns or []


# -- batch computation -----------------------------------------------------------------------------


def _group(segments: Iterable[Segment]) -> dict[Path, list[Segment]]:
    groups: dict[Path, list[Segment]] = {}
    seen: dict[str, Path] = {}
    for seg in segments:
        path = Path(seg.audio_file)
        if seg.utterance_id in seen:
            raise ModelError(f"utterance {seg.utterance_id!r} given twice ({seen[seg.utterance_id]}, {path})")
        seen[seg.utterance_id] = path
        groups.setdefault(path, []).append(seg)
    return groups


def compute_features(
    segments: Iterable[Segment],
    cache_dir: Path,
    config: FeatureConfig | None = None,
    progress: Advance | None = None,
    checkpoint_every: int = 100,
) -> FeatureReport:
    """Compute and cache the feature vector of every segment not cached yet.

    Audio files are decoded once each, and only when one of their utterances is missing from the
    cache. The cache file of an audio file is rewritten every ``checkpoint_every`` utterances.

    Args:
        segments: The utterances; ids must be unique.
        cache_dir: Directory of the ``.npz`` files (created when missing).
        config: Feature settings (defaults: the M-Arg paper's).
        progress: Called with the number of utterances done (computed or found cached) so far
            since the last call.
        checkpoint_every: Utterances between cache writes.

    Raises:
        ModelError: An audio file is missing or undecodable, a segment is invalid, or the cache
            was computed with other settings; each message names the file (and utterance).
    """
    config = config or FeatureConfig()
    started = time.perf_counter()
    report = FeatureReport()
    for audio_file, segs in _group(segments).items():
        target = cache_path(Path(cache_dir), audio_file)
        ids, features = read_cache(target, config)
        done = set(ids)
        todo = [s for s in segs if s.utterance_id not in done]
        report.cached += len(segs) - len(todo)
        if progress and len(segs) > len(todo):
            progress(len(segs) - len(todo))
        report.files += 1
        report.cache_files.append(target)
        if not todo:
            continue
        y = load_audio(audio_file, config.sample_rate)
        report.audio_seconds += len(y) / config.sample_rate
        rows = [features]
        new_ids: list[str] = []
        pending: list[np.ndarray] = []
        for seg in todo:
            where = f"{audio_file}: utterance {seg.utterance_id}"
            pending.append(utterance_vector(y, seg.start, seg.end, config, where))
            new_ids.append(seg.utterance_id)
            report.computed += 1
            if progress:
                progress(1)
            if len(pending) >= checkpoint_every:
                rows.append(np.stack(pending))
                pending = []
                _write_cache(target, ids + new_ids, np.concatenate(rows), config)
        if pending:
            rows.append(np.stack(pending))
        _write_cache(target, ids + new_ids, np.concatenate(rows), config)
    report.seconds = time.perf_counter() - started
    return report


@dataclass(frozen=True)
class AudioFeatures:
    """Where the features went and what the run did."""

    cache_dir: Path
    report: FeatureReport
    missing: dict[str, int]


def utterance_features(
    utterances: Iterable[UnitView],
    audio_dir: Path,
    cache_dir: Path,
    names: Mapping[str, str],
    buffer: float,
    reporter: Reporter,
) -> AudioFeatures:
    """The features of every timed utterance whose part has a recording in ``audio_dir``, cached in ``cache_dir``.

    Args:
        utterances: Locutions with start/end times.
        audio_dir: Folder with the recordings.
        cache_dir: Feature cache.
        names: A part's official name by part id (recordings are found by either).
        buffer: Seconds added before and after each utterance.
        reporter: Receives progress and one warning per part without a recording.

    Raises:
        ApiError: No recording of any part found (the caller's folder holds none).
    """
    plan = plan_segments(utterances, audio_dir, names)
    for part, n in sorted(plan.missing.items()):
        reporter.warn(f"part {part}: no recording in {audio_dir}, {n} utterances skipped")
    if not plan.segments:
        raise ApiError(f"no recording of any part found in {audio_dir}")
    with reporter.progress("audio features", len(plan.segments)) as advance:
        report = compute_features(plan.segments, cache_dir, FeatureConfig(buffer_s=buffer), progress=advance)
    return AudioFeatures(cache_dir, report, plan.missing)
