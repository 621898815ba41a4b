"""experiments/discourse_levers.py: a discourse sense lever cross-validated under the one fold protocol, the
prior correction scored beside the same networks without it (measured, not adopted)."""

from __future__ import annotations

import pytest

from experiments.discourse_levers import per_file, run
from gnn.discourse.task import TASK
from gnn.discourse.train import PROFILES, SHIFTS, ParserConfig
from gnn.task import Resources
from ontology.formats.dialogue_json import load_dialogue_files
from ontology.formats.registry import SAMPLES

FILES = [SAMPLES / "molweni" / "DP" / "dev.json", SAMPLES / "stac" / "train.json"]


def test_a_lever_run_scores_each_fold_with_and_without_the_chosen_shift(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    config = ParserConfig(seed=3, **{**PROFILES["tiny"], "members": 1}, parent_sense=True, tune_sense_shift=True)
    examples = TASK.examples(load_dialogue_files(FILES), config)
    resources = Resources(tmp_path_factory.mktemp("cache"), device="cpu")
    summary = run(examples, config, resources, folds=2, seed=1)
    assert summary["items"] == len(examples) and len(summary["folds"]) == 2
    assert set(summary["labels"]) == {"", "unshifted"}
    for row in summary["folds"]:
        assert row["chosen"]["sense_shift"] in SHIFTS
        figures = row["figures"]
        # The links do not move with the shift: the same networks and the same parents.
        assert figures["link_f1"] == figures["unshifted_link_f1"]
        if row["chosen"]["sense_shift"] == 0.0:
            assert figures["link_rel_f1"] == figures["unshifted_link_rel_f1"]
        assert set(row["files"]) == set(row["unshifted_files"])
    # The recipe's config is not changed by the folds (each fold tunes its own copy).
    assert config.sense_shift == 0.0 and config.sense_share == []
    files = per_file(summary)
    assert set(files) <= {"dev.json", "train.json"} and files
    for figs in files.values():
        assert set(figs) == {"link_f1", "link_rel_f1"} and all("±" in v for v in figs.values())
