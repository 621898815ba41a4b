"""Reads of utterance units for feature extraction (start/end times and the audio they sit in)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from graphstore import cypher
from graphstore.store import GraphStore

AUDIO_SUFFIXES = (".mp3", ".wav", ".flac", ".ogg", ".m4a")
_MARG_SENTENCE = re.compile(r"^n(\d{2})\d{4}$")


@dataclass(frozen=True)
class TimedUtterance:
    """A locution with start and end times (seconds into the audio of its part).

    Attributes:
        id: Graph id.
        local_id: Id in the corpus files (M-Arg: ``nDDXXXX``).
        part: Recording the times refer to (M-Arg: debate part ``00``..``16``), or None.
        audio_file: Per-utterance clip id as given by the corpus (M-Arg: ``aDDXXXX``), or None.
        start: Start in seconds.
        end: End in seconds.
    """

    id: str
    local_id: str | None
    part: str | None
    audio_file: str | None
    start: float
    end: float


def normalise_part(raw: object) -> str | None:
    """Two-digit part id (``"0"``, ``0`` and ``"00"`` all give ``"00"``); other strings unchanged."""
    if raw is None or raw == "":
        return None
    text = str(raw).strip()
    return f"{int(text):02d}" if text.isdigit() else text


def timed_utterances(store: GraphStore, corpus: str) -> list[TimedUtterance]:
    """Every locution of ``corpus`` with start and end times, ordered by id.

    The part comes from the locution, else from its discourse, else (M-Arg) from the sentence id
    ``nDDXXXX`` whose ``DD`` is the debate part.
    """
    out = []
    for row in store.read(cypher.timed_locutions(), corpus=corpus):
        part = normalise_part(row["part"]) or normalise_part(row["discourse_part"])
        if part is None and row["local_id"]:
            match = _MARG_SENTENCE.match(str(row["local_id"]))
            part = match.group(1) if match else None
        out.append(
            TimedUtterance(
                id=row["id"],
                local_id=row["local_id"],
                part=part,
                audio_file=row["audio_file"],
                start=float(row["start"]),
                end=float(row["end"]),
            )
        )
    return out


def find_part_audio(audio_dir: Path, part: str, names: dict[str, str]) -> Path | None:
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
