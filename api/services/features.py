"""Features of graph units computed outside the graph (audio of timed utterances)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from api.services.graph import Graph
from gnn.audio import FeatureConfig, FeatureReport, compute_features, plan_segments
from graphstore.units import timed_utterances
from ontology.errors import ApiError, NotFoundError
from ontology.formats.marg import PART_NAMES
from ontology.progress import SILENT, Reporter


@dataclass(frozen=True)
class AudioFeatures:
    """Where the features went and what the run did."""

    cache_dir: Path
    report: FeatureReport
    missing: dict[str, int]


def audio_features(
    graph: Graph,
    corpus: str,
    audio_dir: Path,
    *,
    cache_dir: Path | None = None,
    buffer: float = 2.0,
    reporter: Reporter = SILENT,
) -> AudioFeatures:
    """MFCC, spectral and chroma features per timed utterance of ``corpus``, cached per recording.

    Utterances are the corpus's locutions with start/end times; each part's recording is looked
    up in ``audio_dir`` by its official name or its part id. Cached utterances are skipped.

    Args:
        graph: The graph holding the utterances.
        corpus: Corpus id.
        audio_dir: Folder with the recordings.
        cache_dir: Feature cache (default ``<features dir>/audio/<corpus>``).
        buffer: Seconds added before and after each utterance.
        reporter: Receives progress and one warning per part without a recording.

    Raises:
        NotFoundError: No such directory, no timed utterances, or no recording found.
    """
    target = cache_dir or graph.settings.features_dir / "audio" / corpus
    if not audio_dir.is_dir():
        raise NotFoundError(f"{audio_dir}: no such directory")
    utterances = timed_utterances(graph.store(), corpus)
    if not utterances:
        raise NotFoundError(f"corpus {corpus!r} has no utterances with start/end times in the graph")
    plan = plan_segments(utterances, audio_dir, PART_NAMES)
    for part, n in sorted(plan.missing.items()):
        reporter.warn(f"part {part}: no recording in {audio_dir}, {n} utterances skipped")
    if not plan.segments:
        raise ApiError(f"no recording of any part found in {audio_dir}")
    with reporter.progress("audio features", len(plan.segments)) as advance:
        report = compute_features(plan.segments, target, FeatureConfig(buffer_s=buffer), progress=advance)
    return AudioFeatures(target, report, plan.missing)
