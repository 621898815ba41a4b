"""The QT30 relation model on new dialogues (live mining, ``POST /predict``).

A new dialogue has no annotated I-nodes or transitions. It is given to the model in the DialAM
task-A input form it was trained on: one L-node (``Speaker : text``) and one I-node (same text)
per utterance, written L, I, L, I... so that each I-node anchors in its own locution, and the
transitions (TA) the caller supplies -- in live mining, the links of the discourse parser (who
answers whom), which is what TA nodes annotate in QT30.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gnn.relations.argmap import ArgMap, Loc, Prop
from gnn.relations.mining import DISCOURSE_DOMAIN, Analysis, unit_transitions
from gnn.relations.qt30_run import Qt30Model
from ontology.labels import RelationLabel, scheme_label
from ontology.records import prediction_score

if TYPE_CHECKING:
    from gnn.discourse.train import DiscourseModel

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


def argument_links(
    model: Qt30Model,
    texts: Sequence[str],
    speakers: Sequence[str],
    transitions: Sequence[tuple[int, int]],
    objective: str,
) -> list[tuple[int, int, str, float]]:
    """The relation model's support / attack / rephrase links between argument units: ``(s, t, label, score)``.

    Scores are rounded like every stored score (:func:`ontology.records.prediction_score`).

    Args:
        model: The relation model's QT30 network.
        texts: Argument unit texts in order.
        speakers: Speaker of each unit.
        transitions: ``(earlier, later)`` unit indices linked in the dialogue (the parser's links).
        objective: The decoding (:data:`gnn.relations.qt30_task.OBJECTIVES`).
    """
    return [
        (s, t, lab, prediction_score(p))
        for s, t, lab, p in predict_dialogue(model, texts, speakers, transitions, objective)
    ]


def discourse_links(
    parser: DiscourseModel, texts: Sequence[str], speakers: Sequence[str]
) -> list[tuple[int, int, str, float]]:
    """The discourse parser's links between utterances: ``(x, y, sense, score)``.

    Scores are rounded to 4 digits, so that a repeated run is recognised as the same content.
    """
    from gnn.discourse.data import Dialogue

    if not texts:
        return []
    dialogue = Dialogue("mined#0", "mined", DISCOURSE_DOMAIN, list(texts), list(speakers))
    (links,) = parser.predict([dialogue])
    return [(p.x, p.y, p.sense.value, prediction_score(p.score)) for p in links]


def analyse(
    parser: DiscourseModel,
    model: Qt30Model,
    texts: Sequence[str],
    speakers: Sequence[str],
    units: Sequence[str],
    anchors: Sequence[Sequence[int]],
    objective: str,
) -> Analysis:
    """Discourse links between the utterances, then argument links between the units said in them.

    The parser's links are the argument model's transitions, as a QT30 map annotates them; each unit
    gets the speaker of its first utterance and the transitions through its utterances
    (:func:`gnn.relations.mining.unit_transitions`).

    Args:
        parser: The discourse parser.
        model: The relation model's QT30 network.
        texts: Utterance texts (the locutions) in order.
        speakers: Speaker of each utterance.
        units: Argument unit texts in order.
        anchors: Per unit, the indices of the utterances it was said in.
        objective: The relation model's decoding.
    """
    disc = discourse_links(parser, texts, speakers)
    unit_speakers = [speakers[a[0]] if a else "" for a in anchors]
    return Analysis(disc, argument_links(model, units, unit_speakers, unit_transitions(disc, anchors), objective))
