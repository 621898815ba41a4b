"""Which Neo4j argweb talks to, resolved in one place for the CLI, the HTTP API, tests and benches.

The rule: the external server of ``settings.neo4j_uri`` when one is configured, else the embedded
server of ``settings.data_dir`` (started on demand by the CLI; the API and other long-running
callers only connect to one that runs). The user and password always come from the settings.
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import TracebackType

from neo4j import Driver
from pydantic import SecretStr

from api.settings import Settings, get_settings
from graphstore.runtime import LEGACY_PASSWORD, EmbeddedNeo4j, connect, free_port, stored_password
from graphstore.store import GraphStore
from ontology.errors import DatabaseUnavailableError
from ontology.system import private_dir


def neo4j_password(settings: Settings) -> str:
    """The Neo4j password: the configured one, else (embedded server) the one stored for its data directory.

    An external server without a configured password is sent an empty one: a server without
    authentication takes it, any other refuses the login (503 / exit 1, naming the setting).

    Raises:
        DatabaseUnavailableError: The stored password cannot be read or written.
    """
    if settings.neo4j_password is not None:
        return settings.neo4j_password.get_secret_value()
    if settings.neo4j_uri:
        return ""
    private_dir(settings.data_dir)
    return stored_password(settings.neo4j_dir)


def embedded_server(settings: Settings) -> EmbeddedNeo4j:
    """The embedded Neo4j of ``settings.data_dir`` (not started).

    Without a configured password it gets the one generated for its data directory
    (:func:`graphstore.runtime.stored_password`); a store from before that still has the old fixed
    password is re-keyed at its next start.
    """
    configured = settings.neo4j_password is not None
    return EmbeddedNeo4j(
        settings.neo4j_dir,
        password=neo4j_password(settings),
        port=settings.neo4j_port,
        heap=settings.neo4j_heap,
        user=settings.neo4j_user,
        rekey_from=None if configured else LEGACY_PASSWORD,
    )


def bolt_uri(settings: Settings, *, start: bool) -> str:
    """The Bolt URI of the configured Neo4j.

    Args:
        settings: The settings naming the server.
        start: Start the embedded server when it does not run (CLI); otherwise a missing
            embedded server is an error (API).

    Raises:
        DatabaseUnavailableError: No server to talk to, or the embedded one cannot start.
    """
    if settings.neo4j_uri:
        return settings.neo4j_uri
    server = embedded_server(settings)
    if start:
        return server.start().uri
    info = server.info()
    if info is None:
        raise DatabaseUnavailableError(
            f"no embedded Neo4j is running for {settings.data_dir}; run `argweb db start` or set ARGWEB_NEO4J_URI"
        )
    return info.uri


def private_settings(data_dir: Path, password: str, *, port: int | None = None, heap: str | None = None) -> Settings:
    """Settings of a private embedded server (tests, benchmarks), whatever the environment says.

    Args:
        data_dir: The server's own data directory.
        password: Its password.
        port: Bolt port (default: a free one).
        heap: JVM heap (default: the settings').
    """
    base = get_settings()
    return base.model_copy(
        update={
            "neo4j_uri": None,
            "neo4j_password": SecretStr(password),
            "neo4j_port": port or free_port(),
            "neo4j_heap": heap or base.neo4j_heap,
            "data_dir": data_dir,
        }
    )


def open_driver(settings: Settings, *, start: bool = True, timeout: float | None = None) -> Driver:
    """An open, verified driver for the configured Neo4j (the caller closes it).

    Args:
        settings: The settings naming the server.
        start: Start the embedded server when it does not run (see :func:`bolt_uri`).
        timeout: Connect, pool and retry limit in seconds (see :func:`graphstore.runtime.connect`);
            the driver's defaults when None.

    Raises:
        DatabaseUnavailableError: The server cannot be started, reached or logged into.
    """
    uri = bolt_uri(settings, start=start)
    return connect(uri, settings.neo4j_user, neo4j_password(settings), timeout=timeout)


class Graph:
    """Access to the graph for a service call: connects on first use, closes on exit.

    Services take a ``Graph`` rather than a driver so that work which needs no database (parsing
    and validating input) happens before any connection, and so that the CLI (one command, may
    start the embedded server) and the API (one driver per process) share them.

    Args:
        settings: Which server, which database, batch and page sizes.
        start: Whether the embedded server may be started (see :func:`bolt_uri`).
        driver: An already open driver to use instead of connecting (not closed here).
        timeout: Connect, pool and retry limit of the driver opened here (the API passes
            ``settings.neo4j_connect_timeout``; the CLI keeps the driver's patient defaults).
    """

    def __init__(
        self, settings: Settings, *, start: bool = True, driver: Driver | None = None, timeout: float | None = None
    ) -> None:
        self.settings = settings
        self._start = start
        self._timeout = timeout
        self._driver = driver
        self._owned = driver is None
        self._lock = threading.Lock()
        self._uri: str | None = None

    def driver(self) -> Driver:
        """The driver, connected on the first call.

        Raises:
            DatabaseUnavailableError: The server cannot be started or reached.
        """
        with self._lock:
            if self._driver is None:
                self._uri = bolt_uri(self.settings, start=self._start)
                self._driver = connect(
                    self._uri, self.settings.neo4j_user, neo4j_password(self.settings), timeout=self._timeout
                )
            return self._driver

    def connected(self) -> Driver | None:
        """The driver if it is already open, else None (never connects: no I/O)."""
        return self._driver

    def store(self) -> GraphStore:
        """A :class:`~graphstore.store.GraphStore` over the configured database and batch size (its
        errors name the server and what brings it back)."""
        driver = self.driver()
        cfg = self.settings
        if cfg.neo4j_uri:
            server, restart = f"Neo4j at {cfg.neo4j_uri}", f"bring the server at {cfg.neo4j_uri} back"
            return GraphStore(driver, cfg.neo4j_database, cfg.batch_size, server=server, restart=restart)
        where = f" at {self._uri}" if self._uri else ""
        server = f"the embedded Neo4j{where} (data directory {cfg.data_dir})"
        restart = "start it again with `argweb db start`"
        return GraphStore(
            driver,
            cfg.neo4j_database,
            cfg.batch_size,
            server=server,
            restart=restart,
            restarting=lambda: embedded_server(cfg).restarting(),  # built only when the server went away
        )

    def close(self) -> None:
        """Close the driver if this object opened it."""
        with self._lock:
            if self._driver is not None and self._owned:
                self._driver.close()
                self._driver = None

    def __enter__(self) -> Graph:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
