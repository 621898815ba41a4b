"""Client queries: read-only Cypher and SPARQL under a time limit, results streamed.

Shared by the ``/cypher`` and ``/sparql`` routes and ``argweb sparql``.

* Cypher runs through :class:`~graphstore.readonly.ReadRunner`: the parameters and an ``EXPLAIN``
  check first, then a READ-mode transaction with a server-side timeout and a row limit, which a
  watchdog ends if it outlives the limit; the database refuses any write that slips past the check.
* SPARQL runs in a child process (:mod:`api.services.sparql_worker`) killed at the deadline and
  capped in memory, because Oxigraph cannot interrupt a query; updates are refused, and
  ``SERVICE`` clauses (outbound requests on a client's behalf) are refused unless allowed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neo4j import Driver

from api.services.result_stream import ABANDONED, ResultStream, Slot
from api.services.sparql_remote import RemoteReader, RemoteStore
from api.settings import Settings
from graphstore.readonly import CypherStream, ReadRunner
from ontology.competency import CQ_DIR, CompetencyQuestion, load_questions
from ontology.errors import (
    ApiError,
    ArgwebError,
    BusyError,
    DatabaseUnavailableError,
    NotFoundError,
    QueryLimitError,
    QueryRefusedError,
)
from ontology.sparql import is_update, query_form

MAX_QUERY_CHARS = 100_000
CHUNK = 64 * 1024

# -- competency questions --------------------------------------------------------------------------


def competency_questions() -> list[CompetencyQuestion]:
    """The competency questions (``ontology/cq``, package data), each in Cypher and SPARQL, by name.

    Raises:
        NotFoundError: The installation lacks ``ontology/cq`` (a broken install).
    """
    if not CQ_DIR.is_dir():
        raise NotFoundError(f"no competency questions here: {CQ_DIR} is missing (reinstall argweb)")
    return load_questions(CQ_DIR)


# -- Cypher ----------------------------------------------------------------------------------------


def cypher_stream(
    driver: Driver,
    database: str,
    query: str,
    parameters: dict[str, Any],
    timeout: float,
    row_limit: int,
    max_running: int | None = None,
) -> CypherStream:
    """Check and start a client Cypher query; see :meth:`ReadRunner.stream` for the items.

    The caller closes the stream (:meth:`CypherStream.close`) if it does not iterate it to the end.
    With ``max_running``, at most that many queries (across threads of this process) are checked or
    running at once, each from its check until its stream is closed; one more is refused at once
    instead of queueing, so slow queries cannot take every worker thread of the API.

    Raises:
        ApiError: Empty or oversized query, invalid syntax, or a parameter the driver cannot send.
        QueryRefusedError: Not a plain read.
        QueryLimitError, DatabaseUnavailableError: From the database.
        BusyError: ``max_running`` queries are already running (503).
    """
    _check_size(query, "Cypher")
    slot = CYPHER_POOL.take(max_running) if max_running else None
    try:
        runner = ReadRunner(driver, database, timeout)
        runner.check(query)
        stream = runner.stream(query, parameters, row_limit)
    except BaseException:
        if slot is not None:
            slot.release()
        raise
    if slot is not None:
        stream.on_close.append(slot.release)  # a place is given back once, however often closed
        if stream.closed:  # closed before the hook was there: release it here
            slot.release()
    return stream


def _check_size(query: str, language: str) -> None:
    if not query.strip():
        raise ApiError(f"the {language} query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise ApiError(f"the {language} query is longer than {MAX_QUERY_CHARS} characters")


def cypher_json(items: Iterable[tuple[str, Any]]) -> Iterator[bytes]:
    """Serialise :func:`cypher_stream` items as one JSON document, written as rows arrive.

    ``{"columns": [...], "rows": [[...], ...], "truncated": bool, "row_count": n}``; when the query
    fails after the first row was sent, the document ends with an ``"error"`` member instead.
    """
    first = True
    buffer: list[bytes] = []
    size = 0
    try:
        for kind, value in items:
            if kind == "columns":
                buffer.append(b'{"columns":' + json.dumps(value).encode() + b',"rows":[')
            elif kind == "row":
                piece = (b"" if first else b",") + json.dumps(value, default=str).encode()
                buffer.append(piece)
                size += len(piece)
                first = False
                if size >= CHUNK:
                    # Rows go out in chunks: one write per row would cost a thread hop each.
                    yield b"".join(buffer)
                    buffer, size = [], 0
            else:
                buffer.append(b'],"truncated":' + json.dumps(value["truncated"]).encode())
                buffer.append(b',"row_count":' + str(value["rows"]).encode() + b"}")
    except (ApiError, DatabaseUnavailableError) as e:
        buffer.append(b'],"truncated":true,"error":' + json.dumps(str(e)).encode() + b"}")
    yield b"".join(buffer)


# -- SPARQL ----------------------------------------------------------------------------------------

# Strings, IRIs and comments, which may contain anything; what is left is SPARQL syntax.
_LEXEMES = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|'(?:[^'\\\n]|\\.)*'"
    r"|<[^<>\"{}|^`\\\s]*>"
    r"|#[^\n]*",
    re.DOTALL,
)
_SERVICE = re.compile(r"(?<![\w:?$])SERVICE\b", re.IGNORECASE)

RESULT_MEDIA = {
    "json": "application/sparql-results+json",
    "csv": "text/csv; charset=utf-8",
    "tsv": "text/tab-separated-values; charset=utf-8",
    "xml": "application/sparql-results+xml",
}
GRAPH_MEDIA = {
    "ttl": "text/turtle; charset=utf-8",
    "nt": "application/n-triples",
    "jsonld": "application/ld+json",
}
_ACCEPT_RESULTS = {
    "application/sparql-results+json": "json",
    "application/json": "json",
    "text/csv": "csv",
    "text/tab-separated-values": "tsv",
    "application/sparql-results+xml": "xml",
    "application/xml": "xml",
}
_ACCEPT_GRAPH = {
    "text/turtle": "ttl",
    "application/x-turtle": "ttl",
    "application/n-triples": "nt",
    "text/plain": "nt",
    "application/ld+json": "jsonld",
    "application/json": "jsonld",
}


def syntax_only(query: str) -> str:
    """``query`` with strings, IRIs and comments blanked out."""
    return _LEXEMES.sub(" ", query)


def check_sparql(query: str, allow_service: bool = False) -> str:
    """The form (``SELECT``, ``ASK``, ``CONSTRUCT``, ``DESCRIBE``) of a query a client may run.

    Raises:
        ApiError: Empty or oversized, or not a query.
        QueryRefusedError: An update, a ``SERVICE`` clause (unless allowed), or codepoint escapes
            outside literals (which could spell a keyword the check cannot see).
    """
    _check_size(query, "SPARQL")
    if is_update(query):
        raise QueryRefusedError(f"SPARQL {query_form(query)} refused: the endpoint is read-only")
    syntax = syntax_only(query)
    if "\\" in syntax:
        raise QueryRefusedError("SPARQL refused: codepoint escapes are only accepted inside literals and IRIs")
    if not allow_service and _SERVICE.search(syntax):
        raise QueryRefusedError("SPARQL SERVICE refused: federated queries are disabled on this endpoint")
    form = query_form(query)
    if form not in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE"):
        raise ApiError(f"not a SPARQL query (starts with {form or 'nothing'!r})")
    return form


def _accepted(accept: str | None) -> list[str]:
    ranked = []
    for i, part in enumerate((accept or "").split(",")):
        media, *params = (p.strip() for p in part.split(";"))
        q = 1.0
        for p in params:
            if p.startswith("q="):
                try:
                    q = float(p[2:])
                except ValueError:
                    q = 0.0
        if media:
            ranked.append((-q, i, media.lower()))
    return [m for _, _, m in sorted(ranked)]


# Names clients put in a ``format`` / ``output`` parameter (SPARQLWrapper, Fuseki, Virtuoso).
_FORMAT_ALIASES = {
    "json": ("json", "jsonld"),
    "application/sparql-results+json": ("json", None),
    "csv": ("csv", None),
    "tsv": ("tsv", None),
    "xml": ("xml", None),
    "ttl": (None, "ttl"),
    "turtle": (None, "ttl"),
    "n3": (None, "ttl"),
    "nt": (None, "nt"),
    "ntriples": (None, "nt"),
    "n-triples": (None, "nt"),
    "jsonld": (None, "jsonld"),
    "json-ld": (None, "jsonld"),
}


def negotiate(form: str, accept: str | None, fmt: str | None = None, strict: bool = True) -> str:
    """The result format for a query form from an explicit ``fmt`` or the ``Accept`` header.

    SELECT/ASK default to SPARQL JSON, CONSTRUCT/DESCRIBE to Turtle. ``fmt`` may be any name of
    :data:`_FORMAT_ALIASES` (``turtle``, ``json-ld`` ...); with ``strict`` off, a name that does not
    fit the form is ignored and ``Accept`` decides (clients send one ``format`` for every query).

    Raises:
        ApiError: With ``strict``, ``fmt`` does not fit the form.
    """
    graph = form in ("CONSTRUCT", "DESCRIBE")
    table = _ACCEPT_GRAPH if graph else _ACCEPT_RESULTS
    allowed = GRAPH_MEDIA if graph else RESULT_MEDIA
    if fmt is not None:
        results_name, graph_name = _FORMAT_ALIASES.get(fmt.strip().lower(), (None, None))
        chosen = graph_name if graph else results_name
        if chosen is not None:
            return chosen
        if strict:
            raise ApiError(f"format {fmt!r} does not fit a {form} query; use one of {', '.join(allowed)}")
    for media in _accepted(accept):
        if media in table:
            return table[media]
        if media in ("*/*", "application/*", "text/*"):
            break
    return "ttl" if graph else "json"


def media_type(form: str, fmt: str) -> str:
    """The Content-Type of a result."""
    return GRAPH_MEDIA[fmt] if form in ("CONSTRUCT", "DESCRIBE") else RESULT_MEDIA[fmt]


@dataclass
class SparqlRun:
    """A running SPARQL query: its form, format and the stream of result bytes."""

    form: str
    fmt: str
    chunks: Iterator[bytes]
    reader: ResultStream | None = None

    @property
    def cut(self) -> bool:
        """Whether the deadline ended the stream before the result was complete."""
        return self.reader is not None and self.reader.cut

    def collect(self, limit: int, cancel: threading.Event | None = None) -> bytes:
        """The whole result, read before anything is answered; the worker is killed on every path.

        The HTTP endpoint answers only a complete result: a stream cut at the deadline would be a
        200 with a body ending mid-triple. The result is held in memory up to ``limit`` bytes.

        Raises:
            QueryLimitError: The deadline passed, the result is larger than ``limit`` bytes, or the
                worker ran out of its memory limit (each named as such).
            ApiError: ``cancel`` was set (the client went away).
        """
        if self.reader is None:
            return b"".join(self.chunks)
        return self.reader.collect(limit, cancel)

    def close(self) -> None:
        """Kill the worker if it still runs (idempotent)."""
        if self.reader is not None:
            self.reader.close()


#: The cap of a caller that names none: the settings' default (``ARGWEB_SPARQL_MAX_WORKERS``).
DEFAULT_MAX_WORKERS: int = Settings.model_fields["sparql_max_workers"].default


@dataclass(frozen=True)
class PoolState:
    """What the worker pool holds now and has held (for drills and diagnostics).

    Attributes:
        running: Evaluations holding a place now (a worker process, or a request to a server).
        peak: The most that held a place at once since the process started.
        refused: Evaluations refused because their cap was reached.
    """

    running: int
    peak: int
    refused: int


class WorkerPool:
    """A bounded pool of one kind of query evaluation: :data:`POOL`, the one every SPARQL evaluation
    of this process goes through whoever starts it, and :data:`CYPHER_POOL` for client Cypher.

    A place is taken before a worker starts (or a server is asked) and given back when its result
    is closed. Each caller names the cap it honours (the API its ``sparql_max_workers``), and is
    admitted only while fewer evaluations than that hold a place, counting every route's.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._lock = threading.Lock()
        self._running = 0
        self._peak = 0
        self._refused = 0

    def take(self, cap: int) -> _Place:
        """A place in the pool, or a refusal when ``cap`` evaluations already hold one.

        Raises:
            BusyError: ``cap`` reached (answered 503 with ``Retry-After``).
        """
        with self._lock:
            if self._running >= cap:
                self._refused += 1
                raise BusyError(f"{cap} {self.kind} queries are running, the most at once; retry shortly")
            self._running += 1
            self._peak = max(self._peak, self._running)
        return _Place(self)

    def _give_back(self) -> None:
        with self._lock:
            self._running -= 1

    def state(self) -> PoolState:
        """The pool's counters now."""
        with self._lock:
            return PoolState(self._running, self._peak, self._refused)


class _Place:
    """One held place of a :class:`WorkerPool`; :meth:`release` gives it back once."""

    def __init__(self, pool: WorkerPool) -> None:
        self._pool: WorkerPool | None = pool
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool._give_back()


POOL = WorkerPool("SPARQL")
CYPHER_POOL = WorkerPool("Cypher")


def running_workers() -> int:
    """SPARQL worker processes of this process still alive (for drills and diagnostics)."""
    return sum(1 for reader in list(_LIVE) if reader.proc.poll() is None)


_LIVE: set[_Reader] = set()


def run_sparql(
    store: Path | RemoteStore,
    query: str,
    fmt: str | None = None,
    accept: str | None = None,
    timeout: float = 30.0,
    memory_mb: int = 4096,
    allow_service: bool = False,
    strict_format: bool = True,
    max_workers: int = DEFAULT_MAX_WORKERS,
    cancel: threading.Event | None = None,
) -> SparqlRun:
    """Start a SPARQL query under a deadline and return its result stream.

    The query is checked (:func:`check_sparql`) and evaluated in a child process over the embedded
    store at ``store`` (a directory), or sent to the SPARQL server ``store``
    (:mod:`api.services.sparql_remote`) in the negotiated format. Errors found before the first
    result byte are raised; after that, reaching the deadline ends the stream (the result is cut)
    and kills the child or closes the connection.

    Every evaluation takes a place in the one :data:`POOL` of this process first: while
    ``max_workers`` evaluations (of any caller) hold one, the query is refused at once instead of
    queueing. The place is given back when the result is closed (:meth:`SparqlRun.close`, or read to
    its end). ``cancel`` (the client went away) is looked at while the worker computes and before
    the first result byte, so a client that leaves during an aggregate ends its worker too.

    Raises:
        ApiError, QueryRefusedError: From :func:`check_sparql` and Oxigraph's parser; ApiError
            also when ``cancel`` was set before the result started.
        QueryLimitError: No result started before the deadline, or the worker ran out of memory.
        DatabaseUnavailableError: No store at ``store``, or the server does not answer (503).
        BusyError: ``max_workers`` already running (503).
        InvalidQueryError: The server refused the query as invalid.
    """
    form = check_sparql(query, allow_service)
    chosen = negotiate(form, accept, fmt, strict_format)
    if not isinstance(store, RemoteStore) and not (store / "CURRENT").is_file():
        raise DatabaseUnavailableError("the SPARQL store is not there; run `argweb export rdf` or `argweb rdf load`")
    slot = POOL.take(max_workers)
    if isinstance(store, RemoteStore):
        # The media type without its parameters is what the server is asked for (Accept).
        asked = media_type(form, chosen).split(";")[0]
        reader = RemoteReader(store, query, asked, time.monotonic() + timeout, timeout, slot, cancel)
        return SparqlRun(form, chosen, reader.rest(), reader)
    return _start(store, query, form, chosen, timeout, memory_mb, slot, cancel)


def _start(
    store_dir: Path,
    query: str,
    form: str,
    chosen: str,
    timeout: float,
    memory_mb: int,
    slot: Slot,
    cancel: threading.Event | None,
) -> SparqlRun:
    deadline = time.monotonic() + timeout
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGWEB_")}
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "api.services.sparql_worker", str(store_dir.resolve()), chosen, str(memory_mb)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=str(Path(__file__).resolve().parents[2]),
            env=env,
        )
    except BaseException:
        slot.release()
        raise
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(query.encode("utf-8"))
        proc.stdin.close()
    except BrokenPipeError:
        pass
    reader = _Reader(proc, deadline, slot, memory_mb, timeout)
    try:
        # An aggregate or ASK computes all of its answer before this line: the wait for it is where
        # a client that left is most often noticed.
        line = reader.line(cancel)
        if line is None:
            if cancel is not None and cancel.is_set():
                raise ApiError(ABANDONED)
            raise reader.stopped()
        header = json.loads(line)
        if not header.get("ok"):
            message = str(header.get("error"))
            if "memory limit" in message:
                raise QueryLimitError(f"SPARQL query stopped: it exceeded the memory limit of {memory_mb} MB")
            raise QueryRefusedError(message) if header.get("refused") else ApiError(message)
    except BaseException:
        reader.close()
        raise
    return SparqlRun(form, chosen, reader.rest(), reader)


class _Reader(ResultStream):
    """Reads a child's stdout with a deadline, without threads."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        deadline: float,
        slot: Slot | None = None,
        memory_mb: int = 0,
        timeout: float = 0.0,
    ) -> None:
        super().__init__(slot)
        self.proc = proc
        self.deadline = deadline
        self.memory_mb = memory_mb
        self.timeout = timeout
        _LIVE.add(self)
        assert proc.stdout is not None
        self.fd = proc.stdout.fileno()
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.fd, selectors.EVENT_READ)

    def _read(self, cancel: threading.Event | None = None) -> bytes | None:
        """Next bytes (b"" at end of stream), or None at the deadline (or when ``cancel`` is set)."""
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0 or (cancel is not None and cancel.is_set()):
                return None
            if self.selector.select(timeout=min(left, 0.2)):
                return os.read(self.fd, CHUNK)

    def stopped(self) -> ArgwebError:
        """Why the worker gave no (more) result: out of memory when it died so, else the deadline."""
        code = self.proc.poll()
        if code is None and time.monotonic() < self.deadline:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.proc.wait(timeout=1.0)
        # Exit 3: MemoryError; SIGABRT: the allocator failed under the address-space limit.
        if code in (3, -signal.SIGABRT, 134):
            return QueryLimitError(f"SPARQL query stopped: it exceeded the memory limit of {self.memory_mb} MB")
        if code is not None and time.monotonic() < self.deadline:
            return ApiError(f"SPARQL query failed: the worker ended with status {code}")
        return QueryLimitError(f"SPARQL query stopped by the time limit ({self.timeout:g} s)")

    def _check_end(self) -> None:
        if self.proc.wait() != 0:
            raise self.stopped()

    def _release(self) -> None:
        """Kill the worker."""
        with contextlib.suppress(Exception):
            self.selector.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        _LIVE.discard(self)

    def line(self, cancel: threading.Event | None = None) -> bytes | None:
        """The next line of the worker's output; None at the deadline, when ``cancel`` is set or at its end."""
        while b"\n" not in self.buffer:
            data = self._read(cancel)
            if not data:
                return None
            self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line
