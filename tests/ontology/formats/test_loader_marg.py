"""M-Arg loader on the shipped sample (``graphstore/samples/m-arg``) and on broken files.

Expected values are recomputed here from the CSV files with the ``csv`` module, never taken from
the loader. The sentence, gold and timestamp files are real cuts; the crowd annotation files are
synthetic in the documented format (see the sample's PROVENANCE.md).
"""

from __future__ import annotations

import csv
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from ontology.errors import LoaderError
from ontology.formats.marg import load_marg, resolve_pair
from ontology.formats.registry import files_for
from ontology.records import (
    AnnotatorRecord,
    CorpusBundle,
    DiscourseRecord,
    JudgementRecord,
    LocutionRecord,
    PropositionRecord,
    RelationRecord,
    SpeakerRecord,
)
from ontology.terms import Label, RelType
from tests.conftest import BAD, SAMPLES, of_type, sample_bundle

SAMPLE = SAMPLES / "m-arg"
SENTENCES = SAMPLE / "dataset_context_definition.csv"
FEATURES = SAMPLE / "full_feature_extraction_dataset.csv"
GOLD = SAMPLE / "full_dataset_processing.csv"
FULL = SAMPLE / "full_dataset.csv"
AGGREGATED = SAMPLE / "aggregated_dataset.csv"
REFERENCE = SAMPLE / "annotated_sentences_reference.csv"
TIMESTAMPS = SAMPLE / "timestamps"


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def aif_edges(bundle: CorpusBundle) -> dict[str, tuple[list[str], list[str]]]:
    """relation id -> (sources, targets) from the bundle's AIF edges."""
    out: dict[str, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
    for e in bundle.edges:
        if e.type is RelType.AIF_EDGE:
            if e.target.startswith("m-arg:pair:") or e.target.endswith(":YA"):
                out[e.target][0].append(e.source)
            else:
                out[e.source][1].append(e.target)
    return out


@pytest.fixture(scope="module")
def bundle() -> CorpusBundle:
    return sample_bundle("m-arg")


def test_pair_ids_resolve_to_the_gold_sentences() -> None:
    sentences = {r["id"]: r["text"] for r in rows(SENTENCES)}
    gold = rows(GOLD)
    assert len(gold) == 8
    for r in gold:
        s1, s2 = resolve_pair(r["pair_id"], "test")
        assert (sentences[s1], sentences[s2]) == (r["sentence_1"], r["sentence_2"])
    # The documented example: centre 456 of debate 02, pair digits 55/59.
    assert resolve_pair("n020456b07p5559", "x") == ("n020455", "n020459")
    # Digits wrap across a hundred: centre 103, "98" is sentence 98 and "01" sentence 101.
    assert resolve_pair("n050103b07p9801", "x") == ("n050098", "n050101")


def test_sentences_become_locution_proposition_and_illocution(bundle: CorpusBundle) -> None:
    raw = rows(SENTENCES)
    features = {r["id"]: r for r in rows(FEATURES)}
    locutions = {n.local_id: n for n in of_type(bundle, LocutionRecord)}
    propositions = {n.local_id: n for n in of_type(bundle, PropositionRecord)}
    illocutions = [n for n in of_type(bundle, RelationRecord) if n.kind is Label.Illocution]
    assert len(locutions) == len(propositions) == len(illocutions) == len(raw) == 209
    parts = {r["id"][1:3] for r in raw}
    dialogues = of_type(bundle, DiscourseRecord)
    assert {d.local_id for d in dialogues} == parts == {"00", "12", "16"}
    assert {d.name for d in dialogues} >= {"us_election_2020_1st_presidential_debate_part1"}
    speakers = {(r["speaker"], int(r["speaker_id"])) for r in raw if r["speaker"] != "error"}
    assert {(s.name, int(s.id.rsplit(":", 1)[1])) for s in of_type(bundle, SpeakerRecord)} == speakers
    edges = aif_edges(bundle)
    for r in raw:
        loc, prop = locutions[r["id"]], propositions[r["id"]]
        assert loc.text == prop.text == r["text"]
        assert loc.position == prop.position == int(r["id"][3:])
        assert loc.part == r["id"][1:3] and loc.discourse == f"m-arg:part:{r['id'][1:3]}"
        assert loc.audio_file == r["audio_file"] and loc.timestamp == features[r["id"]]["timestamp"]
        assert loc.topic == (None if r["context"] == "Ignore" else r["context"])
        if r["speaker"] == "error":
            assert loc.speaker is None and loc.speaker_id is None
        else:
            assert loc.speaker == r["speaker"] and loc.speaker_id == f"m-arg:speaker:{int(r['speaker_id'])}"
        assert edges[f"m-arg:{r['id']}:YA"] == ([loc.id], [prop.id])


def test_timestamps_set_start_and_end(bundle: CorpusBundle) -> None:
    locutions = {n.local_id: n for n in of_type(bundle, LocutionRecord)}
    expected: dict[str, tuple[float, float]] = {}
    for path, part in (
        (TIMESTAMPS / "us_election_2020_1st_presidential_debate_part1_timestamp.csv", "00"),
        (TIMESTAMPS / "us_election_2020_trump_town_hall_2_timestamp.csv", "12"),
    ):
        with open(path, encoding="utf-8", newline="") as fh:
            for k, (fid, start, end, text) in enumerate(csv.reader(fh)):
                sid = f"n{part}{k:04d}"
                assert locutions[sid].text == text and locutions[sid].timestamp == fid
                expected[sid] = (float(start), float(end))
    assert len(expected) == 156
    for sid, loc in locutions.items():
        got = (loc.start_time, loc.end_time)
        assert got == expected.get(sid, (None, None))
    assert locutions["n000002"].start_time == 9.0 and locutions["n000002"].end_time == 17.88


def _trust_weighted(judgements: list[dict[str, str]]) -> tuple[str, float, int, int]:
    """Top label by summed trust, its trust share, its votes, all votes (untainted only)."""
    ok = [j for j in judgements if j["_tainted"] == "FALSE"]
    weight: dict[str, float] = defaultdict(float)
    for j in ok:
        weight[j["relation"].capitalize()] += float(j["_trust"])
    top = max(weight, key=lambda k: weight[k])
    return top, weight[top] / sum(weight.values()), sum(1 for j in ok if j["relation"].capitalize() == top), len(ok)


def test_pairs_relations_and_judgements(bundle: CorpusBundle) -> None:
    gold = {r["pair_id"]: r for r in rows(GOLD)}
    full = rows(FULL)
    aggregated = {r["pair_id"]: r for r in rows(AGGREGATED)}
    by_pair: dict[str, list[dict[str, str]]] = defaultdict(list)
    for j in full:
        by_pair[j["pair_id"]].append(j)
    pair_ids = set(gold) | set(by_pair) | set(aggregated)
    relations = {n.local_id: n for n in of_type(bundle, RelationRecord) if n.kind is not Label.Illocution}
    assert set(relations) == pair_ids and len(pair_ids) == 15
    edges = aif_edges(bundle)
    for pid, rel in relations.items():
        s1, s2 = resolve_pair(pid, "test")
        assert edges[rel.id] == ([f"m-arg:{s1}:I"], [f"m-arg:{s2}:I"])
        assert rel.discourse == f"m-arg:part:{pid[1:3]}" and rel.origin == "gold"
        if pid in gold:
            label = gold[pid]["relation_gold"]
            assert rel.reason == gold[pid]["relation_gold_reason"].strip()
        elif pid in aggregated:
            label = aggregated[pid]["relation"].capitalize()
            assert rel.reason is None
        else:
            label = _trust_weighted(by_pair[pid])[0]
        assert rel.scheme_label == label
        assert rel.kind is {"Support": Label.Support, "Attack": Label.Attack, "Neither": Label.NonRelation}[label]
        assert rel.scheme_class == f"https://w3id.org/argweb/scheme/m-arg#{label}"
        if pid in aggregated and aggregated[pid]["relation"].capitalize() == label:
            assert rel.confidence == float(aggregated[pid]["relation:confidence"])
        elif pid in by_pair:
            top, share, _, _ = _trust_weighted(by_pair[pid])
            assert top == label and rel.confidence == pytest.approx(share)
        else:
            assert rel.confidence is None
        if pid in by_pair:
            ok = [j for j in by_pair[pid] if j["_tainted"] == "FALSE"]
            votes = sum(1 for j in ok if j["relation"].capitalize() == label)
            assert (rel.votes, rel.annotator_count) == (votes, len(ok))
            assert rel.vote_share == pytest.approx(votes / len(ok))
    # The one pair only in the per-judgement file gets the trust-weighted majority: attack by
    # workers of trust 1.0 + 0.875 + 0.85 against neither by 0.9333.
    only_full = relations["n120010b07p1012"]
    assert only_full.kind is Label.Attack and only_full.confidence == pytest.approx(2.725 / 3.6583)

    judgements = of_type(bundle, JudgementRecord)
    assert len(judgements) == len(full) == 49
    assert {a.name for a in of_type(bundle, AnnotatorRecord)} == {j["_worker_id"] for j in full}
    got = sorted((j.relation, j.annotator, j.label, j.trust, j.confidence, j.tainted, j.golden) for j in judgements)
    want = sorted(
        (
            f"m-arg:pair:{r['pair_id']}",
            f"m-arg:annotator:{r['_worker_id']}",
            r["relation"].capitalize(),
            float(r["_trust"]),
            float(r["confidence"]),
            r["_tainted"] == "TRUE",
            r["_golden"] == "TRUE",
        )
        for r in full
    )
    assert got == want


def test_gold_file_alone_with_sentences() -> None:
    b = load_marg([SENTENCES, GOLD])
    b.validate()
    rels = [n for n in of_type(b, RelationRecord) if n.kind is not Label.Illocution]
    gold = rows(GOLD)
    assert sorted(r.local_id for r in rels) == sorted(r["pair_id"] for r in gold)
    assert all(r.confidence is None and r.votes is None for r in rels)
    assert not of_type(b, JudgementRecord)


def test_documented_typo_column_and_unknown_timestamp_name(tmp_path: Path) -> None:
    # files_explanation.md spells full_dataset's second sentence column "setence_2".
    text = FULL.read_text(encoding="utf-8").replace("sentence_2,", "setence_2,", 1)
    typo = tmp_path / "full_dataset.csv"
    typo.write_text(text, encoding="utf-8")
    assert "setence_2" in typo.read_text(encoding="utf-8").split("\n", 1)[0]
    renamed = tmp_path / "part12.csv"
    shutil.copy(TIMESTAMPS / "us_election_2020_trump_town_hall_2_timestamp.csv", renamed)
    b = load_marg([SENTENCES, FEATURES, typo, renamed])
    locs = {n.local_id: n for n in of_type(b, LocutionRecord)}
    assert locs["n120002"].start_time == 11.36 and locs["n000002"].start_time is None
    assert len(of_type(b, JudgementRecord)) == 49


def _error(paths: list[Path]) -> str:
    with pytest.raises(LoaderError) as info:
        load_marg(paths)
    return str(info.value)


def test_bad_inputs_name_file_and_record(tmp_path: Path) -> None:
    msg = _error([SENTENCES, BAD / "marg_missing_column.csv"])
    assert "marg_missing_column.csv" in msg and "line 1" in msg and "_trust" in msg
    msg = _error([SENTENCES, BAD / "marg_missing_sentence.csv"])
    assert "marg_missing_sentence.csv: line 2" in msg and "n000200b07p0102" in msg and "n000201" in msg
    msg = _error([BAD / "marg_cp1252.csv"])
    assert "marg_cp1252.csv: line 2" in msg and "not UTF-8" in msg
    msg = _error([GOLD])
    assert "without the sentence file" in msg
    # A reference row whose sentence ids contradict its pair id.
    lines = REFERENCE.read_text(encoding="utf-8").split("\n")
    first = lines[1].split(",")
    first[2] = "n000099"
    broken = tmp_path / "annotated_sentences_reference.csv"
    broken.write_text("\n".join([lines[0], ",".join(first), *lines[2:]]), encoding="utf-8")
    msg = _error([SENTENCES, broken])
    assert "annotated_sentences_reference.csv: line 2" in msg and "contradict the pair id" in msg
    # A timestamp row whose text is not the sentence's.
    ts = (TIMESTAMPS / "us_election_2020_trump_town_hall_2_timestamp.csv").read_text(encoding="utf-8")
    bad_ts = tmp_path / "us_election_2020_trump_town_hall_2_timestamp.csv"
    bad_ts.write_text(ts.replace("I really felt good.", "I felt great."), encoding="utf-8")
    msg = _error([SENTENCES, bad_ts])
    assert "line 10" in msg and "n120009" in msg
    # An unknown relation label.
    bad_label = tmp_path / "full_dataset_processing.csv"
    bad_label.write_text(GOLD.read_text(encoding="utf-8").replace(",Support,", ",Rebuttal,", 1), encoding="utf-8")
    msg = _error([SENTENCES, bad_label])
    assert "line 2" in msg and "Rebuttal" in msg


def test_cli_path_expansion() -> None:
    files = files_for("m-arg", [SAMPLE])
    assert {p.name for p in files} >= {"full_dataset.csv", "us_election_2020_trump_town_hall_2_timestamp.csv"}
