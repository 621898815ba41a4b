"""What every client query, Cypher or SPARQL, must be before it is looked at (not empty, not
oversized), and the bounded pools every evaluation of one takes a place in."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ontology.errors import ApiError, BusyError

MAX_QUERY_CHARS = 100_000
"""The longest query text a client may send (either language)."""


def check_query_size(query: str, language: str) -> None:
    """Refuse an empty or oversized query.

    Raises:
        ApiError: The ``language`` query is empty or longer than :data:`MAX_QUERY_CHARS`.
    """
    if not query.strip():
        raise ApiError(f"the {language} query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise ApiError(f"the {language} query is longer than {MAX_QUERY_CHARS} characters")


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
