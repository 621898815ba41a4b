"""experiments/discourse_per_corpus.py: a parser per corpus, and per-corpus fine-tunes of the joint parser,
cross-validated under the one fold protocol."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from experiments.discourse_per_corpus import ByCorpus, WarmFit, per_file, run
from gnn.discourse.task import TASK, dialogues_of
from gnn.discourse.train import PROFILES, ParserConfig, graphs_for, schedule, train_parser
from gnn.task import Resources
from gnn.trainer import Trainer
from ontology.formats.dialogue_json import load_dialogue_files
from ontology.formats.registry import SAMPLES

FILES = [SAMPLES / "molweni" / "DP" / "dev.json", SAMPLES / "stac" / "train.json"]


def _config() -> ParserConfig:
    return ParserConfig(seed=3, **{**PROFILES["tiny"], "members": 1})


@pytest.mark.parametrize(("variant", "pooled"), [("per-corpus", False), ("finetune", False), ("finetune", True)])
def test_each_fold_parses_each_corpus_with_its_own_parser(
    variant: str, pooled: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    config = _config()
    examples = TASK.examples(load_dialogue_files(FILES), config)
    resources = Resources(tmp_path_factory.mktemp("cache"), device="cpu")
    summary = run(examples, config, resources, folds=2, seed=1, variant=variant, ft_epochs=1, pooled=pooled)
    assert summary["items"] == len(examples) and len(summary["folds"]) == 2
    for row in summary["folds"]:
        chosen = row["chosen"]
        # Every corpus with training dialogues in the fold got a parser (or fine-tune) of its own;
        # the pooled control one fine-tune of both.
        assert set(chosen) - {"joint"} <= ({"both"} if pooled else {"molweni", "stac"})
        for domain in set(chosen) - {"joint"}:
            assert set(chosen[domain]["thresholds"]) == {"molweni", "stac"}
            if variant == "finetune":
                assert all(0 <= e <= 1 for e in chosen[domain]["epochs"])
        if variant == "finetune":
            assert "joint_link_f1" in row["figures"] and set(row["joint_files"]) == set(row["files"])
    # The recipe's config is not changed by the folds (each fold tunes its own copy).
    assert config.thresholds == {"molweni": 1.01, "stac": 1.01}
    files = per_file(summary)
    assert set(files) <= {"dev.json", "train.json"} and files
    for figs in files.values():
        assert set(figs) == {"link_f1", "link_rel_f1", "folds"} and "±" in figs["link_f1"]


def test_the_router_gives_each_dialogue_its_corpus_parser(tmp_path_factory: pytest.TempPathFactory) -> None:
    config = _config()
    dialogues = dialogues_of(TASK.examples(load_dialogue_files(FILES), config))
    assert {d.domain for d in dialogues} == {"molweni", "stac"}
    resources = Resources(tmp_path_factory.mktemp("cache"), device="cpu")
    encoder = resources.encoder(None)
    a, _ = train_parser(dialogues, [], encoder, replace(config, seed=3, thresholds=dict(config.thresholds)))
    b, _ = train_parser(dialogues, [], encoder, replace(config, seed=4, thresholds=dict(config.thresholds)))
    routed = ByCorpus({"molweni": a, "stac": b}).predict(dialogues)
    alone = {"molweni": a.predict(dialogues), "stac": b.predict(dialogues)}
    for i, d in enumerate(dialogues):
        # Batched with other dialogues, the same parser's scores differ in the last float digits only.
        mine = alone[d.domain][i]
        assert [(p.x, p.y, p.sense) for p in routed[i]] == [(p.x, p.y, p.sense) for p in mine]
        assert [p.score for p in routed[i]] == pytest.approx([p.score for p in mine], rel=1e-5)
    # Two seeds give two different parsers, so the routing is what the comparison checks.
    assert alone["molweni"] != alone["stac"]


def test_a_sense_only_fine_tune_moves_the_sense_scorers_alone(tmp_path_factory: pytest.TempPathFactory) -> None:
    config = _config()
    dialogues = dialogues_of(TASK.examples(load_dialogue_files(FILES), config))
    resources = Resources(tmp_path_factory.mktemp("cache"), device="cpu")
    joint, _ = train_parser(dialogues, [], resources.encoder(None), replace(config, thresholds={}))
    start = joint.nets[0]
    before = {k: v.clone() for k, v in start.state_dict().items()}
    graphs = graphs_for(dialogues, joint.encoder, joint.vocab, config.k)
    job = WarmFit(graphs, config, joint.encoder, joint.vocab, start=start, sense_only=True)
    Trainer(schedule(replace(config, lr=1e-2), 5), "cpu").fit(job)
    after = job.module.state_dict()
    sense = [k for k in after if ".sense." in k]
    assert sense and any(not torch.equal(after[k], before[k]) for k in sense)
    assert all(torch.equal(after[k], before[k]) for k in after if k not in sense)
    # The joint network itself is untouched: the fine-tune trains a copy.
    assert all(torch.equal(v, before[k]) for k, v in start.state_dict().items())
