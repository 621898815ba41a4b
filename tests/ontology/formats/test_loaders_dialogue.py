"""Molweni / STAC loader on the shipped samples (``graphstore/samples``) and on broken files.

Expected numbers are recomputed here from the raw JSON, never taken from the loader.
The samples are real dialogues cut from ``shared/corpora`` (see ``graphstore/samples/PROVENANCE.md``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ontology.errors import LoaderError
from ontology.formats.dialogue_json import load_dialogue_json
from ontology.formats.registry import CORPORA, SAMPLES
from ontology.records import DiscourseRecord, LocutionRecord, RelationRecord, SpeakerRecord
from ontology.terms import Label, RelType, Sense
from tests.conftest import of_type

DATA = Path(__file__).resolve().parents[2] / "data"
MOLWENI = SAMPLES / "molweni" / "DP" / "dev.json"
STAC = SAMPLES / "stac" / "train.json"
BAD = DATA / "bad"


def raw(path: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return data


def keys(dialogues: list[dict[str, Any]]) -> list[str]:
    """Dialogue keys the way the loader must number repeated ids: id, id~2, id~3, ..."""
    seen: Counter[str] = Counter()
    out = []
    for d in dialogues:
        seen[d["id"]] += 1
        out.append(d["id"] if seen[d["id"]] == 1 else f"{d['id']}~{seen[d['id']]}")
    return out


@pytest.mark.parametrize(("path", "corpus"), [(MOLWENI, "molweni"), (STAC, "stac")])
def test_counts_match_raw_json(path: Path, corpus: str) -> None:
    dialogues = raw(path)
    n_dlg = len(dialogues)
    n_edu = sum(len(d["edus"]) for d in dialogues)
    n_rel = sum(len(d["relations"]) for d in dialogues)
    n_spk = len({e["speaker"] for d in dialogues for e in d["edus"]})
    assert n_dlg == 8 and n_edu > 40 and n_rel > 30  # the sample is what we think it is

    bundle = load_dialogue_json([path], corpus)
    bundle.validate()
    assert bundle.counts() == {
        "Corpus": 1,
        "Dialogue": n_dlg,
        "Locution": n_edu,
        "DiscourseRelation": n_rel,
        "Speaker": n_spk,
        "AIF_EDGE": 2 * n_rel,
        # dialogue -> corpus, EDU -> dialogue, relation -> dialogue
        "PART_OF": n_dlg + n_edu + n_rel,
        "SPOKEN_BY": n_edu,
    }
    assert bundle.corpus.id == corpus
    assert all(n.corpus == corpus for n in bundle.nodes)
    assert all(e.corpus == corpus for e in bundle.edges)


@pytest.mark.parametrize(("path", "corpus"), [(MOLWENI, "molweni"), (STAC, "stac")])
def test_ids_text_and_speakers(path: Path, corpus: str) -> None:
    dialogues = raw(path)
    bundle = load_dialogue_json([path], corpus)
    by_id = {n.id: n for n in bundle.nodes}
    speakers = {s.id: s for s in of_type(bundle, SpeakerRecord)}
    for key, dlg in zip(keys(dialogues), dialogues, strict=True):
        disc = by_id[f"{corpus}:{key}"]
        assert isinstance(disc, DiscourseRecord)
        assert disc.kind == "Dialogue" and disc.local_id == dlg["id"]
        assert disc.source == path.name and disc.split == path.stem
        assert disc.labels() == (Label.Dialogue, Label.Discourse, Label.Node)
        for i, edu in enumerate(dlg["edus"]):
            loc = by_id[f"{corpus}:{key}:edu:{i}"]
            assert isinstance(loc, LocutionRecord)
            assert (loc.text, loc.speaker, loc.position, loc.discourse) == (edu["text"], edu["speaker"], i, disc.id)
            assert loc.speaker_id == f"{corpus}:speaker:{edu['speaker']}"
            assert speakers[loc.speaker_id].name == edu["speaker"]
    spoken = {(e.source, e.target) for e in bundle.edges if e.type is RelType.SPOKEN_BY}
    assert spoken == {(n.id, n.speaker_id) for n in of_type(bundle, LocutionRecord)}


@pytest.mark.parametrize(("path", "corpus"), [(MOLWENI, "molweni"), (STAC, "stac")])
def test_relations_are_reified_with_aif_edges(path: Path, corpus: str) -> None:
    dialogues = raw(path)
    bundle = load_dialogue_json([path], corpus)
    by_id = {n.id: n for n in bundle.nodes}
    aif = {(e.source, e.target) for e in bundle.edges if e.type is RelType.AIF_EDGE}
    for key, dlg in zip(keys(dialogues), dialogues, strict=True):
        for j, rel in enumerate(dlg["relations"]):
            node = by_id[f"{corpus}:{key}:rel:{j}"]
            assert isinstance(node, RelationRecord)
            assert node.scheme_label == rel["type"] and node.origin == "gold"
            assert node.scheme_class is not None and node.scheme_class.startswith(
                f"https://w3id.org/argweb/scheme/{corpus}#"
            )
            assert node.labels()[0] is Label.DiscourseRelation
            assert {Label.Transition, Label.SchemeNode, Label.Relation, Label.Node} <= set(node.labels())
            # x -> relation -> y, whatever the order of x and y in the dialogue
            assert (f"{corpus}:{key}:edu:{rel['x']}", node.id) in aif
            assert (node.id, f"{corpus}:{key}:edu:{rel['y']}") in aif


def test_question_answer_pair_sense_is_unified() -> None:
    molweni = load_dialogue_json([MOLWENI], "molweni")
    stac = load_dialogue_json([STAC], "stac")
    senses: dict[str, set[str | None]] = {}
    for bundle in (molweni, stac):
        for rel in of_type(bundle, RelationRecord):
            senses.setdefault(rel.scheme_label, set()).add(rel.sense)
    assert senses["QAP"] == {Sense.QuestionAnswerPair.value}
    assert senses["Question-answer_pair"] == {Sense.QuestionAnswerPair.value}
    # Labels the two schemes spell alike get the same sense, and every relation has one.
    assert senses["Comment"] == {Sense.Comment.value}
    assert all(len(s) == 1 and None not in s for s in senses.values())
    qap_classes = {
        r.scheme_class for b in (molweni, stac) for r in of_type(b, RelationRecord) if r.sense == "QuestionAnswerPair"
    }
    assert qap_classes == {
        "https://w3id.org/argweb/scheme/molweni#QAP",
        "https://w3id.org/argweb/scheme/stac#Question_answer_pair",
    }


def test_stac_repeated_dialogue_ids_stay_distinct() -> None:
    dialogues = raw(STAC)
    repeated = [i for i, c in Counter(d["id"] for d in dialogues).items() if c > 1]
    assert repeated, "the STAC sample must contain a repeated dialogue id"
    bundle = load_dialogue_json([STAC], "stac")
    discs = of_type(bundle, DiscourseRecord)
    assert len(discs) == len(dialogues) == len({d.id for d in discs})
    for local in repeated:
        same = sorted(d.id for d in discs if d.local_id == local)
        n = sum(d["id"] == local for d in dialogues)
        assert same == sorted([f"stac:{local}"] + [f"stac:{local}~{k}" for k in range(2, n + 1)])
    # EDUs of the repeated dialogues are distinct nodes too, each in its own dialogue.
    locs = of_type(bundle, LocutionRecord)
    assert len({loc.id for loc in locs}) == sum(len(d["edus"]) for d in dialogues)


def test_stac_backward_link_is_kept() -> None:
    dialogues = raw(STAC)
    backward = [
        (k, r) for k, d in zip(keys(dialogues), dialogues, strict=True) for r in d["relations"] if r["x"] > r["y"]
    ]
    assert backward, "the STAC sample must contain a relation with x > y"
    bundle = load_dialogue_json([STAC], "stac")
    aif = [(e.source, e.target) for e in bundle.edges if e.type is RelType.AIF_EDGE]
    into = {t: s for s, t in aif}
    out_of = {s: t for s, t in aif}
    for key, rel in backward:
        rel_ids = [n.id for n in of_type(bundle, RelationRecord) if into.get(n.id) == f"stac:{key}:edu:{rel['x']}"]
        assert any(out_of[r] == f"stac:{key}:edu:{rel['y']}" for r in rel_ids)


def test_registry_finds_the_samples() -> None:
    root = SAMPLES
    assert CORPORA["molweni"].find(root) == [MOLWENI]
    assert CORPORA["stac"].find(root) == [STAC]
    bundle = CORPORA["stac"].load(CORPORA["stac"].find(root))
    assert bundle.corpus.id == "stac"


def test_unknown_scheme_is_rejected() -> None:
    with pytest.raises(LoaderError, match="unknown dialogue scheme"):
        load_dialogue_json([MOLWENI], "molweni", scheme="nope")


def test_molweni_labels_are_not_stac_labels() -> None:
    # Molweni writes QAP; read with the STAC scheme that label is unknown.
    with pytest.raises(LoaderError, match=r"unknown stac label 'QAP'"):
        load_dialogue_json([MOLWENI], "molweni", scheme="stac")


@pytest.mark.parametrize(
    ("name", "corpus", "where"),
    [
        ("truncated.json", "molweni", r"line \d+, column \d+: invalid JSON"),
        ("relation_out_of_range.json", "molweni", r"dialogue #1 \(id 7084\), relation 2: y=9 is out of range"),
        ("unknown_relation_label.json", "stac", r"dialogue #1 \(id pilot01\), relation 1: unknown stac label 'Banter'"),
    ],
)
def test_bad_files_name_file_and_record(name: str, corpus: str, where: str) -> None:
    path = BAD / name
    with pytest.raises(LoaderError, match=where) as err:
        load_dialogue_json([path], corpus)
    assert str(err.value).startswith(str(path))


def test_wrong_shape_names_the_record(tmp_path: Path) -> None:
    cases: list[tuple[Any, str]] = [
        ({"id": "x"}, "expected a JSON array of dialogues"),
        ([{"id": "d1", "edus": [], "relations": {}}], r"dialogue #0 \(id d1\): field 'relations' has type dict"),
        (
            [{"id": "d1", "edus": [{"text": "hi"}], "relations": []}],
            r"dialogue #0 \(id d1\), edu 0: missing field 'speaker'",
        ),
        (
            [{"id": "d1", "edus": [{"text": "a", "speaker": "s"}], "relations": [{"x": "0", "y": 0, "type": "QAP"}]}],
            r"relation 0: field 'x' has type str",
        ),
    ]
    for k, (content, message) in enumerate(cases):
        path = tmp_path / f"case{k}.json"
        path.write_text(json.dumps(content), encoding="utf-8")
        with pytest.raises(LoaderError, match=message):
            load_dialogue_json([path], "molweni")
    # A dialogue without a relations field is an unannotated one (what `parse discourse` reads).
    path = tmp_path / "raw.json"
    edus = [{"text": "a", "speaker": "s"}, {"text": "b", "speaker": "t"}]
    path.write_text(json.dumps([{"id": "d1", "edus": edus}]), encoding="utf-8")
    bundle = load_dialogue_json([path], "molweni")
    assert sum(isinstance(n, LocutionRecord) for n in bundle.nodes) == 2
    assert not any(isinstance(n, RelationRecord) for n in bundle.nodes)
    path.write_text(json.dumps([{"id": "d1", "edus": edus, "relations": [{"x": 0, "y": 1, "type": "QAP"}]}]))
    assert sum(isinstance(n, RelationRecord) for n in load_dialogue_json([path], "molweni").nodes) == 1


def test_an_empty_array_is_refused(tmp_path: Path) -> None:
    """Issue 47, item 11: ``[]`` loaded nothing and was recorded; a file that loads nothing is refused."""
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    with pytest.raises(LoaderError, match="an empty array, no dialogue") as err:
        load_dialogue_json([MOLWENI, empty], "molweni")
    assert str(err.value).startswith(str(empty))
