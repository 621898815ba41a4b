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

    A copy is an L-node with two speaker prefixes whose text after the first is another L-node's
    whole text (``Anna: Fiona Bruce : x`` copies ``Fiona Bruce : x``), compared in
    :func:`normal_text` form, so the spelling of either colon does not matter. A locution written
    without a speaker (``x``) is copied by nothing: ``Fiona Bruce : x`` is a locution of its own. A
    copy of a copy points to the locution at the root. Of several equal originals the first is
    taken (equal texts: the choice changes no text a model reads).
    """
    first: dict[str, int] = {}
    for k, text in enumerate(texts):
        first.setdefault(normal_text(text), k)
    out = []
    for k, text in enumerate(texts):
        speaker, rest = split_speaker(text)
        original = -1
        if speaker is not None and split_speaker(rest)[0] is not None:
            original = first.get(normal_text(rest), -1)
        out.append(original if original != k else -1)
    # Follow chains to their root (a copy of a copy); a cycle cannot form, as each step drops a prefix.
    for k in range(len(out)):
        seen = {k}
        while out[k] >= 0 and out[out[k]] >= 0 and out[out[k]] not in seen:
            seen.add(out[k])
            out[k] = out[out[k]]
    return out


def speaker_of(texts: Sequence[str | None]) -> list[str | None]:
    """The speaker of each L-node text; a copy gets the speaker of the locution it copies."""
    dup = duplicates(texts)
    own = [split_speaker(t)[0] for t in texts]
    return [own[d] if d >= 0 else own[k] for k, d in enumerate(dup)]
