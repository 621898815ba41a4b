"""Model directories: weights file(s) plus a ``model_card.json`` describing them.

A model directory is what ``argweb train`` writes and what ``--model DIR`` reads. The card records
what a researcher needs to judge or reproduce the model: the task, the model name and version, the
encoder, the data and split, the hyper-parameters, the metrics, the training time, the git commit
and the creation time.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ontology.errors import ModelError
from ontology.system import atomic_write_bytes

CARD_FILE = "model_card.json"
REQUIRED = ("task", "model", "version", "weights")


@dataclass
class ModelCard:
    """What a trained model is and how it was made.

    Attributes:
        task: Task name (``discourse``, ``relations`` ...).
        model: Model name (architecture family).
        version: Model version (an integer, :class:`gnn.task.CardVersion`); predictions carry it as
            ``model_version`` unless ``runs_version`` says otherwise.
        weights: File names of the weights, relative to the model directory.
        encoder: Text encoder name the model was trained on.
        encoder_fingerprint: :meth:`gnn.encoder.TextEncoder.fingerprint` of that encoder (its
            config, weights and pooling); a model is never run on vectors of another encoder.
        encoder_dir: The encoder's directory when it was not the packaged default (``--encoder``).
        data: Training / evaluation data: files, splits, counts.
        hyperparameters: Everything needed to rebuild and retrain the model.
        metrics: Held-out metrics, keyed by split.
        training_seconds: Wall time of training.
        git_commit: Commit of the code that trained it (``None`` outside a checkout).
        created_at: ISO-8601 UTC creation time.
        notes: Free text (what the model is, caveats).
        runs_version: The version label this model's predictions were first written under, when
            that was not its version: a model renumbered into the one integer scheme with the same
            weights keeps writing the runs (run ids and ``model_version``) it wrote before, so a
            graph that holds them is not given a second copy. Absent from every newly trained card.
    """

    task: str
    model: str
    version: str
    weights: list[str]
    encoder: str | None = None
    encoder_fingerprint: str | None = None
    encoder_dir: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    training_seconds: float | None = None
    git_commit: str | None = None
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    notes: str = ""
    runs_version: str | None = None

    @property
    def written_version(self) -> str:
        """The version label the model's predictions carry and their run ids derive from."""
        return self.version if self.runs_version is None else self.runs_version

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``runs_version`` only where the card has one)."""
        out = asdict(self)
        if self.runs_version is None:
            del out["runs_version"]
        return out


def git_commit(cwd: Path | None = None) -> str | None:
    """The current git commit of ``cwd`` (default: this package's checkout), or ``None``."""
    where = cwd or Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and commit else None


def atomic_savez(path: Path, *arrays: Any, **named: Any) -> None:
    """``np.savez`` of the arrays to ``path`` through :func:`atomic_write_bytes` (readers never see half a file)."""
    import io

    import numpy as np

    buf = io.BytesIO()
    np.savez(buf, *arrays, **named)
    atomic_write_bytes(path, buf.getvalue())


def write_card(model_dir: Path, card: ModelCard) -> Path:
    """Write ``model_card.json`` into ``model_dir`` (created if needed).

    Raises:
        ModelError: A weights file named by the card is missing.
    """
    model_dir.mkdir(parents=True, exist_ok=True)
    missing = [w for w in card.weights if not (model_dir / w).is_file()]
    if missing:
        raise ModelError(f"{model_dir}: weights {missing} named by the model card do not exist")
    path = model_dir / CARD_FILE
    atomic_write_bytes(path, (json.dumps(card.as_dict(), indent=2, sort_keys=True) + "\n").encode())
    return path


def read_card(model_dir: Path, task: str | None = None) -> ModelCard:
    """Read and check the model card of ``model_dir``.

    Args:
        model_dir: A directory written by :func:`write_card`.
        task: When given, the task the model must be for.

    Raises:
        ModelError: The directory or its card is missing or invalid, a weights file is missing, or
            the model is for another task; the message names the file.
    """
    path = Path(model_dir) / CARD_FILE
    if not Path(model_dir).is_dir():
        raise ModelError(f"{model_dir}: not a model directory (no such directory)")
    if not path.is_file():
        raise ModelError(f"{model_dir}: not a model directory ({CARD_FILE} is missing)")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelError(f"{path}: unreadable model card: {e}") from e
    if not isinstance(raw, dict):
        raise ModelError(f"{path}: a model card is a JSON object, got {type(raw).__name__}")
    lacking = [k for k in REQUIRED if k not in raw]
    if lacking:
        raise ModelError(f"{path}: model card lacks {lacking}")
    known = set(ModelCard.__dataclass_fields__)
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ModelError(f"{path}: unknown model card field(s) {unknown}")
    if not isinstance(raw["weights"], list) or not all(isinstance(w, str) for w in raw["weights"]):
        raise ModelError(f"{path}: 'weights' must be a list of file names")
    card = ModelCard(**raw)
    missing = [w for w in card.weights if not (Path(model_dir) / w).is_file()]
    if missing:
        raise ModelError(f"{path}: weights file(s) {missing} are missing from {model_dir}")
    if task is not None and card.task != task:
        raise ModelError(f"{path}: a {card.task!r} model, not a {task!r} model")
    return card


def check_encoder(model_dir: Path, card: ModelCard, fingerprint: str, name: str) -> None:
    """Refuse to run a model on an encoder other than the one it was trained with.

    Cards written before fingerprints were recorded are not checked.

    Raises:
        ModelError: The fingerprints differ; the message names both encoders.
    """
    if card.encoder_fingerprint is not None and card.encoder_fingerprint != fingerprint:
        where = f" from {card.encoder_dir}" if card.encoder_dir else ""
        raise ModelError(
            f"{model_dir}: trained with encoder {card.encoder}{where} (fingerprint {card.encoder_fingerprint}), "
            f"not {name} (fingerprint {fingerprint}); vectors of another encoder would be meaningless to it"
        )
