"""The text conventions of AIF locutions (L-nodes), read the same way however a map spells them.

QT30 / AIFdb write an L-node's text as ``Speaker : utterance``; OVA, oAMF and hand-edited maps
also write ``Speaker: utterance`` or pad the colon with several spaces, and annotators' copies add
a second prefix (``Anna: Fiona Bruce : ...``). AIF gives spacing no meaning, so every reader of
locutions (the loader, the relation model, the exporter) splits and compares them through these
functions instead of matching a particular spelling.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# A speaker prefix: up to 60 characters without a colon, then a colon (any spacing around it).
_PREFIX = re.compile(r"^\s*([^:\n]{1,60}?)\s*:\s*(.*)$", re.S)
_SPACES = re.compile(r"\s+")
_COLON = re.compile(r"\s*:\s*")


def split_speaker(text: str | None) -> tuple[str | None, str]:
    """``(speaker, utterance)`` of an L-node text; ``(None, text)`` without a speaker prefix.

    Only the first prefix is split off: an annotator's copy ``Anna: Fiona Bruce : x`` gives
    ``("Anna", "Fiona Bruce : x")`` (see :func:`duplicates` for telling such copies apart).
    """
    text = text or ""
    match = _PREFIX.match(text)
    if match is None or not match.group(1).strip():
        return None, text.strip()
    return _SPACES.sub(" ", match.group(1)).strip(), match.group(2).strip()


def normal_text(text: str | None) -> str:
    """``text`` with runs of white space collapsed and every colon written `` : ``: equal for equal maps."""
    return _SPACES.sub(" ", _COLON.sub(" : ", text or "")).strip()


def duplicates(texts: Sequence[str | None]) -> list[int]:
    """For each L-node text, the index of the locution it copies, or -1.

    A copy is an L-node whose text after its first speaker prefix is another L-node's whole text
    (``Anna: Fiona Bruce : x`` copies ``Fiona Bruce : x``), compared in :func:`normal_text` form,
    so the spelling of either colon does not matter. The first of several equal originals wins.
    """
    first: dict[str, int] = {}
    for k, text in enumerate(texts):
        first.setdefault(normal_text(text), k)
    out = []
    for k, text in enumerate(texts):
        _, rest = split_speaker(text)
        original = first.get(normal_text(rest), -1) if rest != (text or "").strip() else -1
        out.append(original if original != k else -1)
    return out


def speaker_of(texts: Sequence[str | None]) -> list[str | None]:
    """The speaker of each L-node text; a copy gets the speaker of the locution it copies."""
    dup = duplicates(texts)
    own = [split_speaker(t)[0] for t in texts]
    return [own[d] if d >= 0 else own[k] for k, d in enumerate(dup)]
