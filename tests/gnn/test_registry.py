"""One rule from what a caller wrote to the model directory a task runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gnn.modelcard import read_card
from gnn.registry import TASKS, resolve_model, shipped_model
from ontology.errors import ApiError, ClientError, ModelError, NotFoundError

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier


@pytest.mark.parametrize("task", sorted(TASKS))
def test_nothing_named_is_the_shipped_model_of_the_task(task: str) -> None:
    resolved = resolve_model(task)
    assert resolved.shipped and resolved.path == shipped_model(task)
    assert resolved.card.task == task


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_shipped_card_is_versioned_by_the_one_scheme(task: str) -> None:
    # An integer version, the training date and commit beside it; the task says the same number.
    from gnn.task import CardVersion, get_task

    card = resolve_model(task).card
    version = CardVersion.of(card)
    assert str(version) == card.version and version.number == get_task(task).version
    assert len(version.trained) == 10 and version.trained[4] == "-"
    assert version.commit, f"{task}: the shipped card records no commit"


def test_a_name_is_a_trained_model_before_a_shipped_one(tmp_path: Path) -> None:
    trained = tmp_path / "models" / "mine"
    shutil.copytree(shipped_model("paraphrase"), trained)
    resolved = resolve_model("paraphrase", "mine", tmp_path / "models")
    assert resolved.path == trained and not resolved.shipped
    # the task's own name reaches the shipped model while nothing was trained under that name
    assert resolve_model("paraphrase", "paraphrase", tmp_path / "models").shipped
    shutil.copytree(shipped_model("paraphrase"), tmp_path / "models" / "paraphrase")
    assert not resolve_model("paraphrase", "paraphrase", tmp_path / "models").shipped


def test_a_path_is_that_directory(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(shipped_model("components"), copy)
    assert resolve_model("components", copy).path == copy
    assert resolve_model("components", str(copy)).card == read_card(copy)


def test_what_the_caller_got_wrong_is_a_client_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="no model named 'nothing'"):
        resolve_model("discourse", "nothing", tmp_path)
    with pytest.raises(NotFoundError, match="no such model directory"):
        resolve_model("discourse", tmp_path / "absent" / "dir")
    with pytest.raises(ApiError, match="unknown model task"):
        resolve_model("sentiment")
    # a model of another task
    with pytest.raises(ApiError, match=r"relations|paraphrase"):
        resolve_model("relations", shipped_model("paraphrase"))
    assert issubclass(ApiError, ClientError) and issubclass(NotFoundError, ClientError)


def test_a_missing_shipped_model_is_not_the_callers_mistake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(TASKS, "discourse", tmp_path / "gone")
    with pytest.raises(ModelError, match="no shipped discourse model") as caught:
        resolve_model("discourse")
    assert not isinstance(caught.value, ClientError)


def test_runs_keep_the_version_label_they_were_first_written_under(tmp_path: Path) -> None:
    # The card renumbered with the same weights writes its runs under the label of then, so a graph
    # that holds those runs gets no second copy; the integer stays the card's version. (Relation
    # model 8, 0.8.0 before, did the same until model 9 replaced its weights.)
    import json
    from dataclasses import replace

    from gnn.modelcard import CARD_FILE, write_card
    from gnn.task import get_task
    from ontology.scope import Scope

    written = {task: resolve_model(task).card for task in sorted(TASKS)}
    assert {t: (c.version, c.written_version) for t, c in written.items() if c.runs_version} == {
        "discourse": ("1", "20261201-full-s13"),
    }
    assert written["relations"].written_version == written["relations"].version == "9"
    scope = Scope("stac", None, ("d1",))
    shipped = get_task("discourse").decoding(None, shipped_model("discourse"), scope, {})
    assert shipped.id_parts[1:3] == ("argweb-discourse-rgcn", "20261201-full-s13")
    # A card as training writes it has no such field: its runs carry its integer version.
    card = replace(written["discourse"], runs_version=None)
    for name in card.weights:
        (tmp_path / name).write_bytes(b"")
    write_card(tmp_path, card)
    assert "runs_version" not in json.loads((tmp_path / CARD_FILE).read_text(encoding="utf-8"))
    fresh = read_card(tmp_path, "discourse")
    assert fresh.runs_version is None and fresh.written_version == fresh.version == "1"
    trained = get_task("discourse").decoding(None, tmp_path, scope, {})
    assert trained.id_parts[1:3] == ("argweb-discourse-rgcn", "1")
    assert trained.id_parts[3] == tmp_path.resolve() and shipped.id_parts[4:] == trained.id_parts[4:]
