"""The QT30 relation model on new dialogues (live mining, ``POST /predict``).

A new dialogue has no annotated I-nodes or transitions. It is given to the model in the DialAM
task-A input form it was trained on: one L-node (``Speaker : text``) and one I-node (same text)
per utterance, written L, I, L, I... so that each I-node anchors in its own locution, and the
transitions (TA) the caller supplies -- in live mining, the links of the discourse parser (who
answers whom), which is what TA nodes annotate in QT30.
"""

from __future__ import annotations

from collections.abc import Sequence

from gnn.relations.argmap import ArgMap, Loc, Prop
from gnn.relations.qt30_run import Qt30Model
from ontology.labels import RelationLabel, scheme_label

ARGUMENT = {"none": RelationLabel.NONE.value, **{t: scheme_label("qt30", t).value for t in ("RA", "CA", "MA")}}
"""QT30 relation types as :class:`ontology.labels.RelationLabel` values (from the ontology's mapping)."""


def dialogue_map(
    name: str, texts: Sequence[str], speakers: Sequence[str], transitions: Sequence[tuple[int, int]] = ()
) -> ArgMap:
    """A dialogue as a task-A map: an L- and an I-node per utterance, local ids ``0..n-1``.

    Args:
        name: Map name.
        texts: Utterance texts in order.
        speakers: Speaker of each utterance.
        transitions: ``(earlier, later)`` utterance indices linked by a transition (answers, replies).
    """
    amap = ArgMap(name, name)
    for i, (text, speaker) in enumerate(zip(texts, speakers, strict=True)):
        amap.locutions.append(Loc(f"L{i}", f"L{i}", 2 * i, f"{speaker} : {text}", speaker, False))
        amap.props.append(Prop(str(i), str(i), 2 * i + 1, text))
    amap.transitions = [(a, b) for a, b in transitions if 0 <= a < len(texts) and 0 <= b < len(texts) and a != b]
    return amap


def predict_dialogue(
    model: Qt30Model,
    texts: Sequence[str],
    speakers: Sequence[str],
    transitions: Sequence[tuple[int, int]] = (),
    objective: str = "general",
) -> list[tuple[int, int, str, float]]:
    """Support / attack / rephrase between the utterances of one dialogue.

    Returns:
        ``(source index, target index, label, probability)``, ordered by source then target.
    """
    if len(texts) < 2:
        return []
    amap = dialogue_map("dialogue", texts, speakers, transitions)
    (rels,) = model.predict([amap], objective)
    return [(int(s), int(t), ARGUMENT[lab], float(p)) for s, t, lab, p in rels]
