"""The task contract carries: every task on it trains, evaluates, cross-validates and predicts with
typed reports; a task defined here appears in the command line with no other edit; the pair task's
cross-encoder recipe fine-tunes a tiny local encoder for one step.

The task defined here is the "Add a task" of docs/development.md; the cross-encoder is its "Add a
recipe".
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from api.services import tasks as service
from api.settings import Settings
from gnn.components import TASK as COMPONENTS
from gnn.discourse.train import ParserConfig
from gnn.encoder import TextEncoder
from gnn.modelcard import ModelCard
from gnn.pairs import LABELS, PairConfig, PairExample, examples_from_maps
from gnn.pairs import TASK as PAIRS
from gnn.paraphrase import TASK as PARAPHRASE
from gnn.relations.argmap import maps_from_records
from gnn.relations.task import RelationsConfig
from gnn.task import (
    CardVersion,
    CVReport,
    EvalReport,
    Fitted,
    PredictedRelation,
    Recipes,
    Resources,
    Task,
    TextPair,
    TrainReport,
    contract_tasks,
    finish_card,
    get_task,
    register,
    unregister,
)
from gnn.trainer import Schedule
from ontology.errors import ApiError
from ontology.formats.registry import SAMPLES
from ontology.records import CorpusBundle
from tests.api.test_own_encoder import _tiny_bert

pytestmark = pytest.mark.model  # the pair task reads texts with the packaged encoder

AIF_DIR = SAMPLES / "dialam-2024" / "my_train"
TEST_TASK = "majority-test"


# -- a task defined here: the majority label of its training pairs ---------------------------------


@dataclass(frozen=True)
class MajorityConfig:
    """The one recipe: how many ``none`` pairs to sample per relation, and the seed."""

    none_share: float = 1.0
    seed: int = 0


@dataclass(frozen=True)
class Majority:
    """The model: the share of each label among the training pairs."""

    shares: dict[str, float]


class MajorityTask(Task[MajorityConfig, PairExample, Majority]):
    """Answers every pair with the commonest label of its training pairs."""

    name = TEST_TASK
    model_name = "majority"
    version = 1
    reads = "aif"
    default_data = ("dialam-2024", "my_train")
    recipes = Recipes({"one": MajorityConfig()}, "one", lambda c: Schedule(epochs=1, lr=0.0, seed=c.seed))

    def examples(self, records: CorpusBundle, config: MajorityConfig) -> list[PairExample]:
        return examples_from_maps(maps_from_records(records.nodes, records.edges), config.none_share, config.seed)

    def group(self, example: PairExample) -> str:
        return example.group

    def gold(self, example: PairExample) -> str:
        return example.label

    def inputs(self, example: PairExample) -> TextPair:
        return TextPair(example.source, example.target)

    def fit(
        self, train: Sequence[PairExample], tune: Sequence[PairExample], config: MajorityConfig, resources: Resources
    ) -> Fitted[Majority]:
        counts = Counter(e.label for e in train)
        return Fitted(Majority({k: v / len(train) for k, v in counts.items()}), {"labels": len(counts)})

    def train(
        self, examples: Sequence[PairExample], out: Path, config: MajorityConfig, profile: str, resources: Resources
    ) -> TrainReport:
        fitted = self.fit(examples, [], config, resources)
        out.mkdir(parents=True, exist_ok=True)
        (out / "shares.json").write_text(json.dumps(fitted.model.shares), encoding="utf-8")
        card = ModelCard(self.name, self.model_name, str(self.version), ["shares.json"])
        card = finish_card(out, card, config, profile, [], 0.0, {"labels": len(fitted.model.shares)}, 1)
        return TrainReport(self.name, out, card, CardVersion.of(card), f"{self.name} -> {out}")

    def load(self, model_dir: Path, *, encoder: TextEncoder | None, device: str | None) -> Majority:
        return Majority(json.loads((model_dir / "shares.json").read_text(encoding="utf-8")))

    def predict(self, loaded: Majority, records: Sequence[TextPair]) -> list[PredictedRelation]:
        label = max(loaded.shares, key=lambda k: (loaded.shares[k], k))
        return [PredictedRelation(r.source, r.target, label, loaded.shares[label], loaded.shares) for r in records]


@pytest.fixture
def majority() -> Iterator[MajorityTask]:
    """The task registered for the test (and gone afterwards)."""
    task = MajorityTask()
    register(TEST_TASK, task)
    try:
        yield task
    finally:
        unregister(TEST_TASK)


# -- the contract, for every task on it --------------------------------------------------------------

# One step of each shipped task's recipe on the sample maps (a registered task not named here runs
# its default profile).
TINY: dict[str, Any] = {
    "pairs": PairConfig(hidden=8, epochs=1, seed=3),
    "paraphrase": replace(PARAPHRASE.recipes.config("quick", seed=3), epochs=1),
    "relations": RelationsConfig("quick", seed=1, epochs=1),
    "components": replace(COMPONENTS.recipes.config("quick", seed=3), epochs=1),
    "discourse": ParserConfig(epochs=1, patience=1, dim=16, word_dim=8, vocab_size=100, seed=3),
}
# The sample data of each format a task reads.
SAMPLE_DATA: dict[str, list[Path]] = {
    "aif": [AIF_DIR],
    "contextdep": [SAMPLES / "contextdep"],
    "sciarg": [SAMPLES / "sciarg" / "compiled_corpus"],
    "dialogues": [SAMPLES / "molweni" / "DP" / "dev.json", SAMPLES / "stac" / "train.json"],
}


@pytest.fixture(scope="module")
def records() -> CorpusBundle:
    return service.read_records("aif", [AIF_DIR])


@pytest.mark.parametrize("name", [*contract_tasks(), TEST_TASK])
def test_every_task_trains_evaluates_cross_validates_and_predicts_with_typed_reports(
    name: str, majority: MajorityTask, tmp_path: Path
) -> None:
    task = get_task(name)
    config = TINY.get(name) or task.recipes.config(task.recipes.default)
    data = SAMPLE_DATA[task.reads]
    resources = Resources(tmp_path / "cache", data_files=tuple(data))
    found = task.examples(service.read_records(task.reads, data), config)
    # The ContextDeP sample holds ten pairs.
    assert len(found) >= 10 and len({task.group(e) for e in found}) >= 2
    report = task.train(found, tmp_path / "model", config, "tiny", resources)
    assert isinstance(report, TrainReport) and report.task == name and report.model_dir == tmp_path / "model"
    assert report.version == CardVersion.of(report.card) and report.version.number == task.version
    assert (tmp_path / "model" / "model_card.json").is_file() and report.card.task == name
    # A newly trained model's runs carry its integer version (only renumbered shipped cards keep another).
    written = json.loads((tmp_path / "model" / "model_card.json").read_text(encoding="utf-8"))
    assert "runs_version" not in written and report.card.written_version == report.card.version
    encoder = resources.encoder(report.card.encoder) if report.card.encoder_fingerprint else None
    loaded = task.load(tmp_path / "model", encoder=encoder, device="cpu")
    held = found[:20]
    evaluated = task.evaluate(loaded, held, resources)
    assert isinstance(evaluated, EvalReport) and evaluated.scores
    assert sum(t.gold for t in evaluated.labels.values()) == len(held)
    assert sum(t.predicted for t in evaluated.labels.values()) == len(held)
    crossed = task.cross_validate(found, config, resources, folds=2, seed=0, profile="tiny")
    assert isinstance(crossed, CVReport) and len(crossed.folds) == 2 and crossed.items == len(found)
    assert set(crossed.figures) == set(evaluated.scores)
    assert sum(t.gold for t in crossed.labels.values()) == len(found)
    json.dumps(crossed.document()), json.dumps(evaluated.document())  # both are JSON documents
    asked = [task.inputs(e) for e in held]
    predicted = task.predict(loaded, asked)
    assert [(p.source, p.target) for p in predicted] == [(a.source, a.target) for a in asked]
    for p in predicted:
        assert isinstance(p, PredictedRelation) and 0.0 <= p.score <= 1.0
        # The label has its probability, unless the task abstains by a threshold (the paraphrase task's
        # "not sure" below its cut).
        assert p.label in p.probabilities or (p.threshold is not None and p.score < p.threshold)


def test_unknown_task_or_profile_is_the_callers_mistake() -> None:
    with pytest.raises(ApiError, match="unknown model task 'nosuch'"):
        get_task("nosuch")
    with pytest.raises(ApiError, match="unknown profile 'huge'"):
        PAIRS.recipes.config("huge")
    result = CliRunner().invoke(_app(), ["model", "train", "pairs", "--profile", "huge", "--data", str(AIF_DIR)])
    assert result.exit_code == 2 and "unknown profile 'huge'" in result.output


def _app() -> Any:
    from api.cli.main import build_app

    return build_app()[0]


def test_a_task_defined_here_appears_in_the_command_line(
    majority: MajorityTask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARGWEB_CACHE_DIR", str(tmp_path / "cache"))
    app = _app()  # built after the registration: nothing else is edited
    runner = CliRunner()

    def run(*args: str) -> Any:
        result = runner.invoke(app, list(args))
        assert result.exit_code == 0, result.output
        text = result.stdout
        return json.loads(text[min(i for i in (text.find("{"), text.find("[")) if i >= 0) :])

    trained = runner.invoke(app, ["model", "train", TEST_TASK, "--data", str(AIF_DIR)])
    assert trained.exit_code == 0, trained.output
    assert (tmp_path / "cache" / "models" / TEST_TASK / "shares.json").is_file()
    listed = run("model", "list", "--json")
    assert [(m["task"], m["model"], m["version"]) for m in listed if m["task"] == TEST_TASK] == [
        (TEST_TASK, "majority", "1")
    ]
    scored = run("model", "evaluate", TEST_TASK, "--model", TEST_TASK, "--data", str(AIF_DIR), "--json")
    assert scored["model"] == "majority 1" and 0.0 < scored["scores"]["accuracy"] < 1.0
    crossed = run("model", "evaluate", TEST_TASK, "--cv", "2", "--data", str(AIF_DIR), "--json")
    assert len(crossed["folds"]) == 2 and crossed["profile"] == "one"
    asked = tmp_path / "pairs.jsonl"
    asked.write_text('{"source": "Taxes must rise.", "target": "No, they must not."}\n', encoding="utf-8")
    (answer,) = run("predict", TEST_TASK, "--in", str(asked), "--model", TEST_TASK, "--json")
    assert answer["label"] == max(scored["labels"], key=lambda k: scored["labels"][k]["gold"])


def test_a_task_off_the_registry_has_no_commands(tmp_path: Path) -> None:
    result = CliRunner().invoke(_app(), ["model", "train", TEST_TASK, "--data", str(AIF_DIR)])
    assert result.exit_code == 2 and "No such command" in result.output


# -- the pair task -------------------------------------------------------------------------------------

SHIPPED_PREDICTIONS = Path(__file__).resolve().parents[1] / "data" / "pairs" / "shipped_predictions.jsonl"


def test_the_shipped_pair_model_predicts_what_it_did_before_the_port() -> None:
    # Written by the pair service before it became wiring of the task contract.
    rows = [json.loads(line) for line in SHIPPED_PREDICTIONS.read_text(encoding="utf-8").splitlines()]
    found = service.predict(Settings(), "pairs", [TextPair(r["source"], r["target"]) for r in rows])
    assert [p.label for p in found] == [r["label"] for r in rows]
    for p, r in zip(found, rows, strict=True):
        assert abs(p.score - r["score"]) < 1e-5
        assert all(abs(p.probabilities[k] - v) < 1e-5 for k, v in r["probabilities"].items())


def test_the_cross_encoder_recipe_fine_tunes_a_local_encoder_for_one_step(
    records: CorpusBundle, tmp_path: Path
) -> None:
    from gnn.pairs_cross import CrossConfig

    encoder = _tiny_bert(tmp_path / "tiny-bert", seed=0)
    config = replace(PAIRS.recipes.config("cross", seed=5), epochs=1, max_steps=1, batch=4, max_length=32)
    assert isinstance(config, CrossConfig) and PAIRS.recipes.schedule(config).autocast
    resources = Resources(tmp_path / "cache", encoder_dir=encoder, data_files=(AIF_DIR,))
    found = PAIRS.examples(records, config)
    report = PAIRS.train(found, tmp_path / "cross", config, "cross", resources)
    assert report.card.model == "pair-cross-encoder" and report.card.encoder == encoder.name
    assert report.card.hyperparameters["max_steps"] == 1 and len(report.card.metrics["history"]) == 1
    # The model directory runs without the encoder it started from.
    (tmp_path / "tiny-bert" / "config.json").unlink()
    service.forget()
    pairs = [TextPair("Taxes must rise.", "No, they must not."), TextPair("Prices rose.", "Prices went up.")]
    answered = service.predict(Settings(), "pairs", pairs, model=tmp_path / "cross")
    again = PAIRS.load(tmp_path / "cross", encoder=None, device="cpu")
    assert [p.label for p in answered] == [p.label for p in PAIRS.predict(again, pairs)]
    probs = np.array([[p.probabilities[k] for k in LABELS] for p in answered])
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    service.forget()


def test_predict_pairs_reads_a_file_and_writes_the_same_answers(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in SHIPPED_PREDICTIONS.read_text(encoding="utf-8").splitlines()]
    asked = tmp_path / "asked.jsonl"
    asked.write_text("".join(json.dumps({"source": r["source"], "target": r["target"]}) + "\n" for r in rows))
    out = tmp_path / "answers.jsonl"
    result = CliRunner().invoke(_app(), ["predict", "pairs", "--in", str(asked), "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(w["source"], w["target"], w["label"]) for w in written] == [
        (r["source"], r["target"], r["label"]) for r in rows
    ]
    assert all(abs(w["score"] - r["score"]) < 1e-4 for w, r in zip(written, rows, strict=True))
    asked.write_text('{"source": "only one side"}\n')
    refused = CliRunner().invoke(_app(), ["predict", "pairs", "--in", str(asked), "--out", str(tmp_path / "no")])
    assert refused.exit_code == 2 and "asked.jsonl:1" in refused.output and not (tmp_path / "no").exists()


def test_a_notebook_relates_texts_through_the_registry(tmp_path: Path) -> None:
    from api.notebook import Argweb

    rows = [json.loads(line) for line in SHIPPED_PREDICTIONS.read_text(encoding="utf-8").splitlines()][:3]
    found = Argweb().relate("pairs", [(r["source"], r["target"]) for r in rows])
    assert [p.label for p in found] == [r["label"] for r in rows]
    with pytest.raises(ApiError, match="unknown model task 'sentiment'"):
        Argweb().relate("sentiment", [("a", "b")])


def _returns_untyped(function: Any) -> bool:
    """Whether ``function`` is annotated to return ``Any``, a bare ``dict`` or a ``dict`` of ``Any`` (or nothing)."""
    import inspect

    returned = inspect.signature(function).return_annotation
    text = returned if isinstance(returned, str) else getattr(returned, "__name__", str(returned))
    return returned is inspect.Signature.empty or text in ("Any", "dict") or text.replace(" ", "") == "dict[str,Any]"


def test_the_task_layer_returns_typed_values() -> None:
    import inspect

    from api.services import pairs as pair_service

    modules = (service, pair_service)
    public = [
        f
        for m in modules
        for name, f in vars(m).items()
        if inspect.isfunction(f) and f.__module__ == m.__name__ and not name.startswith("_")
    ]
    assert len(public) >= 10
    assert [f.__qualname__ for f in public if _returns_untyped(f)] == []
    contract = ("train", "evaluate", "cross_validate", "load", "predict", "examples", "fit")
    for name in contract_tasks():
        task = get_task(name)
        untyped = [m for m in contract if _returns_untyped(getattr(type(task), m))]
        assert untyped == [], name
