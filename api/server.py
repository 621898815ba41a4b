"""How ``argweb serve`` runs the API in uvicorn: its HTTP protocol with a header-read timeout.

uvicorn closes a kept-alive connection that stays silent, but has no limit on the time a client
takes to send a request's headers: a new connection that sends nothing, or one byte every few
seconds, stays open for as long as the client likes (3,000 such connections held 3,000 sockets
and their buffers). :class:`HeaderTimeoutH11` closes a connection whose request head is not
complete ``header_timeout`` seconds (a setting) after the connection opened or after the previous
response ended; the body and the response are not limited by it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from api.settings import Settings, get_settings

PROTOCOL = "api.server:HeaderTimeoutH11"
"""The import path uvicorn is given (``http=``), so that worker processes load the same class."""


class HeaderTimeoutH11(H11Protocol):
    """uvicorn's h11 protocol, closing connections whose request head is not in within the time limit.

    The limit is the ``header_timeout`` attribute of the uvicorn config (set by :func:`config`),
    else the ``header_timeout`` setting.
    """

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        limit = getattr(config, "header_timeout", None)
        self.header_timeout: float = limit if limit is not None else get_settings().header_timeout
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the clock for the first request's head."""
        super().connection_made(transport)
        self._watch_head()

    def data_received(self, data: bytes) -> None:
        """Stop the clock once the request head is complete (more bytes alone do not reset it)."""
        super().data_received(data)
        self._watch_head()

    def on_response_complete(self) -> None:
        """Start the clock again for the next request on a kept-alive connection."""
        super().on_response_complete()
        self._watch_head()

    def connection_lost(self, exc: Exception | None) -> None:
        """Drop the clock with the connection."""
        self._stop_clock()
        super().connection_lost(exc)

    def _watch_head(self) -> None:
        waiting = self.conn.their_state is h11.IDLE and not self.transport.is_closing()
        if not waiting:
            self._stop_clock()
        elif self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._head_too_slow)

    def _stop_clock(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _head_too_slow(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def config(app: Any, settings: Settings, host: str, port: int, log_level: str = "info") -> uvicorn.Config:
    """The uvicorn configuration of the API: ``app`` on ``host:port`` with the header-read timeout."""
    cfg = uvicorn.Config(app, host=host, port=port, log_level=log_level, http=PROTOCOL)
    cfg.header_timeout = settings.header_timeout  # type: ignore[attr-defined]
    return cfg
