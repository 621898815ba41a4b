"""``/health`` within a second, whatever the load: checks run apart and a slow one is not waited for.

A health check asks Neo4j and the SPARQL store to answer. Under load (slow client queries keeping
the database's cores busy, on a small machine) that can take seconds, and a liveness probe that
waits for it reports a live API as dead. So checks run on threads of their own (never behind the
request threads) one at a time, and a request waits for the running check at most
:data:`WAIT_S`; past that it is answered with the result of the last completed check, and the
route says its age in seconds (the ``Age`` header). Only the first check of the process, with no
result before it, is waited for to its end. A failure (Neo4j away: 503) is kept and answered the
same way as a success; a check that fails fast (a stopped server refuses at once) is answered
fresh.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

T = TypeVar("T")

WAIT_S = 0.8
"""How long a request waits for the running check before the last result is answered."""


class LatestCheck(Generic[T]):
    """One check at a time on its own thread; :meth:`answer` gives a fresh or recent result.

    Args:
        check: What to run (it raises to report a failure).
    """

    def __init__(self, check: Callable[[], T]) -> None:
        self.check = check
        self._threads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="argweb-health")
        # Reentrant: a check already done when its callback is added runs the callback at once,
        # in _start, with the lock held.
        self._lock = threading.RLock()
        self._running: Future[T] | None = None
        self._last: tuple[float, Future[T]] | None = None

    def _start(self) -> Future[T]:
        with self._lock:
            if self._running is None or self._running.done():
                self._running = self._threads.submit(self.check)
                self._running.add_done_callback(self._keep)
            return self._running

    def _keep(self, done: Future[T]) -> None:
        with self._lock:
            self._last = (time.monotonic(), done)

    async def answer(self) -> tuple[T, float]:
        """The result of a check and its age in seconds (0 when fresh).

        Raises:
            Exception: What the answered check raised.
        """
        running = self._start()
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(running)), WAIT_S), 0.0
        except TimeoutError:
            pass
        with self._lock:
            last = self._last
        if last is not None:
            return last[1].result(), time.monotonic() - last[0]
        return await asyncio.wrap_future(running), 0.0
