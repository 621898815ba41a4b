"""Fetch the corpora from their official sources, or copy them from a local mirror, and verify them.

A corpora directory is laid out like ``shared/corpora``: one folder per corpus (``molweni/DP/*.json``,
``stac/*.json``, ``dialam-2024/my_train/*.json``, ``m-arg/*.csv``, ``sciarg/compiled_corpus/*``,
``contextdep/*.tsv``). Where every file of that layout is published (GitHub raw files at the
commits pinned in each corpus's ``PROVENANCE.md``, the Zenodo record of M-Arg, the Sci-Arg zip)
and its sha256 where known is data: ``graphstore/data/fetch_registry.json``, regenerated from a
reference copy with ``python -m graphstore.fetch <corpora dir>``. Files whose sum is unknown are
checked for their documented size, if any, and otherwise only taken as they come.

Downloading, sha256 checking, retries, archive extraction, the download cache and progress bars
are `pooch <https://www.fatiando.org/pooch>`_'s: every corpus folder is a pooch data store whose
registry is the corpus's files, archives are cached under ``<dest>/.downloads`` and members are
extracted with :class:`pooch.Unzip`. A local mirror (``--from DIR``, laid out like
``shared/corpora``) is the same registry with its URLs mapped to ``file://`` URLs of the mirror.

Files belong to groups: ``main`` (what the loaders read), ``test`` (official test splits and
held-out documents, which the reference copy leaves out on purpose) and ``audio`` (the M-Arg debate
recordings, large). :func:`fetch_corpus` fetches ``main`` unless told otherwise.

Without network access and without a mirror, fetching fails with a :class:`GraphStoreError` that
says where to get the files by hand.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ontology.errors import GraphStoreError

# A pooch downloader: ``(url, output_file, pooch) -> None``; raises OSError on network failure.
Downloader = Callable[[str, str, Any], None]
Log = Callable[[str], None]
GROUPS = ("main", "test", "audio")
REGISTRY = "fetch_registry.json"


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


# -- the registry (data file inside the package) --------------------------------------------------------


def registry_path() -> Path:
    """The registry data file shipped in the package."""
    return Path(str(resources.files("graphstore") / "data" / REGISTRY))


def _source(entry: dict[str, Any]) -> CorpusSource:
    files = tuple(
        RemoteFile(
            path=f["path"],
            url=f["url"],
            sha256=f.get("sha256"),
            size=f.get("size"),
            member=tuple(f.get("member", ())),
            group=f.get("group", "main"),
        )
        for f in entry["files"]
    )
    return CorpusSource(entry["folder"], entry["corpus"], entry["title"], entry["by_hand"], entry["license"], files)


@lru_cache(maxsize=4)
def load_registry(path: Path | None = None) -> dict[str, CorpusSource]:
    """Every corpus source by folder name, read from the registry file (cached).

    Raises:
        GraphStoreError: The file is missing or malformed.
    """
    path = path or registry_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {s.folder: s for s in (_source(e) for e in data["corpora"])}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise GraphStoreError(f"{path}: not a valid fetch registry ({type(e).__name__}: {e})") from e


def sources() -> dict[str, CorpusSource]:
    """Every corpus source by folder name."""
    return dict(load_registry())


SOURCES: dict[str, CorpusSource] = sources()
ALIASES = {s.corpus: s.folder for s in SOURCES.values()}


# -- downloading through pooch ---------------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file."""
    import pooch

    return str(pooch.file_hash(str(path), alg="sha256"))


def file_download(url: str, output_file: str, pooch_obj: Any = None) -> None:
    """Copy a ``file://`` URL (a local mirror) to ``output_file``; a pooch downloader.

    Raises:
        FileNotFoundError: The mirror has no such file.
    """
    source = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
    shutil.copyfile(source, output_file)


class PoochDownloader:
    """Pick pooch's HTTP/FTP downloader by URL (with a timeout and progress bar), or copy ``file://``.

    Args:
        timeout: Seconds per network request.
        progress: Show pooch's progress bars (tqdm) on stderr.
    """

    def __init__(self, timeout: float = 30.0, progress: bool = False) -> None:
        self.timeout = timeout
        self.progress = progress

    def __call__(self, url: str, output_file: str, pooch_obj: Any) -> None:
        import pooch

        if url.startswith("file:"):
            file_download(url, output_file, pooch_obj)
            return
        if url.startswith(("http://", "https://")):
            downloader = pooch.HTTPDownloader(
                progressbar=self.progress, timeout=self.timeout, headers={"User-Agent": "argweb-fetch"}
            )
        else:
            downloader = pooch.choose_downloader(url, progressbar=self.progress)
        downloader(url, output_file, pooch_obj)


def _size_ok(path: Path, spec: RemoteFile) -> bool:
    return spec.size is None or path.stat().st_size == spec.size


def _is_current(path: Path, spec: RemoteFile) -> bool:
    if not path.is_file():
        return False
    if spec.sha256 is not None:
        return sha256_file(path) == spec.sha256
    return _size_ok(path, spec)


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
    if not _size_ok(path, spec):
        raise GraphStoreError(f"{origin}: {path.stat().st_size} bytes, expected {spec.size} for {spec.path}")
    return False


def _member_name(archive: Path, suffix: str, origin: str) -> str:
    """The one member of ``archive`` whose name is ``suffix`` or ends in ``/suffix``."""
    try:
        with zipfile.ZipFile(archive) as zf:
            names = [i.filename for i in zf.infolist() if not i.is_dir()]
    except zipfile.BadZipFile as e:
        raise GraphStoreError(f"{origin}: not a zip archive ({e})") from e
    matches = [n for n in names if n == suffix or n.endswith("/" + suffix)]
    if len(matches) != 1:
        what = "no member" if not matches else f"{len(matches)} members"
        raise GraphStoreError(f"{origin}: {what} ending in {suffix!r}")
    return matches[0]


class _Fetcher:
    """The pooch stores of one corpus: its folder (direct files) and the archive cache."""

    def __init__(
        self, source: CorpusSource, dest: Path, downloader: Downloader, retries: int, progress: bool, log: Log
    ) -> None:
        self.source = source
        self.dest = dest
        self.root = dest / source.folder
        self.downloader = downloader
        self.retries = retries
        self.progress = progress
        self.log = log
        self.cache = dest / ".downloads"

    def _store(self, path: Path, registry: dict[str, str | None], urls: dict[str, str]) -> Any:
        import pooch

        # Pooch reports each download on its logger; argweb reports through ``log`` instead.
        pooch.get_logger().setLevel("WARNING")
        return pooch.create(
            path=path, base_url="", registry=registry, urls=urls, retry_if_failed=self.retries, allow_updates=True
        )

    def _fetch(self, store: Any, name: str, url: str, **kwargs: Any) -> Any:
        if not url.startswith("file:"):
            self.log(f"downloading {url}")
        try:
            return store.fetch(name, downloader=self.downloader, progressbar=self.progress, **kwargs)
        except ValueError as e:
            if "hash" in str(e).lower():
                raise GraphStoreError(f"{url}: {e}") from e
            raise GraphStoreError(self._by_hand(url, e)) from e
        except OSError as e:
            raise GraphStoreError(self._by_hand(url, e)) from e

    def direct(self, spec: RemoteFile, url: str) -> bool:
        """Download (or copy) one file into the corpus folder through pooch; True when its sha256 was checked."""
        target = self.root / spec.path
        if target.exists() and not _is_current(target, spec):
            target.unlink()  # a stale or corrupt copy: fetch it afresh
        known = f"sha256:{spec.sha256}" if spec.sha256 else None
        store = self._store(self.root, {spec.path: known}, {spec.path: url})
        self._fetch(store, spec.path, url)
        try:
            return _check(target, spec, url)
        except GraphStoreError:
            target.unlink(missing_ok=True)
            raise

    def archived(self, spec: RemoteFile) -> bool:
        """Extract one archive member (through nested archives) into the corpus folder."""
        import pooch

        name = (
            hashlib.sha256(spec.url.encode()).hexdigest()[:16] + "-" + Path(urllib.parse.urlparse(spec.url).path).name
        )
        store = self._store(self.cache, {name: None}, {name: spec.url})
        archive = Path(self._fetch(store, name, spec.url))
        for depth, suffix in enumerate(spec.member):
            origin = f"{spec.url} ({' > '.join(spec.member[:depth]) or 'archive'})"
            member = _member_name(archive, suffix, origin)
            unzip = pooch.Unzip(members=[member], extract_dir=archive.name + ".unzip")
            (extracted,) = (Path(p) for p in unzip(str(archive), "fetch", None) if Path(p).as_posix().endswith(member))
            archive = extracted
        target = self.root / spec.path
        tmp = target.with_name(f".{target.name}.partial")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(archive, tmp)
        try:
            checked = _check(tmp, spec, spec.url)
        except GraphStoreError:
            tmp.unlink(missing_ok=True)
            raise
        tmp.replace(target)
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
    retries: int = 2,
    progress: bool = False,
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
        downloader: A pooch downloader ``(url, output file, pooch)`` (default: pooch's, by URL
            scheme, plus ``file://``).
        log: Receives one line per file fetched.
        source: Use this source description instead of the registry's (tests, new mirrors).
        retries: Extra attempts per download after a failure or a bad checksum (pooch).
        progress: Show download progress bars.

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
    fetcher = _Fetcher(
        source,
        Path(dest),
        downloader or PoochDownloader(timeout, progress),
        retries,
        progress,
        log or (lambda _line: None),
    )
    report = FetchReport(folder=source.folder)
    for spec in source.files:
        if spec.group not in groups:
            continue
        if _is_current(fetcher.root / spec.path, spec):
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
            _check(src, spec, str(src))  # name the mirror's file, not a URL, when it is bad
            checked = fetcher.direct(spec, src.resolve().as_uri())
        elif spec.member:
            checked = fetcher.archived(spec)
        else:
            checked = fetcher.direct(spec, spec.url)
        report.fetched += 1
        if checked:
            report.verified += 1
        else:
            report.unverified += 1
    return report


def write_registry(corpora: Path, out: Path | None = None) -> int:
    """Refresh the sums and sizes of the registry from a reference corpora directory.

    Every registry file present under ``corpora/<folder>/<path>`` gets its sha256 and size; the
    others keep theirs. Returns the number of files updated.
    """
    out = out or registry_path()
    data = json.loads(out.read_text(encoding="utf-8"))
    updated = 0
    for entry in data["corpora"]:
        for f in entry["files"]:
            path = Path(corpora) / entry["folder"] / f["path"]
            if path.is_file():
                f["sha256"], f["size"] = sha256_file(path), path.stat().st_size
                updated += 1
    blocks = []
    for entry in data["corpora"]:
        head = ",\n".join(
            f"      {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in entry.items() if k != "files"
        )
        files = ",\n".join("        " + json.dumps(f, ensure_ascii=False) for f in entry["files"])
        blocks.append("    {\n" + head + ',\n      "files": [\n' + files + "\n      ]\n    }")
    out.write_text('{\n  "format": 1,\n  "corpora": [\n' + ",\n".join(blocks) + "\n  ]\n}\n", encoding="utf-8")
    load_registry.cache_clear()
    return updated


if __name__ == "__main__":
    import sys

    print(f"{write_registry(Path(sys.argv[1]))} files")
