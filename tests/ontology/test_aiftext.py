"""Locution texts read the same however the colon is spaced; annotators' copies told from locutions."""

from __future__ import annotations

from ontology.aiftext import duplicates, normal_text, speaker_of, split_speaker


def test_speaker_split_ignores_spacing() -> None:
    for text in ("Fiona Bruce : Are you sure", "Fiona Bruce: Are you sure", "Fiona  Bruce   :  Are you sure"):
        assert split_speaker(text) == ("Fiona Bruce", "Are you sure")
    assert split_speaker("is that right") == (None, "is that right")
    assert normal_text("A:b  :  c") == normal_text("A : b : c") == "A : b : c"


def test_copies_point_to_their_root_and_bare_locutions_copy_nothing() -> None:
    texts = [
        "they did succeed",  # a locution written without a speaker
        "Helle Thorning-Schmidt : they did succeed",  # its own locution, not a copy of the bare one
        "Mascha: Helle Thorning-Schmidt: they did succeed",  # an annotator's copy
        "Zlata: Mascha : Helle Thorning-Schmidt : they did succeed",  # a copy of the copy
        "Fiona Bruce : Why",
    ]
    assert duplicates(texts) == [-1, -1, 1, 1, -1]
    assert speaker_of(texts) == [
        None,
        "Helle Thorning-Schmidt",
        "Helle Thorning-Schmidt",
        "Helle Thorning-Schmidt",
        "Fiona Bruce",
    ]
