"""``train … --encoder PATH``: any local Hugging Face encoder, recorded by fingerprint and enforced.

A tiny randomly initialised BERT is written from a config into a temporary directory (no weights
are downloaded); the relation, discourse, paraphrase, pair and component models train on it,
predict through it, and refuse to run once the encoder in that directory is no longer the one they
were trained with.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

from api.cli.main import app
from api.services import tasks
from gnn.encoder import TextEncoder
from ontology.errors import ModelError
from ontology.formats.registry import SAMPLES

pytestmark = pytest.mark.model  # trains on a local encoder

AIF_DIR = SAMPLES / "dialam-2024" / "my_train"
MOLWENI = SAMPLES / "molweni" / "DP" / "dev.json"
CONTEXTDEP = sorted((SAMPLES / "contextdep").glob("*_TOKEN-annotations.tsv"))
BAM = Path(__file__).resolve().parent.parent / "data" / "bam" / "gold"


def _tiny_bert(where: Path, seed: int) -> Path:
    import torch
    from transformers import BertConfig, BertModel

    words = sorted({w for p in AIF_DIR.glob("*.json") for w in p.read_text(encoding="utf-8").lower().split()})[:400]
    where.mkdir(parents=True, exist_ok=True)
    (where / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n", encoding="utf-8"
    )
    config = BertConfig(
        vocab_size=405, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
    )
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(where)
    return where


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_bert(tmp_path_factory.mktemp("tiny-bert"), seed=0)


def _train(encoder: Path, task: str, profile: str, data: list[str], out: Path) -> dict[str, Any]:
    """``argweb train TASK`` on ``encoder``; its card, which must name that encoder exactly."""
    args = ["train", task, "--profile", profile, "--encoder", str(encoder), *data, "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    card: dict[str, Any] = json.loads((out / "model_card.json").read_text(encoding="utf-8"))
    assert card["encoder"] == encoder.name and card["encoder_dir"] == str(encoder.resolve())
    assert len(card["encoder_fingerprint"]) == 16
    return card


def test_relations_train_and_predict_on_a_local_encoder(encoder: Path, tmp_path: Path) -> None:
    out = tmp_path / "model"
    _train(encoder, "relations", "full", ["--data", str(AIF_DIR)], out)
    predicted = CliRunner().invoke(
        app, ["predict", "aif", "--in", str(AIF_DIR), "--out", str(tmp_path / "out"), "--model", str(out)]
    )
    assert predicted.exit_code == 0, predicted.output
    assert len(list((tmp_path / "out").glob("*.json"))) == len(list(AIF_DIR.glob("*.json")))
    # Another encoder in the same place: the model refuses it instead of reading meaningless vectors.
    _tiny_bert(encoder, seed=1)
    try:
        refused = CliRunner().invoke(
            app, ["predict", "aif", "--in", str(AIF_DIR), "--out", str(tmp_path / "again"), "--model", str(out)]
        )
    finally:
        _tiny_bert(encoder, seed=0)
    assert refused.exit_code != 0
    assert "fingerprint" in " ".join(refused.output.split())
    assert not (tmp_path / "again").exists() or not list((tmp_path / "again").glob("*.json"))


def test_the_quick_profile_refuses_an_encoder(encoder: Path, tmp_path: Path) -> None:
    args = ["train", "relations", "--encoder", str(encoder), "--data", str(AIF_DIR), "--out", str(tmp_path / "m")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "LSA" in result.output


def test_discourse_trains_and_parses_on_a_local_encoder(encoder: Path, tmp_path: Path) -> None:
    out = tmp_path / "parser"
    _train(encoder, "discourse", "tiny", ["--data", str(MOLWENI)], out)
    parsed = CliRunner().invoke(
        app, ["parse", "discourse", "--in", str(MOLWENI), "--out", str(tmp_path / "p.json"), "--model", str(out)]
    )
    assert parsed.exit_code == 0, parsed.output
    dialogues = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    assert dialogues and all("relations" in d for d in dialogues)


def test_paraphrase_trains_and_predicts_on_a_local_encoder_and_refuses_another(
    encoder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARGWEB_CACHE_DIR", str(tmp_path / "cache"))  # this encoder's pair vectors are throwaway
    out, dev = tmp_path / "highlighter", next(p for p in CONTEXTDEP if "_DEV_" in p.name)
    data = [arg for path in CONTEXTDEP for arg in ("--data", str(path))]
    card = _train(encoder, "paraphrase", "quick", data, out)

    def predict(target: Path) -> Result:
        return CliRunner().invoke(
            app, ["predict", "contextdep", "--in", str(dev), "--out", str(target), "--model", str(out)]
        )

    predicted = predict(tmp_path / "pred.tsv")
    assert predicted.exit_code == 0, predicted.output
    rows = (tmp_path / "pred.tsv").read_text(encoding="utf-8").splitlines()
    assert (
        rows[0].startswith("QID\tparaphrase")
        and len(rows) == 1 + card["data"]["pairs"]["tune"] + card["data"]["pairs"]["heldout"]
    )
    _tiny_bert(encoder, seed=1)
    try:
        other = TextEncoder(encoder).fingerprint()
        tasks.forget()  # the next command is a fresh process: it loads the model again
        refused = predict(tmp_path / "again.tsv")
    finally:
        _tiny_bert(encoder, seed=0)
    message = " ".join(refused.output.split())
    assert refused.exit_code == 1 and other != card["encoder_fingerprint"]  # a ModelError
    assert f"fingerprint {card['encoder_fingerprint']}" in message and f"fingerprint {other}" in message
    assert not (tmp_path / "again.tsv").exists()


def test_pairs_train_cross_validate_and_answer_on_a_local_encoder_and_refuse_another(
    encoder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from api.cli_common import settings
    from api.services import pairs, tasks

    monkeypatch.setenv("ARGWEB_CACHE_DIR", str(tmp_path / "cache"))  # this encoder's vectors are throwaway
    out = tmp_path / "pairs"
    card = _train(encoder, "pairs", "quick", ["--data", str(AIF_DIR)], out)
    answers = pairs.classify(settings(), [("Taxes must rise.", "No, they must not.")], model=out)
    assert len(answers) == 1 and abs(sum(answers[0][2].values()) - 1) < 1e-6
    # The recipe cross-validated on the same encoder: the fold models read its vectors.
    cv = ["evaluate", "pairs", "--cv", "2", "--profile", "quick", "--encoder", str(encoder), "--data", str(AIF_DIR)]
    scored = CliRunner().invoke(app, [*cv, "--json"])
    assert scored.exit_code == 0, scored.output
    report = json.loads(scored.stdout[scored.stdout.index("{") :])
    assert report["encoder"] == encoder.name and len(report["folds"]) == 2
    tasks.forget()  # a fresh process would load it again
    _tiny_bert(encoder, seed=1)
    try:
        with pytest.raises(ModelError, match=f"fingerprint {card['encoder_fingerprint']}"):
            pairs.classify(settings(), [("Taxes must rise.", "No, they must not.")], model=out)
    finally:
        _tiny_bert(encoder, seed=0)
        tasks.forget()


def test_components_train_and_tag_on_a_local_encoder_and_refuse_another(
    encoder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARGWEB_CACHE_DIR", str(tmp_path / "cache"))
    # One small brat paper standing in for a training, a tuning and a held-out paper.
    corpus, papers = tmp_path / "sciarg", tmp_path / "texts"
    corpus.mkdir()
    papers.mkdir()
    for name in ("A01", "A21", "A25"):
        for ext in (".ann", ".txt"):
            shutil.copyfile(BAM / f"P1{ext}", corpus / f"{name}{ext}")
    shutil.copyfile(BAM / "P1.txt", papers / "A25.txt")
    out = tmp_path / "tagger"
    card = _train(encoder, "components", "quick", ["--data", str(corpus)], out)
    assert card["hyperparameters"]["layers"] == [0, 1]  # the middle and last of its one layer

    def tag(target: Path) -> Result:
        return CliRunner().invoke(
            app, ["predict", "components", "--in", str(papers), "--out", str(target), "--model", str(out)]
        )

    tagged = tag(tmp_path / "pred")
    assert tagged.exit_code == 0, tagged.output
    assert (tmp_path / "pred" / "A25.ann").is_file()
    _tiny_bert(encoder, seed=1)
    tasks.forget()  # the tagger is loaded once per process: a fresh process loads it again
    try:
        refused = tag(tmp_path / "again")
    finally:
        _tiny_bert(encoder, seed=0)
        tasks.forget()
    assert refused.exit_code == 1, refused.output  # a ModelError
    assert f"fingerprint {card['encoder_fingerprint']}" in " ".join(refused.output.split())
    assert not (tmp_path / "again" / "A25.ann").exists()
