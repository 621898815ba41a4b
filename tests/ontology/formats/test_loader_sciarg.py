"""Sci-Arg loader on the shipped sample (``graphstore/samples/sciarg``, real cuts of A01 and A10).

Expected values are recomputed here from the brat files, never taken from the loader.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from ontology.errors import LoaderError
from ontology.formats.registry import files_for
from ontology.formats.sciarg import load_sciarg, split_sentences
from ontology.records import CorpusBundle, DiscourseRecord, PropositionRecord, RelationRecord, SentenceRecord
from ontology.terms import Label, RelType
from tests.conftest import BAD, SAMPLES, of_type, sample_bundle

CORPUS_DIR = SAMPLES / "sciarg" / "compiled_corpus"
KIND = {"supports": Label.Support, "contradicts": Label.Attack, "semantically_same": Label.Rephrase}
KIND["parts_of_same"] = Label.SameUnit
ROLE = {"own_claim": Label.Claim, "background_claim": Label.Claim, "data": Label.Premise}


def brat(stem: str) -> tuple[str, list[tuple[str, str, list[tuple[int, int]], str]], list[tuple[str, str, str, str]]]:
    """(raw text, spans (id, label, fragments, text), relations (id, label, arg1, arg2))."""
    text = (CORPUS_DIR / f"{stem}.txt").read_bytes().decode("utf-8")
    spans, relations = [], []
    for line in (CORPUS_DIR / f"{stem}.ann").read_bytes().decode("utf-8").splitlines():
        key, middle, *rest = line.split("\t")
        if key.startswith("T"):
            label, offsets = middle.split(" ", 1)
            fragments = [(int(a), int(b)) for a, b in (f.split() for f in offsets.split(";"))]
            spans.append((key, label, fragments, "\t".join(rest)))
        elif key.startswith("R"):
            label, a1, a2 = middle.split()
            relations.append((key, label, a1.removeprefix("Arg1:"), a2.removeprefix("Arg2:")))
    return text, spans, relations


@pytest.fixture(scope="module")
def bundle() -> CorpusBundle:
    return sample_bundle("sciarg")


def test_spans_and_relations_match_the_files(bundle: CorpusBundle) -> None:
    props = {p.id: p for p in of_type(bundle, PropositionRecord)}
    rels = {r.id: r for r in of_type(bundle, RelationRecord)}
    n_spans = n_rels = 0
    for stem in ("A01", "A10"):
        text, spans, relations = brat(stem)
        n_spans += len(spans)
        n_rels += len(relations)
        for key, label, fragments, ann_text in spans:
            p = props[f"sciarg:{stem}:{key}"]
            assert p.text == ann_text == " ".join(text[a:b] for a, b in fragments)
            assert p.scheme_label == label and p.labels()[0] is ROLE[label]
            assert (p.char_start, p.char_end) == (fragments[0][0], fragments[-1][1])
            assert p.spans == ";".join(f"{a} {b}" for a, b in fragments)
            assert p.discourse == f"sciarg:{stem}"
        for key, label, _, _ in relations:
            r = rels[f"sciarg:{stem}:{key}"]
            assert r.kind is KIND[label] and r.scheme_label == label
            assert r.scheme_class == f"https://w3id.org/argweb/scheme/sciarg#{label}"
    assert (n_spans, n_rels) == (115, 72)
    assert len(props) == n_spans and len(rels) == n_rels
    # AIF direction: Arg1 -> relation -> Arg2.
    into = {e.target: e.source for e in bundle.edges if e.type is RelType.AIF_EDGE and e.target in rels}
    out = {e.source: e.target for e in bundle.edges if e.type is RelType.AIF_EDGE and e.source in rels}
    for stem in ("A01", "A10"):
        for key, _, a1, a2 in brat(stem)[2]:
            rid = f"sciarg:{stem}:{key}"
            assert (into[rid], out[rid]) == (f"sciarg:{stem}:{a1}", f"sciarg:{stem}:{a2}")


def test_discontinuous_span_keeps_markup_and_tab(bundle: CorpusBundle) -> None:
    p = next(p for p in of_type(bundle, PropositionRecord) if p.id == "sciarg:A10:T29")
    assert p.spans == "4495 4504;4505 4580"
    assert p.text == "The joint \t  weights for each vertex are automatically computed from the sample poses"


def test_sentences_cover_components(bundle: CorpusBundle) -> None:
    docs = {d.local_id: d for d in of_type(bundle, DiscourseRecord)}
    assert set(docs) == {"A01", "A10"} and all(d.kind == "Document" for d in docs.values())
    assert docs["A01"].name == (
        "A Powell Optimization Approach for Example-Based Skinning in a Production Animation Environment"
    )
    sentences = of_type(bundle, SentenceRecord)
    for stem in ("A01", "A10"):
        text, spans, _ = brat(stem)
        mine = sorted((s for s in sentences if s.discourse == f"sciarg:{stem}"), key=lambda s: s.position)
        assert len(mine) > 40
        previous_end = text.index("<Title>")
        for s in mine:
            assert previous_end <= s.char_start < s.char_end <= len(text)
            assert s.text == text[s.char_start : s.char_end] == s.text.strip()
            assert "<" not in s.text  # markup separates sentences, it is never inside one
            previous_end = s.char_end
        props = {p.local_id: p for p in of_type(bundle, PropositionRecord) if p.discourse == f"sciarg:{stem}"}
        for key, _, fragments, _ in spans:
            overlapping = [s.id for s in mine if any(s.char_start < b and a < s.char_end for a, b in fragments)]
            assert overlapping and props[key].sentences == overlapping
    in_sentence = Counter(e.type for e in bundle.edges)[RelType.IN_SENTENCE]
    assert in_sentence == sum(len(p.sentences) for p in of_type(bundle, PropositionRecord))


def test_splitter_rules() -> None:
    text = (
        "<H1>1 Intro</H1>\n  As shown by Fig. 2 and Lewis et al. [ 3 ], J. P. Lewis works. It is 3.5 m long!\n\n  Next"
    )
    got = [text[a:b] for a, b in split_sentences(text)]
    assert got == [
        "1 Intro",
        "As shown by Fig. 2 and Lewis et al. [ 3 ], J. P. Lewis works.",
        "It is 3.5 m long!",
        "Next",
    ]
    start = text.index("It is")
    assert [text[a:b] for a, b in split_sentences(text, start)] == ["It is 3.5 m long!", "Next"]


def _error(paths: list[Path]) -> str:
    with pytest.raises(LoaderError) as info:
        load_sciarg(paths)
    return str(info.value)


def test_bad_inputs_name_file_and_line(tmp_path: Path) -> None:
    msg = _error([BAD / "sciarg_offsets.ann"])
    assert "sciarg_offsets.ann: line 2 (T2)" in msg and "outside the text" in msg
    msg = _error([BAD / "sciarg_stripped.ann"])
    assert "sciarg_stripped.ann: line 1 (T1)" in msg and "We propose a method" in msg
    msg = _error([BAD / "sciarg_latin1.ann"])
    assert "sciarg_latin1.txt: line 2" in msg and "not UTF-8" in msg
    lonely = tmp_path / "A99.ann"
    lonely.write_text("T1\tdata 0 1\tx\n", encoding="utf-8")
    assert "A99.txt" in _error([lonely])
    (tmp_path / "A98.txt").write_text("We propose a method.", encoding="utf-8")
    (tmp_path / "A98.ann").write_text("T1\town_claim 0 19\tWe propose a method\nR1\tsupports Arg1:T1 Arg2:T7\t\n")
    msg = _error([tmp_path / "A98.ann"])
    assert "A98.ann: line 2 (R1)" in msg and "'T7'" in msg
    (tmp_path / "A96.txt").write_text("We propose a method.", encoding="utf-8")
    (tmp_path / "A96.ann").write_text("T1\town_claim 0 19\tWe propose a method\nE1\tclaim:T1\n", encoding="utf-8")
    msg = _error([tmp_path / "A96.ann"])
    assert "A96.ann: line 2 (E1)" in msg and "unsupported brat annotation type 'E'" in msg
    (tmp_path / "A96.ann").write_text("T1\town_claim 0 19\tWe propose a method\nA1\tFlag\n", encoding="utf-8")
    assert "A96.ann: line 2 (A1)" in _error([tmp_path / "A96.ann"])


def test_cli_path_expansion() -> None:
    assert [p.name for p in files_for("sciarg", [CORPUS_DIR.parent])] == ["A01.ann", "A10.ann"]
