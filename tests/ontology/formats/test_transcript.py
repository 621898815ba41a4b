"""Transcripts as dialogues: speaker turns, continuation lines, time stamps, AIF locutions, segmentation,
stable ids and errors that name file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from ontology.errors import ClientError, LoaderError
from ontology.formats.transcript import read_utterances, segment, transcript_bundle, transcript_key
from ontology.records import EdgeRecord, LocutionRecord, PropositionRecord, RelationRecord, SpeakerRecord
from ontology.terms import Label, RelType
from tests.conftest import DATA, SAMPLES

MINE = DATA / "mine"


def write(tmp_path: Path, text: str | bytes, name: str = "t.txt") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_debate_turns_are_segmented_into_sentences() -> None:
    us = read_utterances(MINE / "debate.txt")
    assert len(us) == 11
    assert [u.speaker for u in us[:4]] == ["Fiona Bruce", "Anna Patel", "Anna Patel", "Tom Reilly"]
    assert us[1].text == "We should adopt a four-day week."
    assert us[2].text.startswith("Trials in hundreds") and us[1].turn == us[2].turn == 1
    # The indented line continues Anna's turn and is its second sentence.
    assert us[6].text == "Staff who rest are less likely to quit, which saves recruitment costs."
    assert us[6].speaker == "Anna Patel" and us[6].line == 5
    assert us[0].timestamp == "00:00:05" and us[-1].timestamp == "00:01:12"
    assert us[-1].speaker == "Audience Member 1" and us[-2].text == "I do."


def test_line_forms(tmp_path: Path) -> None:
    text = (
        "# comment\n\n"
        "(01:02) Dr. Jane O'Neil: First point.\n"
        "it goes on here\n"
        "00:02:03\n"
        "Bob: See http://example.org: a link. Second one!\n"
        "Bob:\n"
        "  text on the next line.\n"
        "one two three four five: has too many words for a speaker\n"
        "Because of this: up to four words read as a speaker\n"
    )
    us = read_utterances(write(tmp_path, text))
    assert [(u.speaker, u.text) for u in us] == [
        ("Dr. Jane O'Neil", "First point."),
        ("Dr. Jane O'Neil", "it goes on here"),
        ("Bob", "See http://example.org: a link."),
        ("Bob", "Second one!"),
        ("Bob", "text on the next line."),
        ("Bob", "one two three four five: has too many words for a speaker"),
        ("Because of this", "up to four words read as a speaker"),
    ]
    assert us[0].timestamp == "01:02" and us[2].timestamp == "00:02:03" and us[4].timestamp is None


def test_segmenter_keeps_abbreviations_and_numbers() -> None:
    assert segment("Mr. Smith paid $3.50 for it. That is too much! Isn't it?") == [
        "Mr. Smith paid $3.50 for it.",
        "That is too much!",
        "Isn't it?",
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"Anna: fine\nTom: caf\xe9 au lait\n", "t.txt: line 2: not UTF-8"),
        (b"no speaker yet\nAnna: hi\n", "t.txt: line 1: text before the first speaker"),
        (b"# only a comment\n\n", "t.txt: no 'Speaker: text' turn found"),
        (b"Anna: one\nTom: two \x00 three\n", "t.txt: line 2: holds a NUL character"),
    ],
)
def test_bad_transcripts_name_file_and_line(tmp_path: Path, content: bytes, message: str) -> None:
    with pytest.raises(LoaderError) as err:
        read_utterances(write(tmp_path, content))
    assert message in str(err.value)
    assert isinstance(err.value, ClientError)


def test_aif_locutions_are_the_utterances() -> None:
    path = next((SAMPLES / "dialam-2024" / "my_train").glob("*.json"))
    us = read_utterances(path)
    assert us and all(u.speaker and u.text for u in us)
    assert all(" : " not in u.text[:40] or u.text.count(" : ") < 2 for u in us)
    assert [u.turn for u in us] == list(range(len(us)))


def test_aif_map_without_locutions(tmp_path: Path) -> None:
    path = write(tmp_path, '{"nodes": [{"nodeID": "1", "type": "I", "text": "x"}], "edges": []}', "m.json")
    with pytest.raises(LoaderError, match=r"m\.json: an AIF map without locutions"):
        read_utterances(path)


def test_bundle_structure_and_stable_ids() -> None:
    us = read_utterances(MINE / "debate.txt")
    bundle = transcript_bundle(us, "mined", "debate", "debate.txt")
    key = transcript_key("debate", us)
    assert key.startswith("debate-") and key == transcript_key("debate", read_utterances(MINE / "debate.txt"))
    locs = [n for n in bundle.nodes if isinstance(n, LocutionRecord)]
    props = [n for n in bundle.nodes if isinstance(n, PropositionRecord)]
    yas = [n for n in bundle.nodes if isinstance(n, RelationRecord)]
    assert len(locs) == len(props) == len(yas) == 11
    assert locs[0].id == f"mined:{key}:L:0" and props[3].id == f"mined:{key}:I:3"
    assert {n.kind for n in yas} == {Label.Illocution} and {n.origin for n in yas} == {"gold"}
    assert {n.name for n in bundle.nodes if isinstance(n, SpeakerRecord)} == {
        "Fiona Bruce",
        "Anna Patel",
        "Tom Reilly",
        "Audience Member 1",
    }
    aif = [e for e in bundle.edges if isinstance(e, EdgeRecord) and e.type == RelType.AIF_EDGE]
    assert (locs[0].id, yas[0].id) in {(e.source, e.target) for e in aif}
    assert (yas[0].id, props[0].id) in {(e.source, e.target) for e in aif}
    # An edited transcript is another dialogue, never merged into the first one.
    edited = [*us[:-1], us[-1].__class__(us[-1].speaker, "Something else.", us[-1].line, us[-1].turn)]
    assert transcript_key("debate", edited) != key
