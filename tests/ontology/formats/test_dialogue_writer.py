"""Writing predicted relations back into Molweni/STAC JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontology.errors import LoaderError
from ontology.formats.dialogue_json import detect_scheme, scheme_label, write_dialogue_json
from ontology.formats.registry import SAMPLES
from ontology.terms import Sense

CORPORA = SAMPLES
FILES = {"molweni": CORPORA / "molweni" / "DP" / "dev.json", "stac": CORPORA / "stac" / "train.json"}


@pytest.mark.parametrize("scheme", sorted(FILES))
def test_gold_relations_round_trip(scheme: str, tmp_path: Path) -> None:
    src = FILES[scheme]
    raw = json.loads(src.read_text())
    assert detect_scheme(src) == scheme
    rels = [[(r["x"], r["y"], r["type"]) for r in d["relations"]] for d in raw]
    out = write_dialogue_json(src, tmp_path / "out.json", rels)
    assert json.loads(out.read_text()) == raw
    # Key order of the relations follows the file.
    assert list(json.loads(out.read_text())[0]["relations"][0]) == list(raw[0]["relations"][0])


def test_relations_replaced_everything_else_kept(tmp_path: Path) -> None:
    raw = json.loads(FILES["stac"].read_text())
    raw[0]["extra"] = {"kept": True}
    raw[1]["edus"][0]["turn"] = 7
    src = tmp_path / "in.json"
    src.write_text(json.dumps(raw))
    preds = [[(0, 1, scheme_label("stac", Sense.QuestionAnswerPair))] for _ in raw]
    out = json.loads(write_dialogue_json(src, tmp_path / "out.json", preds).read_text())
    assert len(out) == len(raw)
    for o, r in zip(out, raw, strict=True):
        assert o["relations"] == [{"type": "Question-answer_pair", "x": 0, "y": 1}]
        assert {k: v for k, v in o.items() if k != "relations"} == {k: v for k, v in r.items() if k != "relations"}


def test_labels_and_bad_input(tmp_path: Path) -> None:
    assert scheme_label("molweni", Sense.QuestionAnswerPair) == "QAP"
    assert scheme_label("stac", "QuestionElaboration") == "Q-Elab"
    with pytest.raises(LoaderError, match="predictions for 1"):
        write_dialogue_json(FILES["molweni"], tmp_path / "o.json", [[]])
    n = len(json.loads(FILES["molweni"].read_text()))
    with pytest.raises(LoaderError, match="out of range"):
        write_dialogue_json(FILES["molweni"], tmp_path / "o.json", [[(0, 99, "QAP")]] * n)
    assert not (tmp_path / "o.json").exists(), "nothing half-written"
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps([{"id": "1", "edus": [{"text": "hi", "speaker": "a"}], "relations": []}]))
    assert detect_scheme(empty) == "molweni" and detect_scheme(empty, default="stac") == "stac"
