"""`argweb evaluate discourse|paraphrase --cv K`: grouped folds, each item scored once by a model that never saw it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from api.cli.main import app
from gnn.discourse.files import read_dialogues
from gnn.discourse.task import dialogue_groups
from gnn.paraphrase import pairs_from_file
from ontology.formats.registry import SAMPLES

pytestmark = pytest.mark.model  # cross-validates real models

MOLWENI = SAMPLES / "molweni" / "DP" / "dev.json"
STAC = SAMPLES / "stac" / "train.json"
CONTEXTDEP = sorted((SAMPLES / "contextdep").glob("*_TOKEN-annotations.tsv"))


def _run(args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv("ARGWEB_CACHE_DIR", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    # Strict JSON: NaN or Infinity in the output fails the test.
    return json.loads(result.stdout[result.stdout.index("{") :], parse_constant=_no_constant)


def _no_constant(name: str) -> Any:
    raise AssertionError(f"{name} in the JSON output")


def test_discourse_cross_validation_scores_each_edu_once_by_a_model_that_did_not_train_on_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["evaluate", "discourse", "--cv", "2", "--profile", "tiny", "--data", str(MOLWENI), "--data", str(STAC)]
    out = _run(args, tmp_path, monkeypatch)
    assert out["profile"] == "tiny" and len(out["folds"]) == 2
    files = {path.name: read_dialogues(path)[0] for path in (MOLWENI, STAC)}
    edus = sum(len(d) for ds in files.values() for d in ds)
    assert out["items"] == edus
    assert out["groups"] == sum(len(set(dialogue_groups(ds))) for ds in files.values())
    f1 = out["figures"]["link_rel_f1"]
    assert len(f1["folds"]) == 2 and all(0 <= v <= 100 for v in f1["folds"]) and f1["std"] >= 0
    # Pooled over the held-out folds, every EDU's gold attachment is counted once.
    assert sum(c["gold"] for c in out["labels"].values()) == edus
    assert sum(fold["test"] for fold in out["folds"]) == edus
    for fold in out["folds"]:
        assert fold["train"] + fold["tune"] + fold["test"] == edus
        # Per file: the held-out dialogues' scores.
        assert set(fold["files"]) <= set(files) and all(0 <= s["link_f1"] <= 100 for s in fold["files"].values())


def test_discourse_cross_validation_table_names_the_protocol(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGWEB_CACHE_DIR", str(tmp_path / "cache"))
    args = ["evaluate", "discourse", "--cv", "2", "--profile", "tiny", "--members", "1", "--data", str(STAC)]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "link_rel_f1" in result.output and "predicted against gold" in result.output
    assert "grouped by chat session" in result.output


def test_paraphrase_cross_validation_predicts_each_pair_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["evaluate", "paraphrase", "--cv", "2", "--profile", "quick", "--seed", "3"]
    for path in CONTEXTDEP:
        args += ["--data", str(path)]
    out = _run(args, tmp_path, monkeypatch)
    pairs = [p for path in CONTEXTDEP for p in pairs_from_file(path)]
    assert out["items"] == len(pairs) and out["groups"] == len({p.interview for p in pairs})
    assert sum(fold["test"] for fold in out["folds"]) == len(pairs)
    assert sum(c["gold"] for c in out["labels"].values()) == len(pairs)
    assert sum(c["predicted"] for c in out["labels"].values()) == len(pairs)
    assert len(out["figures"]["f1"]["folds"]) == 2
    # How well the pair score ranks paraphrases, beside the scores at the chosen threshold.
    assert len(out["figures"]["pair_auc"]["folds"]) == 2
    # A fold of one class has no AUC: null in the fold's row and left out of the mean, not NaN.
    aucs = [fold["figures"]["pair_auc"] for fold in out["folds"]]
    assert aucs == out["figures"]["pair_auc"]["folds"] and all(a is None or 0.0 <= a <= 1.0 for a in aucs)
    assert "grouped by interview" in out["protocol"] and out["profile"] == "quick"
    # Each fold chose its epoch and offset inside its training folds, and its decision rule by inner folds there.
    assert all({"epoch", "bias", "cut", "low"} <= set(fold["chosen"]) and fold["tune"] > 0 for fold in out["folds"])
    assert all(fold["chosen"]["low"] <= fold["chosen"]["cut"] for fold in out["folds"])
    assert len(out["figures"]["not_sure_share"]["folds"]) == 2


def test_one_file_to_score_or_folds_to_train(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGWEB_CACHE_DIR", str(tmp_path / "cache"))
    for args in (["evaluate", "discourse"], ["evaluate", "paraphrase"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2 and "--cv" in result.output
