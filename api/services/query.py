"""Client queries: read-only Cypher and SPARQL under a time limit, the wiring of their limits.

Shared by the ``/cypher`` and ``/sparql`` routes and ``argweb sparql``.

* Cypher runs through :class:`~graphstore.readonly.ReadRunner`: the parameters and an ``EXPLAIN``
  check first, then a READ-mode transaction with a server-side timeout and a row limit, which a
  watchdog ends if it outlives the limit; the database refuses any write that slips past the check.
* SPARQL is checked (:mod:`ontology.sparql_protocol`) and evaluated (:mod:`ontology.sparql_run`)
  in a child process killed at the deadline and capped in memory, or on the configured server.

What this module holds is the wiring: every evaluation takes a place in the process's bounded
pools (:data:`ontology.client_query.POOL`, :data:`~ontology.client_query.CYPHER_POOL`) under the
cap its caller names, and the settings say where SPARQL runs.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from neo4j import Driver

from api.settings import Settings
from graphstore.readonly import CypherStream, ReadRunner
from ontology.client_query import CYPHER_POOL, POOL, check_query_size
from ontology.competency import CompetencyQuestion, questions
from ontology.sparql_protocol import check_sparql, negotiate
from ontology.sparql_remote import RemoteStore
from ontology.sparql_run import SparqlRun, evaluate, require_store

# -- competency questions --------------------------------------------------------------------------


def competency_questions() -> list[CompetencyQuestion]:
    """The competency questions (``ontology/cq``, package data), each in Cypher and SPARQL, by name.

    Raises:
        NotFoundError: The installation lacks ``ontology/cq`` (a broken install).
    """
    return questions()


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
    check_query_size(query, "Cypher")
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


#: The cap of a caller that names none: the settings' default (``ARGWEB_SPARQL_MAX_WORKERS``).
DEFAULT_MAX_WORKERS: int = Settings.model_fields["sparql_max_workers"].default


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
    (:mod:`ontology.sparql_remote`) in the negotiated format. Errors found before the first
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
    require_store(store)
    slot = POOL.take(max_workers)
    return evaluate(store, query, form, chosen, slot, timeout=timeout, memory_mb=memory_mb, cancel=cancel)


def sparql_store(settings: Settings) -> Path | RemoteStore:
    """Where SPARQL runs: the configured server (``sparql_endpoint``), else the embedded store's directory."""
    if settings.sparql_endpoint:
        return RemoteStore(settings.sparql_endpoint, settings.sparql_store_endpoint)
    return settings.rdf_store_dir
