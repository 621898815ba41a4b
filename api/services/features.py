"""Features of graph units computed outside the graph (audio of timed utterances)."""

from __future__ import annotations

from pathlib import Path

from api.services.graph import Graph
from gnn.audio import AudioFeatures, utterance_features
from graphstore.units import timed_utterances
from ontology.errors import NotFoundError
from ontology.formats.marg import PART_NAMES
from ontology.progress import SILENT, Reporter


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
    up in ``audio_dir`` by its official name or its part id (:func:`gnn.audio.utterance_features`).
    Cached utterances are skipped.

    Args:
        graph: The graph holding the utterances.
        corpus: Corpus id.
        audio_dir: Folder with the recordings.
        cache_dir: Feature cache (default ``<features dir>/audio/<corpus>``).
        buffer: Seconds added before and after each utterance.
        reporter: Receives progress and one warning per part without a recording.

    Raises:
        NotFoundError: No such directory, or no timed utterances.
        ApiError: No recording found.
    """
    target = cache_dir or graph.settings.features_dir / "audio" / corpus
    if not audio_dir.is_dir():
        raise NotFoundError(f"{audio_dir}: no such directory")
    utterances = timed_utterances(graph.store(), corpus)
    if not utterances:
        raise NotFoundError(f"corpus {corpus!r} has no utterances with start/end times in the graph")
    return utterance_features(utterances, audio_dir, target, PART_NAMES, buffer, reporter)
