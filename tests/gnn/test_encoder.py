"""The offline text encoder: pooling matches sentence-transformers, cache round-trip, no download."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from gnn.encoder import MINILM, MPNET, TextEncoder, default_model_dir, encoder_for, packaged_encoder_dir, text_key
from ontology.errors import ModelError

TEXTS = ["anyone know how to install grub?", "sudo apt-get install grub", "thanks", "thanks"]


def test_default_encoder_matches_sentence_transformers(tmp_path: Path) -> None:
    enc = TextEncoder(cache_dir=tmp_path, device="cpu")
    vecs = enc.encode(TEXTS)
    assert vecs.shape == (4, 384) and vecs.dtype == np.float32
    assert enc.dim == 384 and enc.name == "all-MiniLM-L6-v2"
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(vecs[2], vecs[3])
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(default_model_dir()), device="cpu", local_files_only=True).encode(TEXTS)
    np.testing.assert_allclose(vecs, reference, atol=1e-4)


def test_cache_is_reused_and_written_atomically(tmp_path: Path) -> None:
    first = TextEncoder(cache_dir=tmp_path, device="cpu")
    vecs = first.encode(TEXTS[:2])
    shards = list((tmp_path / first.cache_key()).glob("*.npz"))
    assert len(shards) == 1
    assert not list((tmp_path / first.cache_key()).glob("*.tmp"))
    second = TextEncoder(cache_dir=tmp_path, device="cpu")
    again = second.encode(list(reversed(TEXTS[:2])))
    assert second._model is None, "cached texts must not load the transformer"
    np.testing.assert_array_equal(again, vecs[::-1])
    # A new text adds one shard; the old one is untouched.
    second.encode(["a brand new sentence"])
    assert len(list((tmp_path / first.cache_key()).glob("*.npz"))) == 2
    assert text_key("thanks") == hashlib.sha1(b"thanks").hexdigest()


def test_empty_input_and_progress(tmp_path: Path) -> None:
    enc = TextEncoder(cache_dir=None, device="cpu", batch_size=2)
    assert enc.encode([]).shape == (0, 384)
    assert enc.encode(TEXTS[:3], progress=True).shape == (3, 384)


def test_local_directory_and_fingerprint(tmp_path: Path) -> None:
    copy = tmp_path / "my-encoder"
    shutil.copytree(default_model_dir(), copy)
    enc = TextEncoder(copy, cache_dir=tmp_path / "cache", device="cpu")
    assert enc.name == "my-encoder"
    base = TextEncoder(cache_dir=tmp_path / "cache", device="cpu")
    assert enc.fingerprint() == base.fingerprint()
    # Changed weights (as after fine-tuning) give another cache namespace.
    with (copy / "model.safetensors").open("ab") as fh:
        fh.write(b"\0")
    assert TextEncoder(copy, device="cpu").fingerprint() != base.fingerprint()


def test_fine_tuning_is_possible() -> None:
    enc = TextEncoder(device="cpu")
    _tok, model = enc.load_transformer()
    model.train()
    out = enc.embed(["hello there", "general kenobi"])
    loss = (out[0] * out[1]).sum()
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and any(float(g.abs().sum()) > 0 for g in grads)


def test_not_a_model_directory(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"config\.json"):
        TextEncoder(tmp_path)


@pytest.mark.unit  # reads config files only
def test_packaged_encoders_by_name(tmp_path: Path) -> None:
    assert packaged_encoder_dir(MINILM, tmp_path) == default_model_dir()
    with pytest.raises(ModelError, match="no packaged encoder named"):
        packaged_encoder_dir("bert-base-uncased", tmp_path)
    # A card that names no packaged encoder exactly (written before names were) reads MiniLM.
    assert encoder_for("all-MiniLM-L6-v2, frozen (sentence vectors)", None, tmp_path).model_dir == default_model_dir()
    assert encoder_for(None, None, tmp_path).cache_dir == tmp_path / "embeddings"


def test_mpnet_is_assembled_once_from_its_packages(tmp_path: Path) -> None:
    import json

    from gnn.registry import shipped_model

    found = packaged_encoder_dir(MPNET, tmp_path)
    assert found.name == MPNET and (found / "model.safetensors").stat().st_size > 400_000_000
    # The same weights the shipped pair model was trained on (its card names them by fingerprint).
    card = json.loads((shipped_model("pairs") / "model_card.json").read_text(encoding="utf-8"))
    encoder = encoder_for(MPNET, None, tmp_path)
    assert (encoder.name, encoder.fingerprint()) == (card["encoder"], card["encoder_fingerprint"])
    assert encoder.dim == 768 and encoder.encode(["Vaccines save lives."]).shape == (1, 768)
    # Later calls find it: nothing is unpacked again, and no temporary folder is left beside it.
    stamp = (found / "config.json").stat().st_mtime_ns
    assert packaged_encoder_dir(MPNET, tmp_path) == found and (found / "config.json").stat().st_mtime_ns == stamp
    assert [p.name for p in (tmp_path / "encoders").iterdir()] == [found.parent.name]
