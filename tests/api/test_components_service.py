"""The component tagger's service: training on brat papers, prediction written as brat, fragments."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gnn.bam import BratDocument, Component, evaluate
from gnn.components import TaggerConfig, ann_text, nearest_claim_relations, predicted_document, read_papers
from gnn.components.net import ComponentTagger, TokenVectors, train_tagger
from ontology.errors import ModelError

pytestmark = pytest.mark.model  # trains a model
DATA = Path(__file__).resolve().parent.parent / "data" / "bam"


def test_train_predict_and_write_brat(tmp_path: Path) -> None:
    papers = read_papers(DATA / "gold")
    vectors = TokenVectors(cache_dir=tmp_path / "cache")
    tagger, result = train_tagger(papers, papers, TaggerConfig(epochs=25, lr=1e-2, dropout=0.0), vectors=vectors)
    assert result.best_epoch >= 1 and len(result.history) == 25
    # The trainer kept the epoch (own or averaged weights) with the best exact-span F1 on the tune papers.
    tuned = [r[k] for r in result.history for k in ("tune_exact_f1", "tune_exact_f1_averaged") if k in r]
    assert result.best_score == max(tuned) and result.history[result.best_epoch - 1]["selected"]
    assert result.seconds >= sum(r["seconds"] for r in result.history)  # the papers' encoding counts too
    assert len(list((tmp_path / "cache").glob("*.npz"))) == len(papers)  # one cached file per paper
    tagger.save(tmp_path / "m")
    loaded = ComponentTagger.load(tmp_path / "m", cache_dir=tmp_path / "cache")
    doc, text = papers["P1"]
    pred = predicted_document(loaded, doc, text, nearest_claim_relations)
    # Trained and tested on the same three sentences, the tagger recovers components there.
    scores = evaluate({"P1": pred}, {"P1": doc}).as_dict()
    assert scores["S"] > 0.6 and scores["components"]["predicted"] > 0
    for name, value in tagger.network.state_dict().items():  # float16 on disk
        assert np.allclose(loaded.network.state_dict()[name].numpy(), value.numpy(), rtol=2e-3, atol=2e-3)
    lines = ann_text(pred, text).splitlines()
    for line in lines:
        if line.startswith("T"):
            _, info, span_text = line.split("\t")
            _, start, end = info.split()
            assert text[int(start) : int(end)] == span_text
    assert all(line.split("\t")[0].startswith(("T", "R")) for line in lines)
    # A configuration that names the removed sentence-context variant loads when it is off (as the
    # shipped one does) and is refused when it is on: that network read wider rows.
    config = tmp_path / "m" / "components_config.json"
    raw = json.loads(config.read_text())
    config.write_text(json.dumps({**raw, "context": False}))
    assert ComponentTagger.load(tmp_path / "m", cache_dir=tmp_path / "cache").config == loaded.config
    config.write_text(json.dumps({**raw, "context": True}))
    with pytest.raises(ModelError, match="sentence context"):
        ComponentTagger.load(tmp_path / "m", cache_dir=tmp_path / "cache")


def test_predict_dir_with_the_shipped_model(tmp_path: Path) -> None:
    from api.services.components import predict_dir
    from gnn.bam import evaluate_dirs

    src = tmp_path / "in"
    src.mkdir()
    (src / "P1.txt").write_bytes((DATA / "gold" / "P1.txt").read_bytes())
    summary = predict_dir(src, tmp_path / "out")
    assert summary.papers == 1
    assert (tmp_path / "out" / "P1.txt").read_bytes() == (DATA / "gold" / "P1.txt").read_bytes()
    # The written .ann passes the Sci-Arg loader's checks (offsets slice the quoted text) and scores.
    result = evaluate_dirs(tmp_path / "out", DATA / "gold").as_dict()
    assert result["system"]["components"]["predicted"] == summary.components


def test_components_across_line_breaks_become_fragments() -> None:
    from gnn.components import fragments

    text = "ab cd\r\nef gh\n\nij"
    assert fragments(text, [(0, 10)]) == [(0, 5), (7, 10)]
    assert fragments(text, [(3, 16)]) == [(3, 5), (7, 12), (14, 16)]
    doc = BratDocument("x", components={"T1": Component("T1", "data", ((0, 10),))})
    assert ann_text(doc, text).split("\n")[0] == "T1\tdata 0 5;7 10\tab cd ef "


class _OneSpan:
    def predict(self, doc: BratDocument, text: str) -> list[Component]:
        return [Component("T1", "data", ((0, 10),)), Component("T2", "own_claim", ((14, 16),))]


def test_a_predicted_component_is_scored_as_it_is_written() -> None:
    text = "ab cd\r\nef gh\n\nij"
    gold = BratDocument("x", [(0, 16)], [text], {"T1": Component("T1", "data", ((0, 5), (7, 10)))})
    pred = predicted_document(_OneSpan(), gold, text)
    # Cut at the line break, as its brat line is and as the gold component is: it matches.
    assert pred.components["T1"].spans == ((0, 5), (7, 10))
    assert pred.components["T2"].spans == ((14, 16),)
    assert evaluate({"x": pred}, {"x": gold}).c.tp == 1


def test_the_recipe_cross_validates_by_paper_with_the_epoch_chosen_inside_the_training_folds(tmp_path: Path) -> None:
    from api.services import tasks
    from api.settings import Settings
    from ontology.errors import ApiError

    settings = Settings(cache_dir=tmp_path / "cache")

    corpus = tmp_path / "sciarg"
    corpus.mkdir()
    for name in ("A01", "A02", "A03", "A04", "A05", "A06"):  # one paper under six names: six groups
        for suffix in (".ann", ".txt"):
            (corpus / f"{name}{suffix}").write_bytes((DATA / "gold" / f"P1{suffix}").read_bytes())
    out = tasks.cross_validate(settings, "components", [corpus], 3, profile="quick")
    gold_lines = sum(1 for line in (DATA / "gold" / "P1.ann").read_text().splitlines() if line.startswith("T"))
    assert out.groups == 6 and out.items == 6 * gold_lines and len(out.folds) == 3 and out.profile == "quick"
    held = sorted(name for fold in out.folds for name in fold["papers"])
    assert held == ["A01", "A02", "A03", "A04", "A05", "A06"]  # every paper scored once, out of fold
    for fold in out.folds:
        assert fold["chosen"]["epoch"] >= 1
    c = out.figures["C.f1"]
    assert len(c.folds) == 3 and c.mean is not None and 0.0 <= c.mean <= 1.0 and c.std >= 0.0
    assert set(out.figures) == {"C.f1", "C.precision", "C.recall", "S", "B"}
    assert sum(row.gold for row in out.labels.values()) == 6 * gold_lines
    with pytest.raises(ApiError, match="fewer than the 7 folds"):
        tasks.cross_validate(settings, "components", [corpus], 7, profile="quick")


SAMPLE_PAPERS = Path(__file__).resolve().parents[2] / "graphstore" / "samples" / "sciarg" / "compiled_corpus"


def test_the_shipped_tagger_writes_what_it_did_before_the_task_contract(tmp_path: Path) -> None:
    from api.services.components import predict_dir

    # Written by `predict components` (components and nearest-claim relations) before the port.
    before = DATA.parent / "components" / "shipped_A10.ann"
    src = tmp_path / "in"
    src.mkdir()
    (src / "A10.txt").write_bytes((SAMPLE_PAPERS / "A10.txt").read_bytes())
    summary = predict_dir(src, tmp_path / "out")
    assert (tmp_path / "out" / "A10.ann").read_bytes() == before.read_bytes()
    lines = before.read_text(encoding="utf-8").splitlines()
    assert summary.components == sum(line.startswith("T") for line in lines) > 0
    assert summary.relations == sum(line.startswith("R") for line in lines)


def test_papers_rebuilt_from_records_give_the_tagger_what_the_files_do() -> None:
    from gnn.components import TASK, papers_from_records
    from ontology.formats.sciarg import load_sciarg

    records = load_sciarg(sorted(SAMPLE_PAPERS.glob("*.ann")))
    rebuilt = papers_from_records(records.nodes, records.edges)
    read = read_papers(SAMPLE_PAPERS)
    assert sorted(rebuilt) == sorted(read) == ["A01", "A10"]
    for name, (doc, text) in read.items():
        again, sliced = rebuilt[name]
        assert again.sentences == doc.sentences and again.components == doc.components
        # Every sentence (all the tagger reads) slices the same characters at the same offsets.
        assert [sliced[s:e] for s, e in doc.sentences] == [text[s:e] for s, e in doc.sentences]
    examples = TASK.examples(records, TASK.recipes.config("quick"))
    assert len(examples) == sum(len(doc.components) for doc, _ in read.values())
    assert {TASK.group(e) for e in examples} == {"A01", "A10"}
    first = examples[0]
    assert TASK.inputs(first).source == read[first.paper][1][first.spans[0][0] : first.spans[0][1]]
