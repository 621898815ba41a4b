"""A SPARQL 1.1 server in place of the embedded Oxigraph store (Apache Jena Fuseki, the Oxigraph server, ...).

Queries go to the server's query endpoint (SPARQL 1.1 Protocol: a POST of
``application/sparql-query``), loads to its Graph Store Protocol endpoint (a PUT, or a POST to
append, of the export into the default graph). The read-only rules, the format negotiation and the
result limits stay argweb's own (:func:`ontology.sparql_protocol.check_sparql` passes every query before it is sent);
what changes is who evaluates it:

* the argweb prefixes the embedded store predeclares are declared in the query text
  (:func:`ontology.sparql.declare_prefixes`);
* the time limit is a deadline on the whole exchange: connecting, waiting and reading stop when it
  passes and the connection is closed (configure the server's own query timeout too, so that it
  also stops working: Fuseki ``--timeout``, Oxigraph ``--timeout-s``);
* the memory cap of the embedded worker has no counterpart: the server bounds its own memory.

Only HTTP from the standard library: nothing is added to argweb's dependencies.
"""

from __future__ import annotations

import http.client
import select
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ontology.errors import (
    ApiError,
    ArgwebError,
    ClientError,
    DatabaseUnavailableError,
    InvalidQueryError,
    QueryLimitError,
)
from ontology.sparql import LoadReport, check_file, declare_prefixes, rdf_format_of
from ontology.sparql_stream import ABANDONED, ResultStream, Slot

CHUNK = 64 * 1024
# Graph Store Protocol media types of the syntaxes a push sends (triples: the default graph).
_TRIPLES = {".nt": "application/n-triples", ".ttl": "text/turtle", ".rdf": "application/rdf+xml"}


@dataclass(frozen=True)
class RemoteStore:
    """A SPARQL 1.1 server: its query endpoint and (for loads) its Graph Store Protocol endpoint."""

    query_url: str
    store_url: str | None = None

    def __str__(self) -> str:
        return self.query_url


def _connection(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ApiError(f"SPARQL endpoint {url!r} is not an http(s) URL")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    target = parts.path or "/"
    return kind(parts.hostname, parts.port, timeout=timeout), target + (f"?{parts.query}" if parts.query else "")


def _away(url: str, error: BaseException) -> DatabaseUnavailableError:
    return DatabaseUnavailableError(f"the SPARQL server at {url} does not answer ({error}); retry when it is back")


class RemoteReader(ResultStream):
    """The answer of a SPARQL server read under a deadline (see :class:`ResultStream`).

    Args:
        store: The server.
        query: The query (checked: read-only).
        accept: The media type asked for.
        deadline: ``time.monotonic()`` by which the whole answer must be read.
        timeout: The time limit, for messages.
        slot: A place in the worker pool, held until :meth:`close` (also when the constructor fails).
        cancel: Set when the client went away: the wait for the server's answer stops and the
            connection is closed.

    Raises:
        QueryLimitError: No answer started before the deadline.
        ApiError: ``cancel`` was set before the answer started.
        InvalidQueryError: The server refused the query as invalid (4xx).
        DatabaseUnavailableError: The server is unreachable or failed (5xx).
    """

    def __init__(
        self,
        store: RemoteStore,
        query: str,
        accept: str,
        deadline: float,
        timeout: float,
        slot: Slot | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        super().__init__(slot)
        self.store = store
        self.deadline = deadline
        self.timeout = timeout
        self.conn: http.client.HTTPConnection | None = None
        try:
            self.conn, target = _connection(store.query_url, self._left())
            body = declare_prefixes(query).encode("utf-8")
            headers = {"Content-Type": "application/sparql-query; charset=utf-8", "Accept": accept}
            self.conn.request("POST", target, body=body, headers=headers)
            self._await_answer(cancel)
            self.response = self.conn.getresponse()
        except TimeoutError as e:
            self.close()
            raise self.stopped() from e
        except (OSError, http.client.HTTPException) as e:
            self.close()
            raise _away(store.query_url, e) from e
        except BaseException:
            self.close()
            raise
        if self.response.status != 200:
            message = self.response.read(4000).decode("utf-8", "replace").strip()
            status = self.response.status
            self.close()
            if 400 <= status < 500:
                raise InvalidQueryError(f"invalid SPARQL query: the SPARQL server says ({status}): {message[:500]}")
            raise DatabaseUnavailableError(f"the SPARQL server at {store.query_url} failed ({status}): {message[:500]}")

    def _await_answer(self, cancel: threading.Event | None) -> None:
        """Wait until the server starts its answer, looking at ``cancel`` meanwhile.

        A server evaluating an aggregate sends nothing before it is done; a client that left
        meanwhile must not hold its place in the pool until then.
        """
        sock = self.conn.sock if self.conn is not None else None
        if cancel is None or sock is None:
            return
        while not select.select([sock], [], [], min(self._left(), 0.2))[0]:
            if cancel.is_set():
                raise ApiError(ABANDONED)

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.stopped()
        return left

    def stopped(self) -> QueryLimitError:
        """The deadline passed (a server's answer stops short for no other reason argweb can see)."""
        return QueryLimitError(f"SPARQL query stopped by the time limit ({self.timeout:g} s)")

    def _read(self, cancel: threading.Event | None = None) -> bytes | None:
        """Next bytes (b"" at the end), or None when the deadline passed or ``cancel`` is set.

        The socket waits at most until the deadline, so one read cannot outlast it; ``cancel`` is
        looked at between reads.
        """
        if cancel is not None and cancel.is_set():
            return None
        try:
            left = self._left()
        except QueryLimitError:
            return None
        sock = self.conn.sock if self.conn is not None else None
        if sock is not None:
            sock.settimeout(left)
        try:
            return self.response.read1(CHUNK)
        except TimeoutError:
            return None
        except (OSError, http.client.HTTPException) as e:
            raise _away(self.store.query_url, e) from e

    def _release(self) -> None:
        """Close the connection (the server sees the client go)."""
        if self.conn is not None:
            self.conn.close()


def ask(store: RemoteStore, timeout: float = 5.0) -> bool:
    """Whether the server holds any triple (``ASK { ?s ?p ?o }``); for health checks.

    Raises:
        ArgwebError: The server is unreachable, failed, or did not answer in ``timeout`` seconds.
    """
    accept = "application/sparql-results+json"
    reader = RemoteReader(store, "ASK { ?s ?p ?o }", accept, time.monotonic() + timeout, timeout)
    return b"true" in reader.collect(4096)


def holds_export(store_dir: Path, endpoint: str | None, store_endpoint: str | None) -> bool:
    """Whether the SPARQL store still holds a loaded export (a restarted in-memory server holds nothing).

    Args:
        store_dir: The embedded store's folder (used when no SPARQL server is named).
        endpoint: The SPARQL server's query endpoint, if any.
        store_endpoint: Its Graph Store endpoint, if any (with no query endpoint: not loaded here).
    """
    if not endpoint:
        return store_dir.is_dir() and not store_endpoint
    try:
        return ask(RemoteStore(endpoint, store_endpoint))
    except ArgwebError:
        return False


def push(
    store: RemoteStore, file: Path, fmt: str | None = None, append: bool = False, timeout: float = 3600.0
) -> LoadReport:
    """Put an RDF file into the server's default graph (replacing it unless ``append``).

    The file is parsed through first (:func:`ontology.sparql.check_file`): a malformed file is refused
    before anything is sent, so the server keeps what it held.

    Raises:
        ApiError: No Graph Store endpoint is configured.
        NotFoundError: No such file.
        ClientError: Malformed file, or quads (named graphs), which a default-graph load cannot hold.
        DatabaseUnavailableError: The server is unreachable or refused the data (its answer quoted).
    """
    if not store.store_url:
        raise ApiError(
            f"a SPARQL server is configured ({store.query_url}) but no Graph Store endpoint to load it through: "
            "set ARGWEB_SPARQL_STORE_ENDPOINT (Fuseki: .../<dataset>/data, Oxigraph: .../store)"
        )
    started = time.perf_counter()
    suffix = "." + (fmt.lstrip(".") if fmt else file.suffix.lstrip(".")).lower()
    rdf_format_of(file, fmt)  # an unknown format is refused before the file is read
    if suffix not in _TRIPLES:
        raise ClientError(
            f"{file}: a SPARQL server is loaded into its default graph, which holds triples: "
            f"give {', '.join(sorted(_TRIPLES))} (argweb export rdf writes .nt), not {suffix}"
        )
    triples = check_file(file, fmt)
    conn, target = _connection(store.store_url, timeout)
    target += ("&" if "?" in target else "?") + "default"
    try:
        with open(file, "rb") as body:
            headers = {"Content-Type": _TRIPLES[suffix], "Content-Length": str(file.stat().st_size)}
            conn.request("POST" if append else "PUT", target, body=body, headers=headers)
            response = conn.getresponse()
            answer = response.read(4000).decode("utf-8", "replace").strip()
    except (OSError, http.client.HTTPException) as e:
        raise _away(store.store_url, e) from e
    finally:
        conn.close()
    if response.status not in (200, 201, 204):
        raise DatabaseUnavailableError(
            f"the SPARQL server at {store.store_url} refused {file} ({response.status}): {answer[:500]}"
        )
    return LoadReport(file, triples, time.perf_counter() - started)


def health(store: RemoteStore) -> str:
    """``ok``, or why the server cannot answer (for ``/health``)."""
    try:
        ask(store)
    except ArgwebError as e:
        return f"unavailable: {e}"
    return "ok"
