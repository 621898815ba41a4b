"""Component tagger: BIO encoding/decoding, features, and a tiny train -> predict -> brat round trip."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from api.services.components import ann_text, predicted_document, read_papers
from gnn.bam import BratDocument, Component, evaluate
from gnn.components import TAGS, ComponentTagger, TaggerConfig, decode, gold_tags, nearest_claim_relations, train_tagger
from gnn.components import _Sentence as Sentence

DATA = Path(__file__).resolve().parent.parent / "data" / "bam"


def _tag(name: str) -> int:
    return TAGS.index(name)


def test_decode_bio_runs() -> None:
    spans = [(0, 2), (3, 5), (6, 8), (9, 11), (12, 14)]
    tags = [_tag("B-data"), _tag("I-data"), _tag("O"), _tag("I-own_claim"), _tag("B-own_claim")]
    # An I without its B opens a component; a B always opens a new one.
    assert decode(spans, tags) == [("data", 0, 5), ("own_claim", 9, 11), ("own_claim", 12, 14)]
    # A label flip inside a run keeps one component, labelled by its majority (ties: the first token).
    assert decode(spans[:2], [_tag("B-data"), _tag("I-own_claim")]) == [("data", 0, 5)]
    flip = [_tag("B-own_claim"), _tag("I-data"), _tag("I-data")]
    assert decode(spans[:3], flip) == [("data", 0, 8)]


def test_gold_tags_round_trip() -> None:
    sentence = Sentence([(0, 2), (3, 5), (6, 8), (9, 11)], [[] for _ in range(4)])
    comps = [Component("T1", "data", ((3, 8),)), Component("T2", "own_claim", ((9, 11),))]
    tags = gold_tags(sentence, comps)
    assert [TAGS[t] for t in tags] == ["O", "B-data", "I-data", "B-own_claim"]
    assert decode(sentence.spans, tags) == [("data", 3, 8), ("own_claim", 9, 11)]


def test_nearest_claim_linker() -> None:
    comps = [
        Component("T1", "own_claim", ((0, 10),)),
        Component("T2", "data", ((12, 20),)),
        Component("T3", "background_claim", ((100, 120),)),
        Component("T4", "data", ((5000, 5010),)),
    ]
    # T2 supports the closest claim; T4 is too far from any claim.
    assert nearest_claim_relations(comps) == [("supports", "T2", "T1")]


def test_train_predict_and_write_brat(tmp_path: Path) -> None:
    papers = read_papers(DATA / "gold")
    tagger, result = train_tagger(papers, papers, TaggerConfig(epochs=30, alpha=1e-4))
    assert result.best_epoch >= 1 and len(result.history) == 30
    tagger.save(tmp_path / "m")
    loaded = ComponentTagger.load(tmp_path / "m")
    doc, text = papers["P1"]
    pred = predicted_document(loaded, doc, text, nearest_claim_relations)
    # Trained and tested on the same three sentences, the tagger recovers components there.
    scores = evaluate({"P1": pred}, {"P1": doc}).as_dict()
    assert scores["S"] > 0.6 and scores["components"]["predicted"] > 0
    assert np.allclose(loaded.coef, tagger.coef, rtol=2e-3, atol=1e-3)  # float16 on disk
    lines = ann_text(pred, text).splitlines()
    for line in lines:
        if line.startswith("T"):
            _, info, span_text = line.split("\t")
            _, start, end = info.split()
            assert text[int(start) : int(end)] == span_text
    assert all(line.split("\t")[0].startswith(("T", "R")) for line in lines)


def test_empty_document_predicts_nothing() -> None:
    tagger = ComponentTagger(np.zeros((len(TAGS), 8), np.float32), np.zeros(len(TAGS), np.float32), TaggerConfig())
    assert tagger.predict(BratDocument("x"), "") == []


def test_predict_dir_with_the_shipped_model(tmp_path: Path) -> None:
    from api.services.bam import evaluate_dirs
    from api.services.components import predict_dir

    src = tmp_path / "in"
    src.mkdir()
    (src / "P1.txt").write_bytes((DATA / "gold" / "P1.txt").read_bytes())
    summary = predict_dir(src, tmp_path / "out")
    assert summary["papers"] == 1
    assert (tmp_path / "out" / "P1.txt").read_bytes() == (DATA / "gold" / "P1.txt").read_bytes()
    # The written .ann passes the Sci-Arg loader's checks (offsets slice the quoted text) and scores.
    result = evaluate_dirs(tmp_path / "out", DATA / "gold")
    assert result["system"]["components"]["predicted"] == summary["components"]


def test_components_across_line_breaks_become_fragments() -> None:
    from api.services.components import fragments

    text = "ab cd\r\nef gh\n\nij"
    assert fragments(text, [(0, 10)]) == [(0, 5), (7, 10)]
    assert fragments(text, [(3, 16)]) == [(3, 5), (7, 12), (14, 16)]
    doc = BratDocument("x", components={"T1": Component("T1", "data", ((0, 10),))})
    assert ann_text(doc, text).split("\n")[0] == "T1\tdata 0 5;7 10\tab cd ef "
