"""A tiny train -> parse -> evaluate run of the discourse parser on the shipped fixtures (CPU, no network)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from api.services import discourse
from api.settings import Settings
from gnn.discourse.train import PROFILES
from gnn.modelcard import read_card
from gnn.task import TrainReport
from ontology.errors import ApiError, LoaderError, NotFoundError
from ontology.formats.registry import SAMPLES
from ontology.progress import Advance

pytestmark = pytest.mark.model  # trains and runs the discourse parser

CORPORA = SAMPLES
MOLWENI = CORPORA / "molweni" / "DP" / "dev.json"
STAC = CORPORA / "stac" / "train.json"


class Recorder:
    """A reporter that keeps its log lines and every unit of progress: title, total, advances."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.units: list[tuple[str, int, list[int]]] = []

    def log(self, message: str) -> None:
        self.lines.append(message)

    def warn(self, message: str) -> None:
        self.lines.append(message)

    @contextmanager
    def progress(self, title: str, total: int) -> Iterator[Advance]:
        steps: list[int] = []
        self.units.append((title, total, steps))
        yield steps.append


@pytest.fixture(scope="module")
def training(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, TrainReport, Recorder]:
    root = tmp_path_factory.mktemp("discourse")
    settings = Settings(cache_dir=root / "cache", data_dir=root / "data")
    recorder = Recorder()
    result = discourse.train(settings, [MOLWENI, STAC], root / "model", profile="tiny", seed=1, reporter=recorder)
    return settings, result, recorder


@pytest.fixture(scope="module")
def trained(training: tuple[Settings, TrainReport, Recorder]) -> tuple[Settings, Path]:
    return training[0], training[1].model_dir


def test_training_reports_the_encoding_and_each_networks_epochs_to_the_reporter(
    training: tuple[Settings, TrainReport, Recorder],
) -> None:
    _settings, result, recorder = training
    units = {title: (total, sum(steps)) for title, total, steps in recorder.units}
    # The fresh cache: every text is encoded, as one unit of the encoder's own stage.
    assert [t for t in units if t.startswith("encoding with ")] and all(
        done == total for t, (total, done) in units.items() if t.startswith("encoding with ")
    )
    # One unit per network of the tiny profile's two, of its epochs, advanced once per epoch it trained.
    assert {t for t in units if t.startswith("discourse network")} == {"discourse network 1/2", "discourse network 2/2"}
    for member in (0, 1):
        epochs = [r["epoch"] for r in result.card.metrics["history"] if r["member"] == member]
        assert units[f"discourse network {member + 1}/2"] == (PROFILES["tiny"]["epochs"], len(epochs))
    # The trainer's line per epoch of each network goes to the reporter's log.
    history = result.card.metrics["history"]
    assert sum(line.startswith(("seed 1, epoch", "seed 2, epoch")) for line in recorder.lines) == len(history)


def test_train_writes_a_model_directory(trained: tuple[Settings, Path]) -> None:
    _settings, model_dir = trained
    card = read_card(model_dir, task="discourse")
    assert card.training_seconds is not None and card.git_commit
    assert set(card.data["files"]) == {"dev.json", "train.json"}
    for name in ("dev.json:held-out", "train.json:held-out"):
        m = card.metrics[name]
        assert 0 <= m["link_f1"] <= 100 and m["dialogues"] == card.data["files"][name.split(":")[0]]["test"]
    # Held-out dialogues are never training dialogues: the STAC fixture's five pilot01 games stay together.
    stac = card.data["files"]["train.json"]
    pilot = {0, 1, 2, 3, 4}
    sides = [set(stac["test_positions"]), set(stac["tune_positions"])]
    assert all(pilot <= s or not (pilot & s) for s in sides)
    # The embedding cache was filled.
    assert list((_settings.cache_dir / "embeddings").rglob("*.npz"))


@pytest.mark.parametrize(("src", "label"), [(MOLWENI, "QAP"), (STAC, "Question-answer_pair")])
def test_parse_then_evaluate(trained: tuple[Settings, Path], tmp_path: Path, src: Path, label: str) -> None:
    settings, model_dir = trained
    out = tmp_path / "pred.json"
    result = discourse.parse(settings, src, out, model_dir)
    raw, pred = json.loads(src.read_text()), json.loads(out.read_text())
    assert result.dialogues == len(raw) == len(pred)
    for r, p in zip(raw, pred, strict=True):
        assert {k: v for k, v in r.items() if k != "relations"} == {k: v for k, v in p.items() if k != "relations"}
        # Every EDU but the first gets a parent: an earlier EDU or, in STAC only (the tiny profile
        # looks ahead), the next one.
        children = {rel["y"] for rel in p["relations"]}
        assert set(range(1, len(r["edus"]))) <= children <= set(range(len(r["edus"])))
        ahead = label != "QAP"
        assert all(0 <= rel["x"] < rel["y"] or (ahead and rel["x"] == rel["y"] + 1) for rel in p["relations"])
        assert all(rel["x"] < len(r["edus"]) for rel in p["relations"])
    labels = {rel["type"] for d in pred for rel in d["relations"]}
    other = "Question-answer_pair" if label == "QAP" else "QAP"
    assert other not in labels, "labels are spelled as the input file spells them"
    # Scoring the predictions against themselves is perfect; against gold it is what evaluate says.
    self_score = discourse.evaluate(settings, out, model_dir)
    assert self_score.scores["link_f1"] == 100.0 and self_score.scores["link_rel_f1"] == 100.0
    # Per sense: every predicted relation counted once, each sense found as often as predicted.
    assert sum(c["gold"] for c in self_score.labels.values()) == result.relations
    assert all(c["predicted"] == c["gold"] == c["right"] and c["recall"] == 1.0 for c in self_score.labels.values())
    gold_score = discourse.evaluate(settings, src, model_dir)
    assert 0 <= gold_score.scores["link_rel_f1"] <= gold_score.scores["link_f1"] <= 100
    counts = gold_score.labels
    assert sum(c["predicted"] for c in counts.values()) == result.relations
    assert all(c["right"] <= min(c["gold"], c["predicted"]) for c in counts.values())


def test_errors(trained: tuple[Settings, Path], tmp_path: Path) -> None:
    settings, model_dir = trained
    with pytest.raises(NotFoundError, match="no such file"):
        discourse.parse(settings, tmp_path / "missing.json", tmp_path / "o.json", model_dir)
    with pytest.raises(NotFoundError, match="no such model directory"):
        discourse.evaluate(settings, MOLWENI, tmp_path / "nomodel")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "1", "edus": [{"text": "hi"}], "relations": []}]))
    with pytest.raises(LoaderError, match="speaker"):
        discourse.parse(settings, bad, tmp_path / "o.json", model_dir)
    assert not (tmp_path / "o.json").exists()


def test_shipped_model_and_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from api.cli.main import app

    model_dir = discourse.default_model()
    card = read_card(model_dir, task="discourse")
    assert sum(f.stat().st_size for f in model_dir.iterdir()) < 20 * 2**20
    assert {"dev.json:held-out", "train.json:held-out"} <= set(card.metrics)
    monkeypatch.setenv("ARGWEB_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "pred.json"
    runner = CliRunner()
    result = runner.invoke(app, ["parse", "discourse", "--in", str(MOLWENI), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert len(json.loads(out.read_text())) == len(json.loads(MOLWENI.read_text()))
    result = runner.invoke(app, ["evaluate", "discourse", "--data", str(out), "--json"])
    assert result.exit_code == 0, result.output
    scored = json.loads(result.stdout[result.stdout.index("{") :])
    assert scored["link_f1"] == 100.0
    # The same file written every other valid way scores the same.
    assert set(scored["variants"]) == {"keys shuffled", "integer ids", "string ids"}
    assert scored["variants_max_change"] == 0.0
    table = runner.invoke(app, ["evaluate", "discourse", "--data", str(MOLWENI)])
    assert table.exit_code == 0 and "written other valid ways" in table.output
    missing = runner.invoke(app, ["parse", "discourse", "--in", str(tmp_path / "nope.json"), "--out", str(out)])
    assert missing.exit_code == 2


def test_parse_unannotated_and_empty_dialogues(trained: tuple[Settings, Path], tmp_path: Path) -> None:
    """Raw dialogues (no ``relations`` field), a one-EDU and an EDU-less dialogue parse; order and fields kept."""
    settings, model_dir = trained
    first = json.loads(MOLWENI.read_text())[0]
    raw = [
        {"id": "raw", "edus": [{"text": e["text"], "speaker": e["speaker"]} for e in first["edus"]]},
        {"id": "empty", "edus": []},
        {"id": "one", "edus": [{"text": "anyone here?", "speaker": "a"}]},
        first,
    ]
    src, out = tmp_path / "raw.json", tmp_path / "pred.json"
    src.write_text(json.dumps(raw), encoding="utf-8")
    result = discourse.parse(settings, src, out, model_dir)
    pred = json.loads(out.read_text())
    assert result.dialogues == 4 and [d["id"] for d in pred] == ["raw", "empty", "one", first["id"]]
    assert pred[1]["relations"] == [] and pred[2]["relations"] == []
    n = len(first["edus"])
    for d in (pred[0], pred[3]):
        assert {rel["y"] for rel in d["relations"]} == set(range(1, n))
    # The unannotated copy of a dialogue is parsed exactly like the dialogue itself.
    assert pred[0]["relations"] == pred[3]["relations"]


def test_train_cli_reports_held_out_scores_and_records_the_encoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from api.cli.main import app
    from gnn.encoder import TextEncoder

    monkeypatch.setenv("ARGWEB_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "model"
    result = CliRunner().invoke(
        app,
        ["train", "discourse", "--data", str(MOLWENI), "--data", str(STAC), "--out", str(out), "--profile", "tiny"],
    )
    assert result.exit_code == 0, result.output
    card = read_card(out, task="discourse")
    for name in ("dev.json", "train.json"):
        held = card.metrics[f"{name}:held-out"]
        assert held["dialogues"] > 0 and "edus_per_second" in held and 0.0 <= held["link_f1"] <= 100.0  # percent
    # The encoder by name and fingerprint, as every model card records it (checked when loading).
    packaged = TextEncoder(None)
    assert (card.encoder, card.encoder_fingerprint) == (packaged.name, packaged.fingerprint())
    assert {r["member"] for r in card.metrics["history"]} == {0, 1}


def test_recipe_data_is_what_was_given_or_the_default_files(tmp_path: Path) -> None:
    settings = Settings(cache_dir=tmp_path / "cache", data_dir=tmp_path / "data", corpora=SAMPLES)
    given = [tmp_path / "a.json"]
    assert discourse.recipe_data(settings, "tiny", given) == given
    assert discourse.recipe_data(settings, "tiny", None) == [SAMPLES / rel for rel in discourse.DEFAULT_DATA]
    with pytest.raises(ApiError, match="unknown profile 'nope'"):
        discourse.recipe_data(settings, "nope", given)


def test_recipe_data_names_the_missing_default_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A corpora directory with only M-Arg: no Molweni or STAC file to fall back on.
    monkeypatch.setattr(discourse, "corpora_root", lambda settings: tmp_path)
    settings = Settings(cache_dir=tmp_path / "cache", data_dir=tmp_path / "data")
    with pytest.raises(NotFoundError, match="no Molweni/STAC files under"):
        discourse.recipe_data(settings, "tiny", [])
