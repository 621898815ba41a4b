"""experiments/discourse_cues.py: the lexical cues and the reply-to decoding cross-validated under the one fold
protocol, the reply-to margin scored beside the same networks without it."""

from __future__ import annotations

import pytest

from experiments.discourse_cues import per_file, run
from gnn.discourse.task import TASK
from gnn.discourse.train import MARGINS, PROFILES, ParserConfig
from gnn.task import Resources
from ontology.formats.dialogue_json import load_dialogue_files
from ontology.formats.registry import SAMPLES

FILES = [SAMPLES / "molweni" / "DP" / "dev.json", SAMPLES / "stac" / "train.json"]


def test_a_lever_run_scores_each_fold_with_and_without_the_chosen_margin(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    config = ParserConfig(seed=3, **{**PROFILES["tiny"], "members": 1}, cues=256, cue_dim=4, tune_reply=True)
    examples = TASK.examples(load_dialogue_files(FILES), config)
    resources = Resources(tmp_path_factory.mktemp("cache"), device="cpu")
    summary = run(examples, config, resources, folds=2, seed=1)
    assert summary["items"] == len(examples) and len(summary["folds"]) == 2
    assert set(summary["labels"]) == {"", "plain"}
    for row in summary["folds"]:
        margins = row["chosen"]["reply_margin"]
        assert set(margins) == {"molweni", "stac"} and set(margins.values()) <= set(MARGINS)
        figures = row["figures"]
        if not any(margins.values()):
            # No margin chosen: the same networks decode the same parents either way.
            assert figures["link_f1"] == figures["plain_link_f1"]
        assert set(row["files"]) == set(row["plain_files"])
    # The recipe's config is not changed by the folds (each fold tunes its own copy).
    assert config.reply_margin == {"molweni": 0.0, "stac": 0.0}
    assert config.thresholds == {"molweni": 1.01, "stac": 1.01}
    files = per_file(summary)
    assert set(files) <= {"dev.json", "train.json"} and files
    for figs in files.values():
        assert set(figs) == {"link_f1", "link_rel_f1", "folds"} and "±" in figs["link_f1"]
