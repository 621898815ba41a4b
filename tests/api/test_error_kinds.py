"""One error class per kind, and one outcome per class: an unknown task or training profile is the
caller's mistake (exit code 2, 400) whichever task was asked; no model installed and every slot
taken are 503 / exit code 1, each with a problem type of its own."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli.main import app
from api.errors import EXIT_FAILURE, EXIT_USAGE, outcome
from api.problems import kind_of
from api.services import predict as predict_service
from api.services.predict import Limits, PredictionRequest, running_slot
from ontology.errors import (
    BusyError,
    ClientError,
    ModelNotInstalledError,
    UnknownProfileError,
    UnknownTaskError,
)
from ontology.formats.registry import SAMPLES

runner = CliRunner()


@pytest.mark.parametrize("task", ["discourse", "relations", "paraphrase", "components", "pairs"])
def test_an_unknown_profile_is_the_callers_mistake_for_every_task(task: str, tmp_path: Path) -> None:
    # Every task refuses the profile before it reads a corpus or writes anything.
    out = tmp_path / "model"
    result = runner.invoke(app, ["model", "train", task, "--profile", "nope", "--out", str(out)])
    assert result.exit_code == EXIT_USAGE, result.output
    assert "unknown profile 'nope'" in result.output
    assert "expected one of" in result.output
    assert not out.exists()


def test_an_unknown_profile_names_the_task_and_the_known_ones() -> None:
    with pytest.raises(UnknownProfileError) as caught:
        UnknownProfileError.check("nope", {"full": {}, "quick": {}}, "discourse")
    assert str(caught.value) == "unknown profile 'nope' for the discourse task; expected one of full, quick"
    UnknownProfileError.check("full", ("quick", "full"))
    assert outcome(caught.value)[:2] == (400, EXIT_USAGE)
    assert kind_of(caught.value) == "unknown-profile"


def test_an_unknown_prediction_task_is_the_callers_mistake() -> None:
    with pytest.raises(UnknownTaskError, match="unknown task 'nope'; expected one of pair, dialogue, transcript") as e:
        predict_service.predict(PredictionRequest(task="nope"), None)
    assert outcome(e.value)[:2] == (400, EXIT_USAGE)
    assert kind_of(e.value) == "unknown-task"
    with pytest.raises(UnknownTaskError):
        predict_service.register("nope", lambda request, graph: {})


def test_no_model_installed_is_a_503_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    # A server where no predictor was wired in: the task is known, its model is not there.
    monkeypatch.setattr(predict_service, "_PREDICTORS", {})
    with pytest.raises(ModelNotInstalledError, match="no model is installed for transcript prediction") as e:
        predict_service.predict(PredictionRequest(task="transcript", utterances=({"speaker": "a", "text": "b"},)), None)
    assert not isinstance(e.value, ClientError)
    assert outcome(e.value)[:2] == (503, EXIT_FAILURE)
    assert kind_of(e.value) == "no-model"


def test_every_slot_taken_is_a_503_of_its_own() -> None:
    limits = Limits(running=1)
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with running_slot(limits):
            inside.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert inside.wait(10)
        with pytest.raises(BusyError, match="1 predictions are being computed") as e, running_slot(limits):
            pass
    finally:
        release.set()
        holder.join(10)
    assert outcome(e.value)[:2] == (503, EXIT_FAILURE)
    assert kind_of(e.value) == "busy"
    # The slot is free again once the holder left.
    with running_slot(limits):
        pass


@pytest.mark.parametrize(
    ("task", "data"),
    [
        ("discourse", []),
        ("paraphrase", []),
        ("components", []),
        # The relation cross-validation reads its data first: the shipped sample keeps that short.
        ("relations", ["--data", str(SAMPLES / "dialam-2024" / "my_train")]),
    ],
)
def test_an_unknown_profile_of_a_cross_validation_is_the_callers_mistake(task: str, data: list[str]) -> None:
    result = runner.invoke(app, ["model", "evaluate", task, "--cv", "2", "--profile", "nope", *data])
    assert result.exit_code == EXIT_USAGE, result.output
    assert "unknown profile 'nope'" in result.output and "expected one of" in result.output
