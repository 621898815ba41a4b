"""A SPARQL result read under a deadline, whoever produces it: the embedded store's worker process
(:mod:`ontology.sparql_run`) or a SPARQL server (:mod:`ontology.sparql_remote`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Protocol

from ontology.errors import ApiError, ArgwebError, QueryLimitError

#: Why a result was not read: its client went away (what a watched route's ``cancel`` means).
ABANDONED = "SPARQL query abandoned: the client went away"


class Slot(Protocol):
    """A place in the SPARQL worker pool (:class:`ontology.client_query.WorkerPool`), held while a result is read."""

    def release(self) -> None:
        """Give the place back."""


class ResultStream:
    """The bytes of one result: read whole up to a limit (:meth:`collect`) or as they come (:meth:`rest`).

    Subclasses say how the next bytes arrive (:meth:`_read`: ``None`` when the deadline passed or
    ``cancel`` was set, ``b""`` at the end), why a result stopped short (:meth:`stopped`), whether a
    stream that ended is whole (:meth:`_check_end`) and what to free (:meth:`_release`).

    Args:
        slot: A place in the worker pool, given back by :meth:`close`.
    """

    def __init__(self, slot: Slot | None = None) -> None:
        self.slot = slot
        self.buffer = b""
        self.cut = False
        self.closed = False
        self._lock = threading.Lock()

    def _read(self, cancel: threading.Event | None = None) -> bytes | None:
        raise NotImplementedError

    def stopped(self) -> ArgwebError:
        """Why no (more) result came."""
        raise NotImplementedError

    def _check_end(self) -> None:
        """Raise when the stream ended because its producer failed (default: an end is a whole result)."""

    def _release(self) -> None:
        """Free the producer (kill the worker, close the connection)."""

    def collect(self, limit: int, cancel: threading.Event | None = None) -> bytes:
        """The whole result, read before anything is answered; the producer is freed on every path.

        Raises:
            QueryLimitError: The deadline passed, the result is larger than ``limit`` bytes, or the
                producer stopped short (each named as such by :meth:`stopped`).
            ApiError: ``cancel`` was set (the client went away).
        """
        parts = [self.buffer]
        size = len(self.buffer)
        self.buffer = b""
        try:
            while True:
                data = self._read(cancel)
                if data is None:
                    if cancel is not None and cancel.is_set():
                        raise ApiError(ABANDONED)
                    raise self.stopped()
                if not data:
                    self._check_end()
                    return b"".join(parts)
                size += len(data)
                if size > limit:
                    raise QueryLimitError(f"SPARQL result larger than {limit} bytes; narrow the query or add LIMIT")
                parts.append(data)
        finally:
            self.close()

    def rest(self) -> Iterator[bytes]:
        """The result as it comes; it ends early (``cut``) at the deadline."""
        try:
            if self.buffer:
                yield self.buffer
                self.buffer = b""
            while True:
                data = self._read()
                if data is None:
                    self.cut = True
                    break
                if not data:
                    break
                yield data
        finally:
            self.close()

    def close(self) -> None:
        """Free the producer and give the slot back (once; safe from any thread)."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        try:
            self._release()
        finally:
            if self.slot is not None:
                self.slot.release()
