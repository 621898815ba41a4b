"""The discourse task under the one fold protocol (gnn.protocol through DiscourseTask.cross_validate): each
fold's networks are fitted by the Trainer on the other folds, their epochs chosen on a tuning part inside them,
and no session or game is on both sides of a fold."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gnn.discourse.task import TASK, DiscourseExample, dialogue_groups, dialogues_of
from gnn.discourse.train import PROFILES, ParserConfig
from gnn.protocol import fold_plan
from gnn.task import Resources
from ontology.formats.dialogue_json import load_dialogue_files
from ontology.formats.registry import SAMPLES

FILES = [SAMPLES / "molweni" / "DP" / "dev.json", SAMPLES / "stac" / "train.json"]


@pytest.fixture(scope="module")
def examples() -> list[DiscourseExample]:
    return TASK.examples(load_dialogue_files(FILES), TASK.recipes.config("tiny"))


def test_examples_are_every_edu_with_its_nearest_gold_parent(examples: list[DiscourseExample]) -> None:
    dialogues = dialogues_of(examples)
    assert {d.key.rpartition("#")[0] for d in dialogues} == {"dev.json", "train.json"}
    assert len(examples) == sum(len(d) for d in dialogues)
    for e in examples:
        parents = [(x, s.value) for x, y, s in e.dialogue.relations if y == e.index]
        if parents:
            x, sense = max(parents)
            assert (e.source, e.label) == (e.dialogue.texts[x], sense)
        else:
            assert (e.source, e.label) == ("", "none")
    # A dialogue's EDUs share its session / game group, named per file.
    for d in dialogues:
        assert len({e.group for e in examples if e.dialogue is d}) == 1
    assert {d.domain for d in dialogues} == {"molweni", "stac"}


def test_every_edu_is_scored_once_by_networks_that_never_saw_its_group(
    examples: list[DiscourseExample], tmp_path_factory: pytest.TempPathFactory
) -> None:
    groups = [e.group for e in examples]
    for fold in fold_plan(groups, 2, seed=1):
        assert not {groups[i] for i in fold.test} & {groups[i] for i in fold.train + fold.tune}
    # The groups of the dialogues are their session groups (per file, as the shipped recipe splits).
    for name in ("dev.json", "train.json"):
        ds = [d for d in dialogues_of(examples) if d.key.startswith(f"{name}#")]
        assert len({e.group for e in examples if e.dialogue in ds}) == len(set(dialogue_groups(ds)))
    config = replace(ParserConfig(seed=3, **PROFILES["tiny"]), members=2)
    resources = Resources(tmp_path_factory.mktemp("cache"), device="cpu")
    out = TASK.cross_validate(examples, config, resources, folds=2, seed=1, profile="tiny")
    assert out.items == len(examples) and len(out.folds) == 2
    assert sum(t.gold for t in out.labels.values()) == len(examples)
    for row in out.folds:
        # Each member's kept epoch, from the trainer's history (the epoch its tuning score chose).
        assert len(row["chosen"]["epochs"]) == 2 and all(1 <= e <= config.epochs for e in row["chosen"]["epochs"])
        assert set(row["chosen"]["thresholds"]) == {"molweni", "stac"}
    for measure in ("link_f1", "link_rel_f1"):
        spread = out.figures[measure]
        assert spread.mean is not None and len(spread.folds) == 2
        assert spread.mean == pytest.approx(sum(v or 0.0 for v in spread.folds) / 2, abs=1e-3)
