"""Corpus fetching through pooch: local mirrors, checksums, archives via file:// URLs, and no network."""

from __future__ import annotations

import hashlib
import io
import shutil
import urllib.error
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphstore.fetch import (
    SOURCES,
    CorpusSource,
    PoochDownloader,
    RemoteFile,
    fetch_corpus,
    load_registry,
    registry_path,
    sha256_file,
    write_registry,
)
from ontology.errors import GraphStoreError
from tests.conftest import SAMPLES, shared_corpora


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _source(files: tuple[RemoteFile, ...]) -> CorpusSource:
    return CorpusSource(
        folder="toy",
        corpus="toy",
        title="the toy corpus",
        by_hand="ask the toy makers at https://example.org/toy",
        license="none",
        files=files,
    )


A, B = b'{"a": 1}\n', b"second file\n"


def _mirror(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = root / "toy" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def test_copies_from_mirror_and_verifies(tmp_path: Path) -> None:
    source = _source(
        (
            RemoteFile("a.json", "http://unused/a", sha256=_sha(A)),
            RemoteFile("sub/b.txt", "http://unused/b", size=len(B)),
            RemoteFile("c.txt", "http://unused/c"),
            RemoteFile("held.txt", "http://unused/h", group="test"),
        )
    )
    mirror = _mirror(tmp_path / "mirror", {"a.json": A, "sub/b.txt": B, "held.txt": b"x"})
    dest = tmp_path / "corpora"
    report = fetch_corpus("toy", dest, from_dir=mirror, source=source)
    assert (report.fetched, report.verified, report.unverified, report.skipped) == (2, 1, 1, ["c.txt"])
    assert (dest / "toy" / "a.json").read_bytes() == A and (dest / "toy" / "sub" / "b.txt").read_bytes() == B
    assert not (dest / "toy" / "held.txt").exists()
    again = fetch_corpus("toy", dest, from_dir=mirror, source=source, groups=("main", "test"))
    assert (again.present, again.fetched) == (2, 1) and (dest / "toy" / "held.txt").exists()
    assert not list(dest.rglob("*.partial"))


def test_corrupted_mirror_file_is_rejected(tmp_path: Path) -> None:
    source = _source((RemoteFile("a.json", "http://unused/a", sha256=_sha(A)),))
    mirror = _mirror(tmp_path / "mirror", {"a.json": A[:-2] + b"2}\n"})
    with pytest.raises(GraphStoreError, match=r"a\.json: sha256 [0-9a-f]{64} does not match the expected"):
        fetch_corpus("toy", tmp_path / "corpora", from_dir=mirror, source=source)
    assert not (tmp_path / "corpora" / "toy" / "a.json").exists()
    sized = _source((RemoteFile("b.txt", "http://unused/b", size=3),))
    _mirror(tmp_path / "mirror", {"b.txt": B})
    with pytest.raises(GraphStoreError, match=r"b\.txt: 12 bytes, expected 3"):
        fetch_corpus("toy", tmp_path / "corpora", from_dir=mirror, source=sized)


def test_mirror_without_a_known_file(tmp_path: Path) -> None:
    source = _source((RemoteFile("a.json", "http://unused/a", sha256=_sha(A)),))
    (tmp_path / "mirror").mkdir()
    with pytest.raises(GraphStoreError, match=r"toy/a\.json: missing from the mirror"):
        fetch_corpus("toy", tmp_path / "corpora", from_dir=tmp_path / "mirror", source=source)


def test_a_stale_local_file_is_replaced(tmp_path: Path) -> None:
    source = _source((RemoteFile("a.json", "http://unused/a", sha256=_sha(A)),))
    dest = tmp_path / "corpora"
    (dest / "toy").mkdir(parents=True)
    (dest / "toy" / "a.json").write_bytes(b"old")
    report = fetch_corpus("toy", dest, from_dir=_mirror(tmp_path / "m", {"a.json": A}), source=source)
    assert report.fetched == 1 and (dest / "toy" / "a.json").read_bytes() == A


def test_no_network_and_no_mirror_says_where_to_get_files(tmp_path: Path) -> None:
    # A closed local port: the real urllib downloader fails at once, no traffic leaves the machine.
    source = _source((RemoteFile("a.json", "http://127.0.0.1:9/a.json", sha256=_sha(A)),))
    with pytest.raises(GraphStoreError) as err:
        fetch_corpus("toy", tmp_path / "corpora", source=source, timeout=0.5, retries=0)
    message = str(err.value)
    assert "cannot download http://127.0.0.1:9/a.json" in message
    assert "ask the toy makers at https://example.org/toy" in message and "--from" in message
    assert not list((tmp_path / "corpora").rglob("*.json"))

    def offline(url: str, output_file: str, pooch: object) -> None:
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    with pytest.raises(GraphStoreError) as err:
        fetch_corpus("stac", tmp_path / "corpora", downloader=offline)
    message = str(err.value)
    assert "raw.githubusercontent.com/chijames/structured_dialogue_discourse_parsing" in message
    assert "https://www.irit.fr/STAC/corpus.html" in message


def test_downloads_files_and_nested_archive_members(tmp_path: Path) -> None:
    # Zenodo-like: an outer zip holding a release zip whose members sit under a top folder.
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("release-abc123/annotated dataset/pairs.csv", B)
        zf.writestr("release-abc123/data/audio/part.mp3", b"ID3 fake")
    outer = tmp_path / "site" / "files-archive.zip"
    outer.parent.mkdir()
    with zipfile.ZipFile(outer, "w") as zf:
        zf.writestr("owner/release-v1.zip", inner.getvalue())
    (tmp_path / "site" / "a.json").write_bytes(A)
    source = _source(
        (
            RemoteFile("a.json", (tmp_path / "site" / "a.json").as_uri(), sha256=_sha(A)),
            RemoteFile(
                "pairs.csv", outer.as_uri(), sha256=_sha(B), member=("release-v1.zip", "annotated dataset/pairs.csv")
            ),
            RemoteFile(
                "audio/part.mp3", outer.as_uri(), member=("release-v1.zip", "data/audio/part.mp3"), group="audio"
            ),
        )
    )
    calls: list[str] = []

    def counting(url: str, output_file: str, pooch: object) -> None:
        calls.append(url)
        PoochDownloader()(url, output_file, pooch)

    dest = tmp_path / "corpora"
    report = fetch_corpus("toy", dest, source=source, downloader=counting)
    assert (report.fetched, report.verified) == (2, 2)
    assert (dest / "toy" / "pairs.csv").read_bytes() == B and not (dest / "toy" / "audio").exists()
    report = fetch_corpus("toy", dest, source=source, downloader=counting, groups=("main", "audio"))
    assert (report.present, report.fetched, report.unverified) == (2, 1, 1)
    assert (dest / "toy" / "audio" / "part.mp3").read_bytes() == b"ID3 fake"
    # The archive was downloaded once and reused from dest/.downloads.
    assert calls == [(tmp_path / "site" / "a.json").as_uri(), outer.as_uri()]
    bad = _source((RemoteFile("x.csv", outer.as_uri(), member=("release-v1.zip", "nothing.csv")),))
    with pytest.raises(GraphStoreError, match=r"no member ending in 'nothing\.csv'"):
        fetch_corpus("toy", dest, source=bad)


def test_source_table() -> None:
    assert set(SOURCES) == {"molweni", "stac", "dialam-2024", "m-arg", "sciarg", "contextdep"}
    for source in SOURCES.values():
        for spec in source.files:
            assert spec.url.startswith(("https://", "http://")), spec
            assert spec.group in ("main", "test", "audio")
        paths = [f.path for f in source.files]
        assert len(paths) == len(set(paths)), source.folder
    # The registry is a data file inside the package; the main files of the reference copy have sums.
    assert registry_path().is_file() and registry_path().parent.name == "data"
    summed = [f for s in SOURCES.values() for f in s.files if f.sha256 is not None]
    assert len(summed) > 1500 and all(len(f.sha256 or "") == 64 and f.size for f in summed)
    marg = {f.path: f for f in SOURCES["m-arg"].files}
    assert "zenodo.org/api/records/5653504" in marg["aggregated_dataset.csv"].url
    assert len([p for p in marg if p.startswith("audio/")]) == 17
    assert SOURCES["sciarg"].files[0].url == "http://data.dws.informatik.uni-mannheim.de/sci-arg/compiled_corpus.zip"
    assert "AnnaWegmann/Paraphrases-in-Interviews" in SOURCES["contextdep"].by_hand
    with pytest.raises(GraphStoreError, match="unknown corpus 'nope'"):
        fetch_corpus("nope", Path("unused"))
    with pytest.raises(GraphStoreError, match="unknown file group"):
        fetch_corpus("stac", Path("unused"), groups=("main", "video"))


def test_sample_is_not_the_real_corpus(tmp_path: Path) -> None:
    # The shipped STAC sample is a cut of train.json, so the real table rejects it.
    mirror = tmp_path / "mirror"
    (mirror / "stac").mkdir(parents=True)
    shutil.copy(SAMPLES / "stac" / "train.json", mirror / "stac" / "train.json")
    with pytest.raises(GraphStoreError, match=r"stac/train\.json: sha256 .* does not match"):
        fetch_corpus("stac", tmp_path / "corpora", from_dir=mirror)


def test_fetch_all_from_the_reference_copy(tmp_path: Path) -> None:
    root = shared_corpora()
    if root is None:
        pytest.skip("no shared corpora directory")
    dest = tmp_path / "corpora"
    for name in ("qt30", "molweni", "stac", "m-arg", "sciarg", "contextdep"):
        report = fetch_corpus(name, dest, from_dir=root)
        folder = report.folder
        expected = sum(1 for f in SOURCES[folder].files if f.sha256 is not None and f.group == "main")
        assert report.verified == expected, folder
    (dev,) = [f for f in SOURCES["molweni"].files if f.path == "DP/dev.json"]
    assert sha256_file(dest / "molweni" / "DP" / "dev.json") == dev.sha256


def test_registry_regenerates_from_a_reference_copy(tmp_path: Path) -> None:
    registry = tmp_path / "registry.json"
    shutil.copy(registry_path(), registry)
    # Regenerating from a directory without files changes nothing, byte for byte.
    assert write_registry(tmp_path / "empty", registry) == 0
    assert registry.read_bytes() == registry_path().read_bytes()
    ref = tmp_path / "ref" / "stac"
    ref.mkdir(parents=True)
    (ref / "train.json").write_bytes(B)
    assert write_registry(tmp_path / "ref", registry) == 1
    (train,) = [f for f in load_registry(registry)["stac"].files if f.path == "train.json"]
    assert (train.sha256, train.size) == (_sha(B), len(B))


def test_cli_fetch(tmp_path: Path) -> None:
    from api.cli.main import app

    mirror = tmp_path / "mirror"
    runner = CliRunner()
    result = runner.invoke(app, ["fetch", "--dest", str(tmp_path / "c"), "--from", str(mirror)])
    assert result.exit_code == 2 and "give a corpus or --all" in " ".join(result.output.split())
    result = runner.invoke(app, ["fetch", "stac", "--dest", str(tmp_path / "c"), "--from", str(mirror)])
    assert result.exit_code == 1 and "missing from the mirror" in " ".join(result.output.split())
    root = shared_corpora()
    if root is not None:
        result = runner.invoke(app, ["fetch", "molweni", "--dest", str(tmp_path / "c"), "--from", str(root)])
        assert result.exit_code == 0, result.output
        assert "1 sha256 verified" in " ".join(result.output.split())
