"""The pair model's further training sources: Sci-Arg and M-Arg pairs, their groups, and the figures
per source corpus."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from gnn.encoder import TextEncoder
from gnn.pairs import (
    CONTRAST_CUES,
    LABELS,
    N_CONTRAST,
    TASK,
    PairConfig,
    PairExample,
    PairModel,
    PairVectors,
    attack_figures,
    contrast_flags,
    examples_from_maps,
    feature_width,
    marg_examples,
    sciarg_examples,
    train_pairs,
    tuning_pairs,
)
from gnn.relations.argmap import maps_from_records
from gnn.relations.marg_task import pairs_from_records
from gnn.task import Resources
from ontology.errors import LoaderError
from ontology.formats.aif import load_aif
from ontology.formats.marg import load_marg
from ontology.formats.registry import SAMPLES
from ontology.formats.sciarg import load_sciarg


@pytest.fixture(scope="module")
def sciarg() -> Resources:
    files = sorted((SAMPLES / "sciarg").rglob("*.ann"))
    marg = sorted((SAMPLES / "m-arg").glob("*.csv"))
    return Resources(Path("/nonexistent"), references={"sciarg": load_sciarg(files), "marg": load_marg(marg)})


def test_sciarg_pairs_are_its_conflicts_with_same_paper_negatives(sciarg: Resources) -> None:
    bundle = sciarg.references["sciarg"]
    found = sciarg_examples(bundle.nodes, bundle.edges, seed=3)
    labels = [e.label for e in found]
    contradicts = sum(getattr(n, "scheme_label", None) == "contradicts" for n in bundle.nodes)
    assert contradicts > 0 and labels.count("attack") == contradicts
    assert set(labels) <= set(LABELS) and labels.count("none") == len(found) - labels.count("none")
    # Every pair stays inside its paper; the same seed draws the same pairs.
    assert all(e.corpus == "sciarg" and e.group == f"sciarg:{e.map_name.rsplit(':', 1)[-1]}" for e in found)
    papers = {getattr(n, "discourse", None) for n in bundle.nodes} - {None}
    assert len({e.group for e in found}) == len(papers) >= 2
    assert found == sciarg_examples(bundle.nodes, bundle.edges, seed=3)
    assert all(e.source and e.target and e.source != e.target for e in found)


def test_marg_pairs_keep_their_label_and_event(sciarg: Resources) -> None:
    bundle = sciarg.references["marg"]
    pairs = pairs_from_records(bundle.nodes, bundle.edges)
    found = marg_examples(pairs)
    assert [e.label for e in found] == [
        {"Support": "support", "Attack": "attack", "Neither": "none"}[p.label] for p in pairs
    ]
    assert {e.group for e in found} == {f"marg:{p.group}" for p in pairs}


def test_a_recipe_with_sources_needs_them_and_reports_each_corpus(sciarg: Resources, tmp_path: Path) -> None:
    config = PairConfig(hidden=8, epochs=1, sources=("sciarg",))
    with pytest.raises(LoaderError, match="'sciarg'"):
        TASK.extra_examples(config, Resources(tmp_path))
    extra = TASK.extra_examples(config, sciarg)
    assert extra and {e.corpus for e in extra} == {"sciarg"}
    bundle = load_aif(sorted((SAMPLES / "dialam-2024" / "my_train").glob("*.json")))
    qt30 = examples_from_maps(maps_from_records(bundle.nodes, bundle.edges))
    out = TASK.cross_validate(qt30, config, replace(sciarg, cache_dir=tmp_path), folds=2, seed=0)
    assert out.items == len(qt30) + len(extra)
    assert out.groups == len({e.group for e in qt30}) + len({e.group for e in extra})
    for corpus in ("qt30", "sciarg"):
        gold = sum(v or 0 for v in out.figures[f"{corpus}:gold_attack"].folds)
        assert gold == sum(e.label == "attack" for e in [*qt30, *extra] if e.corpus == corpus)
        assert {f"{corpus}:f1_attack", f"{corpus}:precision_attack", f"{corpus}:macro_f1"} <= set(out.figures)
    assert sum(row.gold for row in out.labels.values()) == out.items


def test_attack_figures_count_what_was_said_and_what_is_gold() -> None:
    gold = ["attack", "attack", "none", "support"]
    said = ["attack", "none", "attack", "attack"]
    fig = attack_figures(gold, said)
    assert fig["precision_attack"] == pytest.approx(1 / 3) and fig["recall_attack"] == 0.5
    assert fig["f1_attack"] == pytest.approx(0.4) and (fig["predicted_attack"], fig["gold_attack"]) == (3.0, 2.0)
    assert attack_figures(["none"], ["none"])["recall_attack"] != attack_figures(["none"], ["none"])["recall_attack"]


def test_contrast_flags_widen_the_features_and_travel_with_the_model(tmp_path: Path) -> None:
    flags = contrast_flags("That sounds fair, but it would cost families more and doesn’t work.")
    assert len(flags) == N_CONTRAST and flags[CONTRAST_CUES.index("cost")] == 1.0
    assert flags[CONTRAST_CUES.index("doesn't")] == 1.0 and sum(flags) == 2.0
    assert feature_width(8, True, True, True) == feature_width(8, True, True) + 2 * N_CONTRAST
    vectors = PairVectors(TextEncoder())
    found = [
        PairExample("No, it costs too much.", "We should build it.", "attack", "g1"),
        PairExample("It creates jobs.", "We should build it.", "support", "g1"),
        PairExample("Rain fell.", "We should build it.", "none", "g2"),
        PairExample("We ought to build it.", "We should build it.", "rephrase", "g2"),
    ]
    config = PairConfig(hidden=8, epochs=1, contrast=True, sources=("sciarg",))
    model, _ = train_pairs(found, found, config, vectors)
    model.save(tmp_path)
    again = PairModel.load(tmp_path, vectors.encoder)
    assert again.config == config
    pairs = [(e.source, e.target) for e in found]
    assert np.allclose(model.probabilities(pairs), again.probabilities(pairs), atol=1e-6)


def test_only_the_named_corpus_chooses_and_the_rest_of_the_tuning_pairs_train() -> None:
    train = [PairExample("a", "b", "none", "g1")]
    tune = [PairExample("c", "d", "attack", "g2"), PairExample("e", "f", "attack", "sciarg:A01", corpus="sciarg")]
    assert tuning_pairs(train, tune, PairConfig()) == (train, tune)
    assert tuning_pairs(train, tune, PairConfig(tune_corpus="qt30")) == ([train[0], tune[1]], [tune[0]])
