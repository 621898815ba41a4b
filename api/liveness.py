"""``/health`` within a second, whatever the load: checks run apart and a slow one is not waited for.

A health check asks Neo4j and the SPARQL store to answer. Under load (slow client queries keeping
the database's cores busy, on a small machine) that can take seconds, and a liveness probe that
waits for it reports a live API as dead. So checks run on threads of their own (never behind the
request threads) one at a time, and a request waits for the running check at most
:data:`WAIT_S`; past that it is answered with the result of the last completed check, and the
route says its age in seconds (the ``Age`` header). Only the first check of the process, with no
result before it, is waited for to its end, and so is the running check when the last one failed
(Neo4j away: 503): a failure is never answered stale, so a backend that is back is seen as back
by the next check. Before a last success is answered in place of a running check, a quick
probe (the database's port still accepts connections) runs: a backend that has gone away since is
answered as away (503) at once, not as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Generic, TypeVar

T = TypeVar("T")

WAIT_S = 0.5
"""How long a request waits for the running check before the last result is answered."""
PROBE_S = 0.15
"""How long the probe run before answering a last result may take before it is ignored."""


class LatestCheck(Generic[T]):
    """One check at a time on its own thread; :meth:`answer` gives a fresh or recent result.

    Args:
        check: What to run (it raises to report a failure).
        probe: A quick test run before a last result is answered in place of the running check;
            it raises when the backend is gone (a result past :data:`PROBE_S` is not waited for).
    """

    def __init__(self, check: Callable[[], T], probe: Callable[[], None] | None = None) -> None:
        self.check = check
        self.probe = probe
        self._threads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="argweb-health")
        self._probes = ThreadPoolExecutor(max_workers=1, thread_name_prefix="argweb-health-probe")
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
        # One wrapper, awaited or marked read on every path: an asyncio future whose exception is
        # never read is logged when it is collected, with a traceback, at whatever moment that is.
        waiting = asyncio.wrap_future(self._start())
        try:
            return await asyncio.wait_for(asyncio.shield(waiting), WAIT_S), 0.0
        except TimeoutError:
            pass
        with self._lock:
            last = self._last
        if last is not None and last[1].exception() is None:
            if self.probe is not None:
                probing = asyncio.wrap_future(self._probes.submit(self.probe))
                # Slow to accept is not gone: past PROBE_S the last result stands.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(probing, PROBE_S)
            waiting.add_done_callback(_read)
            return last[1].result(), time.monotonic() - last[0]
        return await waiting, 0.0


def _read(future: asyncio.Future[Any]) -> None:
    """Mark a future's outcome as read (it was answered from an earlier check)."""
    if not future.cancelled():
        future.exception()
