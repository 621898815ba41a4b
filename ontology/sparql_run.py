"""Evaluating a checked SPARQL query under a deadline: in a worker process, or on a SPARQL server.

Oxigraph cannot interrupt a query, so the embedded store is queried in a child process
(:mod:`ontology.sparql_worker`) killed at the deadline and capped in memory; a configured server
(:mod:`ontology.sparql_remote`) is asked over HTTP under the same deadline. Either way the result
is a :class:`SparqlRun`, read whole (:meth:`SparqlRun.collect`) or as it comes, that frees its
producer and gives its place (a :class:`~ontology.sparql_stream.Slot` the caller took) back when
closed. The query must have passed :func:`ontology.sparql_protocol.check_sparql` first.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ontology.errors import ApiError, ArgwebError, DatabaseUnavailableError, QueryLimitError, QueryRefusedError
from ontology.sparql_protocol import media_type
from ontology.sparql_remote import RemoteReader, RemoteStore
from ontology.sparql_stream import ABANDONED, ResultStream, Slot

CHUNK = 64 * 1024


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


def running_workers() -> int:
    """SPARQL worker processes of this process still alive (for drills and diagnostics)."""
    return sum(1 for reader in list(_LIVE) if reader.proc.poll() is None)


_LIVE: set[_Reader] = set()


def require_store(store: Path | RemoteStore) -> None:
    """Raise unless ``store`` is a server or an embedded store that holds data.

    Raises:
        DatabaseUnavailableError: No embedded store at ``store``.
    """
    if not isinstance(store, RemoteStore) and not (store / "CURRENT").is_file():
        raise DatabaseUnavailableError("the SPARQL store is not there; run `argweb export rdf` or `argweb rdf load`")


def evaluate(
    store: Path | RemoteStore,
    query: str,
    form: str,
    fmt: str,
    slot: Slot,
    *,
    timeout: float = 30.0,
    memory_mb: int = 4096,
    cancel: threading.Event | None = None,
) -> SparqlRun:
    """Start a checked query of form ``form`` on ``store`` in format ``fmt``; ``slot`` is held until it closes.

    The embedded store at ``store`` (a directory) is queried in a worker process under ``timeout``
    and ``memory_mb``; a server ``store`` is asked for the negotiated format's media type. Errors
    found before the first result byte are raised (and ``slot`` given back); after that, reaching
    the deadline ends the stream (the result is cut). ``cancel`` (the client went away) is looked
    at while the worker computes and before the first result byte.

    Raises:
        ApiError, QueryRefusedError: Oxigraph's parser refused the query; ApiError also when
            ``cancel`` was set before the result started.
        QueryLimitError: No result started before the deadline, or the worker ran out of memory.
        DatabaseUnavailableError: The server does not answer (503).
        InvalidQueryError: The server refused the query as invalid.
    """
    if isinstance(store, RemoteStore):
        # The media type without its parameters is what the server is asked for (Accept).
        asked = media_type(form, fmt).split(";")[0]
        reader = RemoteReader(store, query, asked, time.monotonic() + timeout, timeout, slot, cancel)
        return SparqlRun(form, fmt, reader.rest(), reader)
    return _start(store, query, form, fmt, timeout, memory_mb, slot, cancel)


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
            [sys.executable, "-m", "ontology.sparql_worker", str(store_dir.resolve()), chosen, str(memory_mb)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=str(Path(__file__).resolve().parents[1]),
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
