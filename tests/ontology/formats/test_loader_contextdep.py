"""ContextDeP loader on the shipped sample (``graphstore/samples/contextdep``, real rows of train/dev).

Expected values are recomputed here from the TSV files (``csv`` + ``ast``), never taken from the loader.
"""

from __future__ import annotations

import ast
import csv
import io
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from ontology.errors import LoaderError
from ontology.formats.contextdep import load_contextdep
from ontology.formats.registry import files_for
from ontology.records import (
    AnnotatorRecord,
    CorpusBundle,
    DiscourseRecord,
    JudgementRecord,
    LocutionRecord,
    RelationRecord,
)
from ontology.terms import Label, RelType
from tests.conftest import BAD, SAMPLES, of_type, sample_bundle

SAMPLE = SAMPLES / "contextdep"
TOKENS = sorted(SAMPLE.glob("*_TOKEN-annotations.tsv"))
ANON = [SAMPLE / "ANON_dev.tsv", SAMPLE / "ANON_train.tsv"]


def token_rows() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for path in TOKENS:
        with open(path, encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh, delimiter="\t"):
                out[r["QID"]] = {k: (r[k] if k == "QID" else ast.literal_eval(r[k])) for k in r}
                out[r["QID"]]["split"] = "dev" if "DEV" in path.name else "train"
    return out


def annotation_groups() -> dict[tuple[str, str], dict[str, str]]:
    out: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for path in ANON:
        raw = path.read_bytes()
        assert raw[:2] == b"\xff\xfe"
        for r in csv.DictReader(io.StringIO(raw.decode("utf-16"), newline=""), delimiter="\t"):
            out[(r["QID"], r["Annotator"])][r["Category"]] = r["Highlighted"]
            out[(r["QID"], r["Annotator"])]["Session"] = r["Session"]
    return out


@pytest.fixture(scope="module")
def bundle() -> CorpusBundle:
    return sample_bundle("contextdep")


def test_pairs_locutions_and_relations(bundle: CorpusBundle) -> None:
    raw = token_rows()
    assert len(raw) == 10
    dialogues = {d.local_id: d for d in of_type(bundle, DiscourseRecord)}
    locutions = {n.id: n for n in of_type(bundle, LocutionRecord)}
    relations = {r.local_id: r for r in of_type(bundle, RelationRecord)}
    assert set(dialogues) == set(relations) == set(raw)
    aif = [(e.source, e.target) for e in bundle.edges if e.type is RelType.AIF_EDGE]
    for qid, r in raw.items():
        d = dialogues[qid]
        assert d.split == r["split"] and d.name == qid.rsplit("-", 1)[0] and d.kind == "Dialogue"
        guest, host = locutions[f"contextdep:{qid}:guest"], locutions[f"contextdep:{qid}:host"]
        assert guest.tokens == r["Guest Tokens"] and host.tokens == r["Host Tokens"]
        assert guest.text == " ".join(r["Guest Tokens"]) and host.text == " ".join(r["Host Tokens"])
        assert guest.highlights == [float(x) for x in r["Guest HLs"]]
        assert host.highlights == [float(x) for x in r["Host HLs"]]
        assert (guest.position, host.position) == (0, 1)
        paraphrase, total = r["Vote"]
        rel = relations[qid]
        assert (rel.votes, rel.annotator_count) == (paraphrase, total)
        assert rel.vote_share == pytest.approx(paraphrase / total)
        label = "Paraphrase" if paraphrase / total >= 0.5 else "NonParaphrase"
        assert rel.scheme_label == label
        assert rel.kind is (Label.Rephrase if label == "Paraphrase" else Label.NonRelation)
        assert (guest.id, rel.id) in aif and (rel.id, host.id) in aif
    # CNN-177596-7 has exactly half the votes: the corpus' >= 0.5 rule makes it a paraphrase.
    assert relations["CNN-177596-7"].kind is Label.Rephrase and relations["CNN-177596-7"].vote_share == 0.5


def test_judgements_reproduce_votes_and_highlights(bundle: CorpusBundle) -> None:
    raw = token_rows()
    ann = annotation_groups()
    judgements = {j.id: j for j in of_type(bundle, JudgementRecord)}
    assert len(judgements) == len(ann) == sum(r["Vote"][1] for r in raw.values()) == 128
    assert {a.name for a in of_type(bundle, AnnotatorRecord)} == {a for _, a in ann}
    for (qid, annotator), rows in ann.items():
        j = judgements[f"contextdep:{qid}:{annotator}"]
        referred = ast.literal_eval(rows["Referred"]) if rows["Referred"].strip() else []
        para = ast.literal_eval(rows["Paraphrase"]) if rows["Paraphrase"].strip() else []
        assert j.source_tokens == [i - 1 for i in referred] and j.target_tokens == [i - 1 for i in para]
        assert j.label == ("Paraphrase" if referred and para else "NonParaphrase")
        assert j.is_referring == (rows["Is Referring"] == "Yes")
        assert j.reason == (rows["Comment"].strip() or None) and j.session == rows["Session"]
        assert j.relation == f"contextdep:{qid}:rel" and j.annotator == f"contextdep:annotator:{annotator}"
    for qid, r in raw.items():
        mine = [j for j in judgements.values() if j.relation == f"contextdep:{qid}:rel"]
        voters = [j for j in mine if j.label == "Paraphrase"]
        assert [len(voters), len(mine)] == r["Vote"]
        if voters:
            # HLs = share of paraphrase voters highlighting each token: only 0-based positions of the
            # 1-based file numbers reproduce them.
            for side, tokens in (("Guest", "source_tokens"), ("Host", "target_tokens")):
                shares = [
                    sum(i in getattr(j, tokens) for j in voters) / len(voters) for i in range(len(r[f"{side} HLs"]))
                ]
                assert shares == pytest.approx([float(x) for x in r[f"{side} HLs"]], abs=0.011)


def _error(paths: list[Path]) -> str:
    with pytest.raises(LoaderError) as info:
        load_contextdep(paths)
    return str(info.value)


def test_bad_inputs_name_file_and_record(tmp_path: Path) -> None:
    dev = SAMPLE / "ANON_DEV_TOKEN-annotations.tsv"
    msg = _error([dev, BAD / "cdep_ANON_dev_utf8.tsv"])
    assert "cdep_ANON_dev_utf8.tsv: line 1" in msg and "UTF-16" in msg
    msg = _error([dev, BAD / "cdep_ANON_dev_incomplete.tsv"])
    assert "cdep_ANON_dev_incomplete.tsv: line 2 (QID CNN-300212-13, annotator PROLIFIC_1)" in msg
    assert "comment" in msg
    msg = _error([BAD / "cdep_NOVOTE_TOKEN-annotations.tsv"])
    assert "cdep_NOVOTE_TOKEN-annotations.tsv: line 1" in msg and "vote" in msg
    msg = _error([BAD / "cdep_UTF16_TOKEN-annotations.tsv"])
    assert "cdep_UTF16_TOKEN-annotations.tsv: line 1" in msg and "UTF-8" in msg
    # Per-annotator rows for a QID whose aggregated row was not given.
    msg = _error([SAMPLE / "ANON_TRAIN_TOKEN-annotations.tsv", SAMPLE / "ANON_dev.tsv"])
    assert "ANON_dev.tsv: line 2 (QID CNN-300212-13" in msg and "not in the *_TOKEN-annotations" in msg
    # A highlighted token number beyond the utterance.
    text = (SAMPLE / "ANON_dev.tsv").read_bytes().decode("utf-16").split("\n")
    fields = text[1].split("\t")
    fields[2] = "[1, 999]"
    broken = tmp_path / "ANON_dev.tsv"
    broken.write_bytes(b"\xff\xfe" + "\n".join([text[0], "\t".join(fields), *text[2:]]).encode("utf-16-le"))
    msg = _error([dev, broken])
    assert "line 2" in msg and "999" in msg
    # A malformed token list.
    rows = dev.read_text(encoding="utf-8").split("\n")
    bad_row = rows[2].split("\t")
    bad_row[1] = "['unclosed"
    broken_tok = tmp_path / "ANON_DEV_TOKEN-annotations.tsv"
    broken_tok.write_text("\n".join([rows[0], rows[1], "\t".join(bad_row), *rows[3:]]), encoding="utf-8")
    msg = _error([broken_tok])
    assert "line 3 (QID CNN-234343-5)" in msg and "Guest Tokens" in msg
    assert "no *_TOKEN-annotations.tsv" in _error([SAMPLE / "ANON_dev.tsv"])


def test_cli_path_expansion() -> None:
    assert len(files_for("contextdep", [SAMPLE])) == 4


def test_a_header_only_file_is_refused(tmp_path: Path) -> None:
    """Issue 47, item 11: a header-only file loaded nothing and was recorded; a file that loads nothing
    is refused (the corpus marker and its input digest stay as they were)."""
    tokens = tmp_path / "ANON_DEV_TOKEN-annotations.tsv"
    tokens.write_text((SAMPLE / tokens.name).read_text(encoding="utf-8").split("\n")[0] + "\n", encoding="utf-8")
    msg = _error([tokens])
    assert f"{tokens}: line 1: a header and no rows" in msg
    anon = tmp_path / "ANON_dev.tsv"
    header = (SAMPLE / "ANON_dev.tsv").read_bytes().decode("utf-16").split("\n")[0]
    anon.write_bytes(b"\xff\xfe" + (header + "\n").encode("utf-16-le"))
    msg = _error([SAMPLE / "ANON_DEV_TOKEN-annotations.tsv", anon])
    assert f"{anon}: line 1: a header and no rows" in msg
