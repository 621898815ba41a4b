"""Fetch the corpora from their official sources, or copy them from a local mirror, and verify them.

A corpora directory is laid out like ``shared/corpora``: one folder per corpus (``molweni/DP/*.json``,
``stac/*.json``, ``dialam-2024/my_train/*.json``, ``m-arg/*.csv``, ``sciarg/compiled_corpus/*``,
``contextdep/*.tsv``). :data:`SOURCES` says, for every file of that layout, where it is published
(GitHub raw files at the commits pinned in each corpus's ``PROVENANCE.md``, the Zenodo record of
M-Arg, the Sci-Arg zip) and its sha256 where known (:mod:`graphstore.fetch_manifest`, computed
from the reference copy). Files whose sum is unknown are checked for their documented size, if
any, and otherwise only taken as they come.

Files belong to groups: ``main`` (what the loaders read), ``test`` (official test splits and
held-out documents, which the reference copy leaves out on purpose) and ``audio`` (the M-Arg debate
recordings, large). :func:`fetch_corpus` fetches ``main`` unless told otherwise.

Without network access and without a mirror, fetching fails with a :class:`GraphStoreError` that
says where to get the files by hand.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from graphstore.loaders.marg import PART_NAMES
from ontology.errors import GraphStoreError

Downloader = Callable[[str, Path, float], None]
Log = Callable[[str], None]
GROUPS = ("main", "test", "audio")


@dataclass(frozen=True)
class RemoteFile:
    """One file of a corpus folder and where it is published.

    Attributes:
        path: Path inside the corpus folder (``/``-separated).
        url: Direct URL of the file, or of an archive holding it.
        sha256: Expected sum, or None when unknown.
        size: Expected size in bytes, or None when unknown.
        member: For archives: the member path, then (for an archive inside the archive) the path
            inside that one, ...; each is matched as a suffix of the member names.
        group: ``main``, ``test`` or ``audio``.
    """

    path: str
    url: str
    sha256: str | None = None
    size: int | None = None
    member: tuple[str, ...] = ()
    group: str = "main"


@dataclass(frozen=True)
class CorpusSource:
    """Where a corpus comes from.

    Attributes:
        folder: Folder name inside a corpora directory.
        corpus: Graph corpus id it loads into.
        title: Name and reference.
        by_hand: How to obtain the files without this tool.
        license: Licence as stated by the source.
        files: Every file of the folder.
    """

    folder: str
    corpus: str
    title: str
    by_hand: str
    license: str
    files: tuple[RemoteFile, ...]


@dataclass
class FetchReport:
    """What :func:`fetch_corpus` did."""

    folder: str
    fetched: int = 0
    present: int = 0
    verified: int = 0
    unverified: int = 0
    skipped: list[str] = field(default_factory=list)


def _raw(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{urllib.parse.quote(path)}"


def _sum(key: str) -> tuple[str | None, int | None]:
    from graphstore.fetch_manifest import SHA256

    entry = SHA256.get(key)
    return (entry[0], entry[1]) if entry else (None, None)


def _file(folder: str, path: str, url: str, *, size: int | None = None, **kw: object) -> RemoteFile:
    sha, known_size = _sum(f"{folder}/{path}")
    return RemoteFile(path=path, url=url, sha256=sha, size=known_size or size, **kw)  # type: ignore[arg-type]


# -- the sources ------------------------------------------------------------------------------------

MOLWENI_REPO, MOLWENI_COMMIT = "HIT-SCIR/Molweni", "2eb681d7e610ee3fda4ab3b4cc364554bd17ee67"
STAC_REPO, STAC_COMMIT = "chijames/structured_dialogue_discourse_parsing", "df2aed0e3c87a0f703a5c103c3e0f03872319166"
DIALAM_REPO, DIALAM_COMMIT = "HKUST-KnowComp/KnowComp-DialAM2024-ACL2024", "fa768f0ba4d26f7c1e3db9aa1c8fc96e0b723daa"
DIALAM_EVAL_REPO, DIALAM_EVAL_COMMIT = "ArneBinder/dialam-2024-shared-task", "42a003afa4d1a0895143ce460584605df6569eaa"
MARG_REPO, MARG_COMMIT = "rafamestre/m-arg_multimodal-argumentation-dataset", "08b5515f167a9f0d132a0948fdf7fa3bed075ea4"
MARG_GOLD_REPO, MARG_GOLD_COMMIT = "Robin-Chavigny/argumentation-analysis", "57c6b2fdb0f8645da9ad05e34d78043b53ece29b"
MARG_ZENODO = "https://zenodo.org/api/records/5653504/files-archive"
MARG_ZENODO_ZIP = "m-arg_multimodal-argumentation-dataset-v1.0.0.zip"
SCIARG_ZIP = "http://data.dws.informatik.uni-mannheim.de/sci-arg/compiled_corpus.zip"
CONTEXTDEP_REPO, CONTEXTDEP_COMMIT = "nlpsoc/Paraphrases-in-News-Interviews", "ece5b6f9c15d41d68faee19c45d6901e91980bf7"
CONTEXTDEP_DIR = "result/Annotations/Paraphrase Annotations"


def _manifest_paths(folder: str, prefix: str) -> list[str]:
    from graphstore.fetch_manifest import SHA256

    start = f"{folder}/{prefix}"
    return sorted(key[len(folder) + 1 :] for key in SHA256 if key.startswith(start))


def _molweni() -> CorpusSource:
    f = "molweni"

    def url(p: str) -> str:
        return _raw(MOLWENI_REPO, MOLWENI_COMMIT, p)

    return CorpusSource(
        folder=f,
        corpus="molweni",
        title="Molweni discourse parsing (Li et al., COLING 2020)",
        by_hand=(
            f"clone https://github.com/{MOLWENI_REPO} (commit {MOLWENI_COMMIT}) and copy DP/*.json into molweni/DP/"
        ),
        license="Apache-2.0 (HIT-SCIR); dialogues from the Ubuntu Chat Corpus",
        files=(
            _file(f, "DP/dev.json", url("DP/dev.json")),
            _file(f, "DP/train.json", url("DP/train.json")),
            _file(f, "DP/test.json", url("DP/test.json"), size=1_184_410, group="test"),
        ),
    )


def _stac() -> CorpusSource:
    f = "stac"

    def url(p: str) -> str:
        return _raw(STAC_REPO, STAC_COMMIT, p)

    return CorpusSource(
        folder=f,
        corpus="stac",
        title="STAC, linguistic-only, in the Shi & Huang (2019) JSON conversion",
        by_hand=(
            f"from https://github.com/{STAC_REPO} (commit {STAC_COMMIT}) copy data/stac/train/train.json to "
            "stac/train.json and data/stac/test/test.json to stac/test.json; the corpus itself is distributed "
            "by IRIT: https://www.irit.fr/STAC/corpus.html"
        ),
        license="CC BY-NC-SA 4.0 (STAC corpus, per IRIT); the conversion repository states none",
        files=(
            _file(f, "train.json", url("data/stac/train/train.json")),
            _file(f, "test.json", url("data/stac/test/test.json"), size=194_475, group="test"),
        ),
    )


def _dialam() -> CorpusSource:
    f = "dialam-2024"
    files = [_file(f, p, _raw(DIALAM_REPO, DIALAM_COMMIT, f"data/train/{p}")) for p in _manifest_paths(f, "my_train/")]
    files += [_file(f, p, _raw(DIALAM_REPO, DIALAM_COMMIT, f"data/test/{p}")) for p in _manifest_paths(f, "my_test/")]
    files += [
        _file(
            f,
            f"evaluation_data/test_map{i}.json",
            _raw(DIALAM_EVAL_REPO, DIALAM_EVAL_COMMIT, f"data/evaluation_data/test_map{i}.json"),
            group="test",
        )
        for i in range(1, 12)
    ]
    return CorpusSource(
        folder=f,
        corpus="qt30",
        title="DialAM-2024 shared task data: QT30 Question Time argument maps in AIF JSON",
        by_hand=(
            "download the training data from https://dialam.arg.tech/ (or clone "
            f"https://github.com/{DIALAM_REPO} at {DIALAM_COMMIT}: data/train/my_train and data/test/my_test) "
            "and put the nodeset*.json files into dialam-2024/my_train/ and dialam-2024/my_test/; the QT30 "
            "corpus is also on https://corpora.aifdb.org/"
        ),
        license="none stated by the repositories; data of the DialAM-2024 shared task / QT30 (AIFdb)",
        files=tuple(files),
    )


def _marg() -> CorpusSource:
    f = "m-arg"

    def gh(p: str) -> str:
        return _raw(MARG_REPO, MARG_COMMIT, p)

    files = [
        _file(f, "dataset_context_definition.csv", gh("data/preprocessed full dataset/dataset_context_definition.csv")),
        _file(
            f,
            "full_feature_extraction_dataset.csv",
            gh("data/preprocessed full dataset/full_feature_extraction_dataset.csv"),
        ),
        _file(f, "files_explanation.md", gh("files_explanation.md")),
        _file(
            f,
            "full_dataset_processing.csv",
            _raw(MARG_GOLD_REPO, MARG_GOLD_COMMIT, "python/full_dataset_processing.csv"),
        ),
    ]
    for name in ("aggregated_dataset.csv", "full_dataset.csv", "annotated_sentences_reference.csv"):
        files.append(_file(f, name, MARG_ZENODO, member=(MARG_ZENODO_ZIP, f"annotated dataset/{name}")))
    for stem in PART_NAMES.values():
        files.append(
            _file(
                f,
                f"timestamps/{stem}_timestamp.csv",
                MARG_ZENODO,
                member=(MARG_ZENODO_ZIP, f"data/timestamps/{stem}_timestamp.csv"),
            )
        )
    for stem in PART_NAMES.values():
        files.append(
            _file(
                f,
                f"audio/{stem}.mp3",
                MARG_ZENODO,
                member=(MARG_ZENODO_ZIP, f"data/split audio/{stem}.mp3"),
                group="audio",
            )
        )
    return CorpusSource(
        folder=f,
        corpus="m-arg",
        title="M-Arg: multimodal argument mining dataset of the US 2020 debates (Mestre et al., ArgMining 2021)",
        by_hand=(
            "download the record https://zenodo.org/records/5653504 (file "
            f"{MARG_ZENODO_ZIP}), unzip it and copy 'annotated dataset/*.csv' into m-arg/, "
            "'data/timestamps/*_timestamp.csv' into m-arg/timestamps/ and 'data/split audio/*.mp3' into m-arg/audio/; "
            f"the sentence files are also in https://github.com/{MARG_REPO} ('data/preprocessed full dataset/'), the "
            f"gold questions in https://github.com/{MARG_GOLD_REPO} (python/full_dataset_processing.csv)"
        ),
        license="BSD-style with attribution (c) 2021 University of Southampton; transcripts CC0 (Kaggle)",
        files=tuple(files),
    )


def _sciarg() -> CorpusSource:
    f = "sciarg"
    files = []
    for i in range(1, 41):
        for ext in ("ann", "txt"):
            path = f"compiled_corpus/A{i:02d}.{ext}"
            files.append(_file(f, path, SCIARG_ZIP, member=(path,), group="main" if i <= 32 else "test"))
    return CorpusSource(
        folder=f,
        corpus="sciarg",
        title="Sci-Arg: argument-annotated Dr. Inventor corpus (Lauscher, Glavaš & Ponzetto, ArgMining 2018)",
        by_hand=f"download {SCIARG_ZIP} and unzip it into sciarg/ (giving sciarg/compiled_corpus/A01.ann ...)",
        license="research use (Dr. Inventor corpus); MIT per the ArguminSci repository",
        files=tuple(files),
    )


def _contextdep() -> CorpusSource:
    f = "contextdep"

    def gh(name: str) -> str:
        return _raw(CONTEXTDEP_REPO, CONTEXTDEP_COMMIT, f"{CONTEXTDEP_DIR}/{name}")

    main = ("ANON_TRAIN_TOKEN-annotations.tsv", "ANON_DEV_TOKEN-annotations.tsv", "ANON_train.tsv", "ANON_dev.tsv")
    held_out = {
        "ANON_TEST_TOKEN-annotations.tsv": 148_805,
        "ANON_test.tsv": 574_192,
        "ANON_ALL_TOKEN-annotations.tsv": 1_048_135,
    }
    files = [_file(f, name, gh(name)) for name in main]
    files += [_file(f, name, gh(name), size=size, group="test") for name, size in held_out.items()]
    return CorpusSource(
        folder=f,
        corpus="contextdep",
        title="ContextDeP: context-dependent paraphrases in news interviews (Wegmann et al., EMNLP 2024)",
        by_hand=(
            "get the Hugging Face dataset https://huggingface.co/datasets/AnnaWegmann/Paraphrases-in-Interviews "
            f"(canonical release), or from https://github.com/{CONTEXTDEP_REPO} (commit {CONTEXTDEP_COMMIT}) copy "
            f"'{CONTEXTDEP_DIR}/ANON_*' into contextdep/"
        ),
        license="research-only licence (per the repository readme); texts from MediaSum (NPR/CNN)",
        files=tuple(files),
    )


def sources() -> dict[str, CorpusSource]:
    """Every corpus source by folder name."""
    return {s.folder: s for s in (_molweni(), _stac(), _dialam(), _marg(), _sciarg(), _contextdep())}


SOURCES: dict[str, CorpusSource] = sources()
ALIASES = {s.corpus: s.folder for s in SOURCES.values()}


# -- fetching -----------------------------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def urllib_download(url: str, target: Path, timeout: float) -> None:
    """Download ``url`` to ``target`` with urllib (http, https and file URLs).

    Raises:
        OSError: Any network failure (``urllib.error.URLError`` and timeouts are OSErrors).
    """
    request = urllib.request.Request(url, headers={"User-Agent": "argweb-fetch"})
    with urllib.request.urlopen(request, timeout=timeout) as response, open(target, "wb") as out:
        shutil.copyfileobj(response, out, 1 << 20)


def _check(path: Path, spec: RemoteFile, origin: str) -> bool:
    """Verify ``path`` against ``spec``; True when a sha256 was checked."""
    if spec.sha256 is not None:
        actual = sha256_file(path)
        if actual != spec.sha256:
            raise GraphStoreError(
                f"{origin}: sha256 {actual} does not match the expected {spec.sha256} of {spec.path} "
                "(corrupted or a different version)"
            )
        return True
    if spec.size is not None and path.stat().st_size != spec.size:
        raise GraphStoreError(f"{origin}: {path.stat().st_size} bytes, expected {spec.size} for {spec.path}")
    return False


def _is_current(path: Path, spec: RemoteFile) -> bool:
    if not path.is_file():
        return False
    if spec.sha256 is not None:
        return sha256_file(path) == spec.sha256
    return spec.size is None or path.stat().st_size == spec.size


def _place(tmp: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, target)


def _member(archive: Path, suffix: str, origin: str) -> zipfile.ZipInfo:
    try:
        with zipfile.ZipFile(archive) as zf:
            names = [i for i in zf.infolist() if not i.is_dir()]
    except zipfile.BadZipFile as e:
        raise GraphStoreError(f"{origin}: not a zip archive ({e})") from e
    matches = [i for i in names if i.filename == suffix or i.filename.endswith("/" + suffix)]
    if len(matches) != 1:
        what = "no member" if not matches else f"{len(matches)} members"
        raise GraphStoreError(f"{origin}: {what} ending in {suffix!r}")
    return matches[0]


class _Fetcher:
    def __init__(self, source: CorpusSource, dest: Path, downloader: Downloader, timeout: float, log: Log) -> None:
        self.source = source
        self.dest = dest
        self.downloader = downloader
        self.timeout = timeout
        self.log = log
        self.cache = dest / ".downloads"
        self.archives: dict[tuple[str, ...], Path] = {}

    def _download(self, url: str) -> Path:
        key = (url,)
        if key in self.archives:
            return self.archives[key]
        self.cache.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(url.encode()).hexdigest()[:16] + "-" + Path(urllib.parse.urlparse(url).path).name
        target = self.cache / name
        if not target.is_file():
            self.log(f"downloading {url}")
            partial = target.with_name(target.name + ".partial")
            try:
                self.downloader(url, partial, self.timeout)
            except (OSError, ValueError, urllib.error.URLError) as e:
                partial.unlink(missing_ok=True)
                raise GraphStoreError(self._by_hand(url, e)) from e
            os.replace(partial, target)
        self.archives[key] = target
        return target

    def _nested(self, url: str, members: tuple[str, ...]) -> Path:
        """Extract the member chain to a cached file and return it."""
        key = (url, *members)
        if key in self.archives:
            return self.archives[key]
        archive = self._download(url)
        for depth, suffix in enumerate(members):
            origin = f"{url} ({' > '.join(members[:depth]) or 'archive'})"
            info = _member(archive, suffix, origin)
            target = self.cache / (hashlib.sha256("\0".join(key[: depth + 2]).encode()).hexdigest()[:16] + ".member")
            if not target.is_file():
                with zipfile.ZipFile(archive) as zf, zf.open(info) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
            archive = target
        self.archives[key] = archive
        return archive

    def network(self, spec: RemoteFile, target: Path) -> bool:
        tmp = target.with_name(f".{target.name}.partial")
        target.parent.mkdir(parents=True, exist_ok=True)
        if spec.member:
            shutil.copyfile(self._nested(spec.url, spec.member), tmp)
        else:
            self.log(f"downloading {spec.url}")
            try:
                self.downloader(spec.url, tmp, self.timeout)
            except (OSError, ValueError, urllib.error.URLError) as e:
                tmp.unlink(missing_ok=True)
                raise GraphStoreError(self._by_hand(spec.url, e)) from e
        try:
            checked = _check(tmp, spec, spec.url)
        except GraphStoreError:
            tmp.unlink(missing_ok=True)
            raise
        _place(tmp, target)
        return checked

    def _by_hand(self, url: str, error: BaseException) -> str:
        s = self.source
        return (
            f"cannot download {url} ({type(error).__name__}: {error}). No network? Get {s.title} by hand: "
            f"{s.by_hand}. Then put the files under {self.dest}/{s.folder}/ (layout of shared/corpora) or run "
            f"'argweb fetch {s.folder} --from <dir with a {s.folder}/ folder>'."
        )


def fetch_corpus(
    name: str,
    dest: Path,
    from_dir: Path | None = None,
    groups: Sequence[str] = ("main",),
    timeout: float = 30.0,
    downloader: Downloader | None = None,
    log: Log | None = None,
    source: CorpusSource | None = None,
) -> FetchReport:
    """Fetch one corpus into ``dest/<folder>/`` and verify every file whose sum is known.

    Files already in place with the right sum are kept. With ``from_dir`` files are copied from
    ``from_dir/<folder>/...`` (a mirror laid out like ``shared/corpora``): a file with a known sum
    must be there, others are copied when present. Without it they are downloaded.

    Args:
        name: Corpus folder (``dialam-2024``) or graph corpus id (``qt30``).
        dest: Corpora directory to fill.
        from_dir: Local mirror to copy from instead of downloading.
        groups: File groups to fetch (``main``, ``test``, ``audio``).
        timeout: Seconds per network request.
        downloader: ``(url, target path, timeout)`` that raises OSError on network failure
            (default: urllib).
        log: Receives one line per download.
        source: Use this source description instead of the built-in one (tests, new mirrors).

    Raises:
        GraphStoreError: Unknown corpus or group, a file is missing from the mirror, a checksum
            or size does not match (the bad file is not kept), or a download failed (the message
            says where to get the files by hand).
    """
    if source is None:
        folder = ALIASES.get(name, name)
        if folder not in SOURCES:
            raise GraphStoreError(f"unknown corpus {name!r}; known: {', '.join(SOURCES)}")
        source = SOURCES[folder]
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise GraphStoreError(f"unknown file group(s) {unknown}; groups: {', '.join(GROUPS)}")
    fetcher = _Fetcher(source, Path(dest), downloader or urllib_download, timeout, log or (lambda _line: None))
    report = FetchReport(folder=source.folder)
    root = Path(dest) / source.folder
    for spec in source.files:
        if spec.group not in groups:
            continue
        target = root / spec.path
        if _is_current(target, spec):
            report.present += 1
            continue
        if from_dir is not None:
            src = Path(from_dir) / source.folder / spec.path
            if not src.is_file():
                if spec.sha256 is not None:
                    raise GraphStoreError(
                        f"{src}: missing from the mirror {from_dir} (expected {source.folder}/{spec.path})"
                    )
                report.skipped.append(spec.path)
                continue
            checked = _check(src, spec, str(src))
            tmp = target.with_name(f".{target.name}.partial")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, tmp)
            _place(tmp, target)
        else:
            checked = fetcher.network(spec, target)
        report.fetched += 1
        if checked:
            report.verified += 1
        else:
            report.unverified += 1
    return report


def write_manifest(corpora: Path, out: Path) -> int:
    """Regenerate :mod:`graphstore.fetch_manifest` from a reference corpora directory.

    Every file except ``PROVENANCE.md`` is listed with its sha256 and size. Returns the count.
    """
    rows = []
    for path in sorted(p for p in Path(corpora).rglob("*") if p.is_file() and p.name != "PROVENANCE.md"):
        rows.append(f"{sha256_file(path)} {path.stat().st_size} {path.relative_to(corpora).as_posix()}")
    header = (
        '"""sha256, size and path of every corpus file of the reference copy (``shared/corpora``).\n\n'
        "Generated by ``python -m graphstore.fetch <corpora dir>``; do not edit by hand.\n"
        '"""\n\nfrom __future__ import annotations\n\n'
    )
    parse = 'path: (sha, int(size)) for sha, size, path in (line.split(" ", 2) for line in TABLE.split("\\n") if line)'
    text = (
        header
        + 'TABLE = """\n'
        + "\n".join(rows)
        + '\n"""\n\nSHA256: dict[str, tuple[str, int]] = {\n    '
        + parse
        + "\n}\n"
    )
    out.write_text(text, encoding="utf-8")
    return len(rows)


if __name__ == "__main__":
    import sys

    count = write_manifest(Path(sys.argv[1]), Path(__file__).with_name("fetch_manifest.py"))
    print(f"{count} files")
