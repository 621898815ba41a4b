"""Paraphrase highlighter end to end on the ContextDeP sample: train -> card -> evaluate -> predict TSV."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli.main import app
from api.services import paraphrase as service
from api.services import tasks
from api.settings import Settings
from gnn.modelcard import read_card
from gnn.paraphrase import NEVER, TASK, ParaphraseExample, pair_probability, pairs_from_file
from gnn.paraphrase_eval import NOT_PARAPHRASE, NOT_SURE, PARAPHRASE, PairPrediction
from gnn.task import TextPair
from ontology.errors import ApiError, LoaderError, ModelError
from tests.conftest import BAD, SAMPLES

pytestmark = pytest.mark.model  # trains and runs the paraphrase highlighter

SAMPLE = SAMPLES / "contextdep"
TRAIN, DEV = SAMPLE / "ANON_TRAIN_TOKEN-annotations.tsv", SAMPLE / "ANON_DEV_TOKEN-annotations.tsv"


def _examples(*paths: Path) -> list[ParaphraseExample]:
    return TASK.examples(tasks.read_records("contextdep", list(paths)), TASK.recipes.config("quick"))


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Settings]:
    root = tmp_path_factory.mktemp("paraphrase")
    settings = Settings(cache_dir=root / "cache", data_dir=root / "data")
    report = tasks.train(settings, "paraphrase", [TRAIN, DEV], root / "model", profile="quick", seed=3)
    assert report.model_dir == root / "model" and report.version.number == 3
    return root / "model", settings


def test_pairs_from_file() -> None:
    pairs = pairs_from_file(TRAIN)
    assert [p.qid for p in pairs] == ["CNN-177596-7", "CNN-350097-7", "NPR-23442-3"]  # file order
    tie = pairs[0]
    assert (tie.votes, tie.annotators) == (10, 20) and tie.label  # half the votes counts
    assert len(tie.guest) == len(tie.guest_hl or []) and len(tie.host) == len(tie.host_hl or [])
    # The task's examples are the same pairs, with the split of their file.
    assert [(e.pair, e.split) for e in _examples(TRAIN)] == [(p, "train") for p in pairs]


def test_split_uses_dev_only_for_tuning_and_held_out() -> None:
    parts = TASK.split(_examples(TRAIN, DEV))
    assert len(parts["train"]) == 3 and len(parts["tune"]) + len(parts["heldout"]) == 7
    assert not {p.interview for p in parts["tune"]} & {p.interview for p in parts["heldout"]}
    with pytest.raises(LoaderError, match="no training pairs"):
        TASK.split(_examples(DEV))


def test_card_records_split_and_metrics(trained: tuple[Path, Settings]) -> None:
    model, _ = trained
    card = read_card(model, task="paraphrase")
    assert card.data["pairs"]["train"] == 3
    assert set(card.metrics) >= {"tune", "best_epoch", "history", "bytes"}
    assert card.metrics["bytes"] < 1_000_000
    assert card.hyperparameters["profile"] == "quick" and card.hyperparameters["seed"] == 3
    # The decision rule was chosen by inner folds over the train and tune pairs: on this sample's few
    # pairs no cut rests on enough of them, so neither call is made and every pair is "not sure".
    rule = card.metrics["decision"]
    tune = TASK.split(_examples(TRAIN, DEV))["tune"]
    assert rule["goal"] == pytest.approx(2 / 3, abs=1e-4) and rule["pairs"] == 3 + len(tune)
    assert (rule["cut"], rule["low"]) == (card.hyperparameters["cut"], card.hyperparameters["low"]) == (NEVER, 0.0)


def test_evaluate_and_predict_round_trip(trained: tuple[Path, Settings], tmp_path: Path) -> None:
    model, settings = trained
    report = tasks.evaluate(settings, "paraphrase", model, [DEV])
    result = report.details["metrics"]
    assert report.model == "contextdep-highlighter 3"
    assert result["pairs"] == 7 and 0.0 <= result["f1"] <= 1.0 and report.scores["f1"] == result["f1"]
    # Predicted against gold pairs per label, from the same predictions as the figures.
    labels = report.labels
    assert set(labels) == {"paraphrase", "not_paraphrase"}
    assert labels["paraphrase"].gold == result["positives"]
    assert labels["paraphrase"].predicted == result["predicted_positives"]
    assert labels["paraphrase"].right == result["true_positives"]
    assert sum(c.gold for c in labels.values()) == sum(c.predicted for c in labels.values()) == 7
    assert sum(c.right for c in labels.values()) == round(result["accuracy"] * 7)
    assert result["not_sure"] == 7 - result["predicted_positives"] and result["not_sure_share"] == 1.0
    out = tmp_path / "pred.tsv"
    summary = service.predict_file(settings, DEV, out, model)
    hyper = read_card(model, task="paraphrase").hyperparameters
    cut, pair_model = hyper["cut"], hyper["pair_model"]
    assert summary.pairs == 7 and summary.target == out and (summary.paraphrases, summary.not_sure) == (0, 7)
    with out.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert list(rows[0]) == ["QID", "paraphrase", "score", "guest_probs", "host_probs"]
    pairs = {p.qid: p for p in pairs_from_file(DEV)}
    assert [r["QID"] for r in rows] == list(pairs)
    for row in rows:
        guest, host = json.loads(row["guest_probs"]), json.loads(row["host_probs"])
        pair = pairs[row["QID"]]
        assert len(guest) == len(pair.guest) and len(host) == len(pair.host)
        assert all(0.0 <= p <= 1.0 for p in guest + host)
        # The score is the pair model's probability (the weaker side's maximum without one); the decision is
        # the model's cut on it (a "not sure" pair is written as 0, its probabilities kept).
        read = PairPrediction(row["QID"], guest, host)
        score = pair_probability(pair_model, read) if pair_model else read.strongest
        assert float(row["score"]) == pytest.approx(score, abs=1e-3)
        assert row["paraphrase"] == str(int(score >= cut)) == "0"
    # The same pairs through the task's predictions: the three-way answer with its score and threshold.
    answers = tasks.predict(settings, "paraphrase", [TextPair("the rain stopped", "it stopped raining")], model)
    assert [(a.label, a.threshold) for a in answers] == [(NOT_SURE, cut)]
    assert answers[0].probabilities["paraphrase"] == answers[0].score


def test_cli_predict_and_evaluate(
    trained: tuple[Path, Settings], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, _ = trained
    monkeypatch.setenv("ARGWEB_CACHE_DIR", str(tmp_path / "c"))
    runner = CliRunner()
    out = tmp_path / "p.tsv"
    result = runner.invoke(app, ["predict", "contextdep", "--in", str(DEV), "--out", str(out), "--model", str(model)])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").startswith("QID\tparaphrase\tscore\tguest_probs\thost_probs\n")
    result = runner.invoke(app, ["evaluate", "paraphrase", "--model", str(model), "--data", str(DEV), "--json"])
    assert result.exit_code == 0, result.output
    scored = json.loads(result.stdout)
    assert scored["pairs"] == 7 and scored["model"] == str(model) and scored["data"] == str(DEV)
    # The table shows the predicted against gold counts beside the scores.
    result = runner.invoke(
        app, ["evaluate", "paraphrase", "--model", str(model), "--data", str(DEV)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert "predicted against gold" in result.output
    rows = [re.findall(r"[\w.]+", line) for line in result.output.splitlines()]
    for label, c in scored["labels"].items():
        assert [label, str(c["gold"]), str(c["predicted"])] in [row[:3] for row in rows]


def test_bad_input_and_missing_model(tmp_path: Path) -> None:
    with pytest.raises(LoaderError, match="UTF-8"):
        pairs_from_file(BAD / "cdep_UTF16_TOKEN-annotations.tsv")
    with pytest.raises(LoaderError, match="no such file"):
        pairs_from_file(tmp_path / "X_TOKEN-annotations.tsv")
    # A directory the caller names that holds no model is the caller's mistake (exit 2).
    with pytest.raises(ApiError, match="not a model directory"):
        tasks.evaluate(Settings(cache_dir=tmp_path / "cache"), "paraphrase", tmp_path, [DEV])
    result = CliRunner().invoke(
        app, ["predict", "contextdep", "--in", str(DEV), "--out", str(tmp_path / "o.tsv"), "--model", str(tmp_path)]
    )
    assert result.exit_code == 2 and not (tmp_path / "o.tsv").exists()


def test_predict_unannotated_pairs_under_any_name(trained: tuple[Path, Settings], tmp_path: Path) -> None:
    """A file of pairs with only QID and the two token columns predicts like the annotated file."""
    model, settings = trained
    with DEV.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    raw = tmp_path / "my pairs.tsv"
    with raw.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t")
        writer.writerow(["QID", "Host Tokens", "Guest Tokens"])
        writer.writerows([r["QID"], r["Host Tokens"], r["Guest Tokens"]] for r in rows)
    annotated, plain = tmp_path / "a.tsv", tmp_path / "b.tsv"
    service.predict_file(settings, DEV, annotated, model)
    summary = service.predict_file(settings, raw, plain, model)
    assert summary.pairs == len(rows)
    assert plain.read_text(encoding="utf-8") == annotated.read_text(encoding="utf-8")
    raw.write_text("QID\tGuest Tokens\tHost Tokens\nQ-1\t['a']\t['b']\nQ-1\t['c']\t['d']\n", encoding="utf-8")
    with pytest.raises(LoaderError, match=r"my pairs\.tsv: line 3 \(QID Q-1\): QID also on line 2"):
        service.predict_file(settings, raw, tmp_path / "c.tsv", model)
    raw.write_text("QID\tGuest Tokens\nQ-1\t['a']\n", encoding="utf-8")
    with pytest.raises(LoaderError, match="host_tokens"):
        service.predict_file(settings, raw, tmp_path / "c.tsv", model)
    assert not (tmp_path / "c.tsv").exists()


def test_a_config_naming_the_mlp_head_loads_and_one_naming_the_removed_gru_head_is_refused(
    trained: tuple[Path, Settings], tmp_path: Path
) -> None:
    from gnn.paraphrase import CONFIG, load_highlighter

    model, settings = trained
    cache = settings.embeddings_dir / "contextdep-pairs"
    pairs = pairs_from_file(DEV)
    expected = load_highlighter(model, cache_dir=cache).predict(pairs)
    # Configurations saved while the GRU head existed name their head ("head": "mlp" or "gru").
    copy = tmp_path / "model"
    shutil.copytree(model, copy)
    raw = json.loads((copy / CONFIG).read_text(encoding="utf-8"))
    assert "head" not in raw
    (copy / CONFIG).write_text(json.dumps(raw | {"head": "mlp"}), encoding="utf-8")
    loaded = load_highlighter(copy, cache_dir=cache).predict(pairs)
    assert [(p.paraphrase, p.score, p.guest_probs, p.host_probs) for p in loaded] == [
        (p.paraphrase, p.score, p.guest_probs, p.host_probs) for p in expected
    ]
    (copy / CONFIG).write_text(json.dumps(raw | {"head": "gru"}), encoding="utf-8")
    with pytest.raises(ModelError, match="head 'gru' was removed"):
        load_highlighter(copy, cache_dir=cache)


def test_the_shipped_model_records_its_encoder_and_refuses_another(tmp_path: Path) -> None:
    from gnn.encoder import TextEncoder
    from gnn.registry import shipped_model

    card = read_card(shipped_model("paraphrase"), task="paraphrase")
    assert (card.encoder, card.encoder_fingerprint) == ("all-MiniLM-L6-v2", TextEncoder(None).fingerprint())
    # The same model, its card claiming another encoder: refused before anything is predicted.
    copy = tmp_path / "model"
    shutil.copytree(shipped_model("paraphrase"), copy)
    raw = json.loads((copy / "model_card.json").read_text(encoding="utf-8"))
    (copy / "model_card.json").write_text(json.dumps(raw | {"encoder_fingerprint": "0" * 16}), encoding="utf-8")
    with pytest.raises(ModelError, match="fingerprint 0000000000000000") as refused:
        service.predict_file(Settings(cache_dir=tmp_path / "cache"), DEV, tmp_path / "p.tsv", copy)
    assert f"fingerprint {card.encoder_fingerprint}" in str(refused.value)  # both encoders named
    assert not (tmp_path / "p.tsv").exists()


def test_the_shipped_model_answers_three_ways_by_its_cuts(tmp_path: Path) -> None:
    from gnn.registry import shipped_model

    card = read_card(shipped_model("paraphrase"), task="paraphrase")
    hyper = card.hyperparameters
    cut, low, pair_model = hyper["cut"], hyper["low"], hyper["pair_model"]
    assert card.version == "3" and 0.5 < cut < 1.0 and 0.0 <= low <= cut and pair_model
    assert card.metrics["decision"]["precision"] >= 2 / 3 - 1e-4  # on the inner out-of-fold scores
    settings = Settings(cache_dir=tmp_path / "cache")
    pairs = pairs_from_file(TRAIN) + pairs_from_file(DEV)
    texts = [TextPair(" ".join(p.guest), " ".join(p.host)) for p in pairs]
    answers = tasks.predict(settings, "paraphrase", texts)
    for a in answers:
        expected = PARAPHRASE if a.score >= cut else NOT_PARAPHRASE if a.score < low else NOT_SURE
        assert a.label == expected and a.threshold == cut
    assert {a.label for a in answers} >= {PARAPHRASE, NOT_SURE}


def test_cli_answers_text_pairs_three_ways_with_score_and_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gnn.registry import shipped_model

    monkeypatch.setenv("ARGWEB_CACHE_DIR", str(tmp_path / "c"))
    pairs = pairs_from_file(TRAIN) + pairs_from_file(DEV)
    source = tmp_path / "pairs.jsonl"
    source.write_text(
        "".join(json.dumps({"source": " ".join(p.guest), "target": " ".join(p.host)}) + "\n" for p in pairs),
        encoding="utf-8",
    )
    out = tmp_path / "answers.jsonl"
    result = CliRunner().invoke(app, ["predict", "paraphrase", "--in", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    cut = read_card(shipped_model("paraphrase"), task="paraphrase").hyperparameters["cut"]
    assert len(rows) == len(pairs) and {r["label"] for r in rows} <= {PARAPHRASE, NOT_PARAPHRASE, NOT_SURE}
    for r in rows:
        assert r["threshold"] == round(cut, 4) and r["probabilities"]["paraphrase"] == r["score"]
        assert (r["label"] == PARAPHRASE) == (r["score"] >= r["threshold"])
    # Text pairs are not graph units: nothing to write.
    result = CliRunner().invoke(app, ["predict", "paraphrase", "--in", str(source), "--write"])
    assert result.exit_code == 2
