"""Bulk first load: corpus bundles -> importer CSV -> Neo4j's offline importer -> the same graph.

Batched ``UNWIND ... MERGE`` transactions (:class:`~graphstore.store.GraphStore`) are right for
incremental loads, but a large *empty* database fills an order of magnitude faster with Neo4j's
offline importer (``neo4j-admin database import full``). :class:`BulkLoader` writes the parsed
bundles in the importer's CSV format, stops the embedded server and starts it again with the
importer's arguments: the launcher runs the importer (from the project's own Maven-built jars,
``graphstore/java/target/lib``) in its JVM before the server starts on the imported store. Then
the same constraints and indexes are created.

The resulting graph is the one a transactional load of the same bundles leaves: same labels,
properties (types included: ``long``, ``double``, ``boolean``, ``string`` and their arrays), ids,
batch ids, corpus markers (``status: complete``, ``ingest_run``, ``counts``) and relationships,
with the same de-duplication ``MERGE`` applies (structural relationships are unique per type and
ends; AIF edges per type, ends and id). Only an empty embedded database is loaded this way; anything
else is refused, because the importer replaces the whole store.
"""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from graphstore import cypher
from graphstore.runtime import EmbeddedNeo4j, ServerInfo, connect, launcher_dir
from graphstore.store import GraphStore, edge_groups, node_groups, owner_gone, process_token, running
from ontology.errors import (
    ApiError,
    DatabaseUnavailableError,
    GraphStoreError,
    StoreNotEmptyError,
    WriteConflictError,
)
from ontology.progress import Say
from ontology.records import CorpusBundle
from ontology.terms import Label, RelType

# The Maven artifacts of `neo4j-admin database import full` (declared in graphstore/java/pom.xml).
IMPORTER_ARTIFACTS = ("neo4j-command-line", "neo4j-import-tool")
# Unit separator: no corpus text uses it, unlike ";" (the importer's default) in token lists.
ARRAY_DELIMITER = "\x1f"
# Rows formatted and written at a time: column-wise formatting without holding a whole file.
CSV_CHUNK = 20_000
BundleSource = CorpusBundle | Callable[[], CorpusBundle]
# A bulk load holds the write lease for as long as parsing takes; a killed one is seen at once (its
# process is gone), so the lease only bounds a holder on another machine.
BULK_LEASE_MS = 6 * 3600 * 1000


class _NotEmpty(Exception):
    """Raised inside the claim transaction to roll it back when the database holds data."""


@dataclass
class BulkReport:
    """What one bulk load wrote and where the time went (seconds per phase)."""

    corpora: list[str] = field(default_factory=list)
    nodes: int = 0
    edges: int = 0
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def items(self) -> int:
        """Nodes plus relationships."""
        return self.nodes + self.edges


# -- CSV -------------------------------------------------------------------------------------------


def _scalar_type(value: Any) -> str:
    # bool before int: bool is an int subclass.
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    raise GraphStoreError(f"bulk load: property value {value!r} of type {type(value).__name__} has no CSV type")


def csv_type(value: Any) -> str:
    """The importer header type of a property value (``string``, ``long[]``, ...)."""
    if isinstance(value, list | tuple):
        kinds = {_scalar_type(v) for v in value}
        if len(kinds) > 1:
            raise GraphStoreError(f"bulk load: list {value!r} mixes element types {sorted(kinds)}")
        # An empty list has no element type; Neo4j stores it as an empty string array.
        return f"{kinds.pop() if kinds else 'string'}[]"
    return _scalar_type(value)


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _scalar_cell(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # repr is the shortest text that parses back to the same double.
        return repr(value)
    return str(value)


def csv_cell(value: Any) -> str:
    """One CSV field: strings always quoted (so ``""`` stays an empty string), absent = empty."""
    if value is None:
        return ""
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, list | tuple):
        parts = [_scalar_cell(v) for v in value]
        if any(ARRAY_DELIMITER in p for p in parts):
            raise GraphStoreError("bulk load: a list element contains the array delimiter U+001F")
        return _quote(ARRAY_DELIMITER.join(parts))
    return _scalar_cell(value)


def csv_column(values: Sequence[Any], kind: str) -> list[str]:
    """The fields :func:`csv_cell` gives ``values``, all of importer type ``kind`` (or None).

    Formatted a column at a time, without a call per cell: per-cell calls were most of the CSV
    time of a bulk load.
    """
    if kind == "string":
        return ["" if v is None else '"' + v.replace('"', '""') + '"' for v in values]
    if kind == "long":
        return ["" if v is None else str(v) for v in values]
    if kind == "double":
        # repr is the shortest text that parses back to the same double.
        return ["" if v is None else repr(v) for v in values]
    if kind == "boolean":
        return ["" if v is None else "true" if v else "false" for v in values]
    return [csv_cell(v) for v in values]


def split_by_types(
    rows: Sequence[dict[str, Any]], skip: frozenset[str] = frozenset()
) -> list[tuple[dict[str, str], list[dict[str, Any]]]]:
    """Partition rows so that within a part every property key has one CSV type.

    A file has one header, hence one type per column; rows whose value types clash with the
    first part's (an ``int`` where others hold ``float``, say) go to a further part, so that every
    value is stored with the type a transactional write would give it.

    Args:
        rows: ``{"props": {...}, ...}`` rows.
        skip: Keys written in a column of their own (a node's ``id`` is its ``:ID`` column).

    Returns:
        ``(column types, rows)`` per part.
    """
    parts: list[tuple[dict[str, str], list[dict[str, Any]]]] = []
    # Rows of one group nearly all share their keys and value types: a (keys, Python types)
    # signature is placed once (a third of the CSV time went to typing every value). A signature
    # that fits a part fits it for good (parts only gain columns of types its rows agree with), so
    # its part is remembered. List element types are not in the signature: those rows go one by one.
    placed: dict[tuple[tuple[str, ...], tuple[type, ...]], int] = {}
    for row in rows:
        props = row["props"]
        signature = (tuple(props), tuple(map(type, props.values())))
        index = placed.get(signature)
        if index is not None:
            parts[index][1].append(row)
            continue
        types = {key: csv_type(value) for key, value in props.items() if key not in skip}
        for position, (columns, members) in enumerate(parts):
            if all(columns.get(key, kind) == kind for key, kind in types.items()):
                columns.update(types)
                members.append(row)
                index = position
                break
        else:
            index = len(parts)
            parts.append((dict(types), [row]))
        if list not in signature[1] and tuple not in signature[1]:
            placed[signature] = index
    return parts


@dataclass
class ImportFile:
    """One importer input: a CSV file and the labels or relationship type of its rows."""

    path: Path
    kind: str  # "nodes" or "relationships"
    tag: str  # "Label:Label" for nodes, the type for relationships
    rows: int
    multiline: bool

    def argument(self) -> str:
        """The importer command-line option for this file."""
        return f"--{self.kind}={self.tag}={self.path}"


class CsvWriter:
    """Writes bundles as importer CSV files into ``directory`` (one file per label set / type part).

    Args:
        directory: Where the CSV files go (created).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.files: list[ImportFile] = []
        # The importer cannot store an empty array (an empty field means "no property"): node ids
        # per property key whose value is [] are set through Cypher after the import.
        self.empty_lists: dict[str, list[str]] = {}
        self.digests: dict[str, str] = {}

    def _open(self, stem: str) -> tuple[Path, TextIO]:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{len(self.files):04d}-{stem}.csv"
        return path, open(path, "w", encoding="utf-8", newline="")

    def write_bundle(self, bundle: CorpusBundle, batch: str, validate: bool = True) -> dict[str, int]:
        """Validate ``bundle`` and write it with ingest run ``batch``; returns its counts.

        The rows and their properties are those :meth:`GraphStore.ingest` sends, including the
        corpus marker's ``status``, ``ingest_run`` and ``counts`` as a completed load leaves them.

        Args:
            bundle: The parsed corpus.
            batch: Its ingest run id.
            validate: False when the caller has just validated ``bundle`` itself.

        Raises:
            LoaderError: The bundle is inconsistent (nothing of it written).
        """
        if validate:
            bundle.validate()
        counts = bundle.counts()
        corpus = bundle.corpus.id
        marker = {"batch": batch, "status": "complete", "ingest_run": batch, "counts": json.dumps(counts)}
        # Recorded only once the store is complete (schema and empty lists): a bulk load that
        # stops before leaves no digest, so the next main job reads the corpora again.
        if bundle.input_digest is not None:
            self.digests[corpus] = bundle.input_digest
        for labels, rows in node_groups(bundle.nodes).items():
            for row in rows:
                for key in [k for k, v in row["props"].items() if isinstance(v, list) and not v]:
                    del row["props"][key]
                    self.empty_lists.setdefault(key, []).append(row["id"])
                row["props"]["batch"] = batch
                if row["id"] == corpus and Label.Corpus in labels:
                    row["props"].update(marker)
            for columns, part in split_by_types(rows, skip=frozenset({"id"})):
                self._write_nodes(labels, columns, part)
        for rel_type, rows in edge_groups(bundle.edges).items():
            # MERGE keeps one relationship per type and ends and the last SET wins: do the same.
            unique: dict[tuple[str, str], dict[str, Any]] = {}
            for row in rows:
                unique[(row["source"], row["target"])] = row
            for row in unique.values():
                row["props"]["batch"] = batch
            for columns, part in split_by_types(list(unique.values())):
                self._write_edges(rel_type, columns, part)
        return counts

    def _write_nodes(self, labels: Sequence[Label], columns: dict[str, str], rows: list[dict[str, Any]]) -> None:
        keys = sorted(columns)
        path, multiline = self._write(
            "nodes-" + labels[0].value,
            ["id:ID", *(f"{key}:{columns[key]}" for key in keys)],
            [("id", "string")],
            [(key, columns[key]) for key in keys],
            rows,
        )
        tag = ":".join(label.value for label in labels)
        self.files.append(ImportFile(path, "nodes", tag, len(rows), multiline))

    def _write_edges(self, rel_type: RelType, columns: dict[str, str], rows: list[dict[str, Any]]) -> None:
        keys = sorted(columns)
        path, multiline = self._write(
            "rels-" + rel_type.value,
            [":START_ID", ":END_ID", *(f"{key}:{columns[key]}" for key in keys)],
            [("source", "string"), ("target", "string")],
            [(key, columns[key]) for key in keys],
            rows,
        )
        self.files.append(ImportFile(path, "relationships", rel_type.value, len(rows), multiline))

    def _write(
        self,
        stem: str,
        header: list[str],
        ends: list[tuple[str, str]],
        props: list[tuple[str, str]],
        rows: list[dict[str, Any]],
    ) -> tuple[Path, bool]:
        """Write one file: ``ends`` are row fields, ``props`` property keys, each with its CSV type.

        Returns:
            The file and whether a field holds a line break (the importer must then be told).
        """
        path, fh = self._open(stem)
        multiline = False
        with fh:
            fh.write(",".join(header) + "\n")
            for start in range(0, len(rows), CSV_CHUNK):
                chunk = rows[start : start + CSV_CHUNK]
                cells = [csv_column([row[field] for row in chunk], kind) for field, kind in ends]
                cells += [csv_column([row["props"].get(key) for row in chunk], kind) for key, kind in props]
                text = "\n".join(map(",".join, zip(*cells, strict=True))) + "\n"
                # Only quoted text can hold a line break: any beyond one per row is inside a field.
                multiline = multiline or "\r" in text or text.count("\n") != len(chunk)
                fh.write(text)
        return path, multiline


# -- importer --------------------------------------------------------------------------------------


def check_importer(java_dir: Path) -> None:
    """Refuse before anything is stopped when the launcher was built without the importer's jars.

    Raises:
        GraphStoreError: A jar of the importer is missing from ``java_dir``'s build.
    """
    lib = java_dir / "target" / "lib"
    for artifact in IMPORTER_ARTIFACTS:
        if not any(lib.glob(f"{artifact}-*.jar")):
            raise GraphStoreError(f"{artifact} is not in {lib}; rebuild the launcher (graphstore/java, `mvn package`)")


def import_arguments(
    files: Sequence[ImportFile],
    database: str,
    threads: int | None = None,
    max_off_heap: str = "2G",
    report_file: Path | None = None,
) -> list[str]:
    """The ``neo4j-admin`` arguments (``database import full ...``) that import ``files``.

    The launcher runs them in its own JVM before the server starts (``--import-args``).
    """
    # The database name goes first: the file options take several values and would swallow it.
    args = ["database", "import", "full", database]
    args += [
        "--overwrite-destination=true",
        "--id-type=string",
        "--array-delimiter=U+001F",
        f"--max-off-heap-memory={max_off_heap}",
        "--skip-bad-relationships=false",
        "--skip-duplicate-nodes=false",
        "--strict=true",
    ]
    if threads:
        args.append(f"--threads={threads}")
    if report_file is not None:
        args.append(f"--report-file={report_file}")
    multiline = [str(f.path) for f in files if f.multiline]
    if multiline:
        args += ["--multiline-fields-format=v2", f"--multiline-fields={','.join(multiline)}"]
    args += [f.argument() for f in files if f.rows]
    if any("\n" in arg or "\r" in arg for arg in args):
        raise GraphStoreError("bulk load: an importer argument (a CSV path) contains a line break")
    return args


_IMPORT_DONE = re.compile(rb"argweb-neo4j import exit (-?\d+) after (\d+) ms")


def import_outcome(log: bytes) -> tuple[int, float] | None:
    """The importer's exit status and seconds from a launcher log, or None if it did not finish."""
    match = _IMPORT_DONE.search(log)
    return (int(match.group(1)), int(match.group(2)) / 1000) if match else None


# -- the load --------------------------------------------------------------------------------------


@dataclass(eq=False)
class BulkLoader:
    """Bulk first load of an empty embedded database.

    Args:
        server: The embedded server whose database is loaded (started if needed, restarted after).
        database: Database name.
        work_dir: Where the CSV files go (a temporary directory by default; removed afterwards).
        threads: Importer worker threads (default: the JVM's processor count).
        max_off_heap: Importer off-heap memory cap (the machine may be shared).
        start_timeout: Seconds to wait for the server to answer after a (re)start; the first start
            on a freshly imported store can take longer than a routine one.
    """

    server: EmbeddedNeo4j
    database: str = "neo4j"
    work_dir: Path | None = None
    threads: int | None = None
    max_off_heap: str = "2G"
    start_timeout: float = 600.0

    def _store(self, info: ServerInfo | None = None) -> tuple[GraphStore, Any]:
        info = info or self.server.start(timeout=self.start_timeout)
        driver = connect(info.uri, self.server.user, self.server.password)
        return GraphStore(driver, self.database), driver

    def claim(self, run: str) -> None:
        """Take the write lease for bulk load ``run``, refused unless the database holds no node.

        The lease and the emptiness check are one transaction that locks the lease node first: a
        write run that took its turn before is seen (its corpus marker is a node), and every write
        run after waits for, or is refused by, the lease until the importer has replaced the store
        (:func:`graphstore.store.take_write_turn`). Called again with the same ``run`` it renews the
        lease and checks once more.

        Raises:
            StoreNotEmptyError: The database has data (use the transactional ``ingest`` instead).
            WriteConflictError: Another bulk load holds the lease.
        """
        store, driver = self._store()
        stale = ""
        try:
            while True:

                def work(tx: Any, stale: str = stale) -> dict[str, Any]:
                    row = tx.run(
                        cypher.claim_bulk(),
                        run=run,
                        owner=process_token(),
                        ttl=BULK_LEASE_MS,
                        stale=stale,
                        what=f"a bulk load of {self.server.data_dir}",
                    ).single()
                    assert row is not None
                    claim = row.data()
                    if not claim["held"]:
                        found = tx.run(cypher.graph_has_nodes()).single()
                        claim["found"] = bool(found and found["found"])
                        if claim["found"]:
                            # Roll the claim back: a bulk load of a database with data is refused.
                            raise _NotEmpty
                    return claim

                try:
                    claim = store.transaction(work)
                except _NotEmpty:
                    raise StoreNotEmptyError(
                        f"bulk load refused: database {self.database!r} of {self.server.data_dir} is not empty; "
                        "the offline importer replaces the whole store. Load into an empty database, or ingest "
                        "without --bulk (transactional, merges into the existing graph)."
                    ) from None
                if not claim["held"]:
                    return
                if owner_gone(claim["owner"], claim["run"]):
                    stale = claim["run"]
                    continue
                raise WriteConflictError(
                    f"bulk load refused: another bulk load ({claim['owner']}) holds the store of {self.server.data_dir}"
                )
        finally:
            driver.close()

    def release(self, run: str) -> None:
        """Drop the lease of bulk load ``run`` if the server runs (a failed load; best effort)."""
        info = self.server.info()
        if info is None:
            return
        with contextlib.suppress(GraphStoreError):
            store, driver = self._store(info)
            try:
                store.run(cypher.release_bulk(), run=run)
            finally:
                driver.close()

    def load(self, bundles: Iterable[BundleSource], progress: Say | None = None) -> BulkReport:
        """Load ``bundles`` (or callables returning them, parsed one at a time) into the empty database.

        Each bundle gets its own ingest run id, as one transactional ingest per corpus would.

        Raises:
            StoreNotEmptyError: The database is not empty (or stopped being empty while the files
                were parsed: a write that did not wait for the lease).
            WriteConflictError: Another bulk load holds the store.
            LoaderError: A bundle is inconsistent (the database is left as it was).
            GraphStoreError: The importer or the server failed.
        """
        say = progress or (lambda _msg: None)
        report = BulkReport()
        started = time.perf_counter()
        run = uuid.uuid4().hex
        with running(run):
            self.claim(run)
            report.phases["check"] = time.perf_counter() - started
            try:
                self._load(run, bundles, say, report)
            except BaseException:
                self.release(run)
                raise
        report.seconds = time.perf_counter() - started
        return report

    def _load(self, run: str, bundles: Iterable[BundleSource], say: Say, report: BulkReport) -> None:
        """:meth:`load` once the lease is held."""
        # Absolute paths: the importer runs in the server's data directory, not in the caller's.
        work_dir = None if self.work_dir is None else Path(self.work_dir).absolute()
        with tempfile.TemporaryDirectory(prefix="argweb-bulk-", dir=work_dir) as tmp:
            writer = CsvWriter(Path(tmp) / "csv")
            t = time.perf_counter()
            parse_s = validate_s = 0.0
            corpora: set[str] = set()
            for source in bundles:
                p = time.perf_counter()
                bundle = source() if callable(source) else source
                parse_s += time.perf_counter() - p
                if bundle.corpus.id in corpora:
                    raise ApiError(f"bulk load: corpus {bundle.corpus.id!r} given twice")
                corpora.add(bundle.corpus.id)
                # Timed apart, as parsing is: a transactional ingest validates before its clock starts.
                v = time.perf_counter()
                bundle.validate()
                validate_s += time.perf_counter() - v
                counts = writer.write_bundle(bundle, uuid.uuid4().hex, validate=False)
                report.corpora.append(bundle.corpus.id)
                report.counts[bundle.corpus.id] = counts
                say(f"{bundle.corpus.id}: {len(bundle.nodes)} nodes, {len(bundle.edges)} relationships written as CSV")
                del bundle
            report.phases["parse"] = parse_s
            report.phases["validate"] = validate_s
            report.phases["csv"] = time.perf_counter() - t - parse_s - validate_s
            report.nodes = sum(f.rows for f in writer.files if f.kind == "nodes")
            report.edges = sum(f.rows for f in writer.files if f.kind == "relationships")

            t = time.perf_counter()
            check_importer(launcher_dir(self.server.java_dir))
            # Nothing may have been written while the files were parsed (every write run waited
            # for the lease); checked once more just before the store is replaced.
            self.claim(run)
            with self.server.exclusive():
                self.server.stop()
                report.phases["stop"] = time.perf_counter() - t
                self._import(writer, tmp, say, report)

    def _import(self, writer: CsvWriter, tmp: str, say: Say, report: BulkReport) -> None:
        """Run the importer on the stopped server's store, start it and create the schema."""
        args_file = Path(tmp) / "import.args"
        args = import_arguments(
            writer.files,
            self.database,
            threads=self.threads,
            max_off_heap=self.max_off_heap,
            report_file=Path(tmp) / "import.report",
        )
        args_file.write_text("\n".join(args) + "\n", encoding="utf-8")
        say(f"importing {report.nodes} nodes and {report.edges} relationships")
        t = time.perf_counter()
        try:
            # One JVM imports and then serves: the import runs in the launcher before the
            # server starts on the imported store.
            info = self.server.start(timeout=self.start_timeout, import_args=args_file)
        except DatabaseUnavailableError as e:
            log = self.server.log_file.read_bytes() if self.server.log_file.exists() else b""
            outcome = import_outcome(log)
            if outcome is None or outcome[0] == 0:
                raise
            # The server is back (on whatever the failed import left) for the caller to look at.
            with contextlib.suppress(DatabaseUnavailableError):
                self.server.start(timeout=self.start_timeout)
            tail = log.decode(errors="replace")[-4000:]
            raise GraphStoreError(f"Neo4j importer exited with {outcome[0]}:\n{tail}") from e
        restart_s = time.perf_counter() - t
        outcome = import_outcome(self.server.log_file.read_bytes())
        report.phases["import"] = outcome[1] if outcome else 0.0
        report.phases["start"] = restart_s - report.phases["import"]
        store, driver = self._store(info)
        try:
            t = time.perf_counter()
            store.ensure_schema()
            report.phases["schema"] = time.perf_counter() - t
            t = time.perf_counter()
            for key, ids in writer.empty_lists.items():
                for start in range(0, len(ids), 10_000):
                    store.run(cypher.set_empty_list(key), ids=ids[start : start + 10_000])
            report.phases["empty_lists"] = time.perf_counter() - t
            if writer.digests:
                rows = [{"corpus": corpus, "digest": digest} for corpus, digest in writer.digests.items()]
                store.run(cypher.set_input_digests(), rows=rows)
        finally:
            driver.close()
