"""Read-only execution of Cypher: READ access mode, a server-side timeout, a row limit.

Everything the HTTP API reads goes through :class:`ReadRunner`. The database is the real guard
against writes: sessions are opened in READ access mode and every statement runs inside a managed
read transaction with a timeout, so a write clause, a schema command or a writing procedure fails
in the server whatever the query text looks like. :meth:`ReadRunner.check` adds a second, earlier
guard for client queries: it asks the planner (``EXPLAIN``) what kind of statement it is and which
operators it would run, and refuses anything that is not a plain read.

Neo4j failures are translated into the argweb error hierarchy: unreachable or overloaded ->
:class:`~ontology.errors.DatabaseUnavailableError`, a time limit -> :class:`~ontology.errors.QueryLimitError`,
a refused write -> :class:`~ontology.errors.QueryRefusedError`, bad syntax -> :class:`~ontology.errors.ApiError`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from neo4j import READ_ACCESS, Driver, ManagedTransaction, Query, unit_of_work
from neo4j.exceptions import (
    ClientError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from neo4j.graph import Node, Path, Relationship

from graphstore.store import GraphStore
from ontology.errors import ApiError, ArgwebError, DatabaseUnavailableError, QueryLimitError, QueryRefusedError

# Plan operators a read-only endpoint must not run even when the planner calls the query a read:
# LOAD CSV reads server files and fetches URLs; SHOW/TERMINATE are administration commands.
_FORBIDDEN_OPERATORS = re.compile(
    r"^(LoadCSV|Show\w*|Terminate\w*|\w*Create\w*|\w*Delete\w*|\w*Merge\w*|SetProperty\w*)"
)
# Procedures a client may call: the read-only catalogue and index procedures of the db namespace.
_ALLOWED_PROCEDURES = re.compile(
    r"^db\.(labels|relationshipTypes|propertyKeys|schema\.\w+|index\.fulltext\.query\w+|"
    r"index\.vector\.queryNodes|constraints|indexes)$"
)
_PROCEDURE_IN_DETAILS = re.compile(r"([A-Za-z_][\w.]*)\s*\(")


def _translate(e: Exception, what: str) -> ArgwebError:
    """The argweb error for a driver exception."""
    if isinstance(e, ServiceUnavailable | SessionExpired | OSError):
        return DatabaseUnavailableError(f"Neo4j is not reachable: {type(e).__name__}")
    if isinstance(e, Neo4jError):
        code = e.code or ""
        message = (e.message or "").strip()
        if "TransactionTimedOut" in code or "Terminated" in code or "TransactionMarkedAsFailed" in code:
            return QueryLimitError(f"{what} was stopped by the time limit")
        if isinstance(e, TransientError):
            return DatabaseUnavailableError(f"Neo4j is busy ({code}); retry later")
        if "AccessMode" in code or "Forbidden" in code or "Security" in code:
            return QueryRefusedError(f"{what} refused: the graph is read-only here ({message.splitlines()[0]})")
        if isinstance(e, ClientError):
            first = message.splitlines()[0] if message else code
            return ApiError(f"{what} is invalid: {first}")
        return DatabaseUnavailableError(f"Neo4j failed ({code})")
    if isinstance(e, DriverError):
        return DatabaseUnavailableError(f"Neo4j driver error: {type(e).__name__}")
    return DatabaseUnavailableError(f"Neo4j failed: {type(e).__name__}")


def to_json(value: Any) -> Any:
    """A Cypher value as JSON-ready data (nodes, relationships and paths become maps)."""
    if isinstance(value, Node):
        return {"labels": sorted(value.labels), "properties": {k: to_json(v) for k, v in value.items()}}
    if isinstance(value, Relationship):
        return {
            "type": value.type,
            "start": value.start_node.get("id") if value.start_node is not None else None,
            "end": value.end_node.get("id") if value.end_node is not None else None,
            "properties": {k: to_json(v) for k, v in value.items()},
        }
    if isinstance(value, Path):
        return {"nodes": [to_json(n) for n in value.nodes], "relationships": [to_json(r) for r in value.relationships]}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if hasattr(value, "iso_format"):
        return value.iso_format()
    return str(value)


@dataclass(frozen=True)
class PlanCheck:
    """What the planner says about a client query."""

    query_type: str
    operators: tuple[str, ...]
    procedures: tuple[str, ...]


def _walk(plan: dict[str, Any] | None) -> Iterator[dict[str, Any]]:
    if not plan:
        return
    yield plan
    for child in plan.get("children", []) or []:
        yield from _walk(child)


class ReadRunner:
    """Runs Cypher reads on an injected driver.

    Args:
        driver: An open driver.
        database: Database name.
        timeout: Server-side transaction timeout in seconds.
    """

    def __init__(self, driver: Driver, database: str = "neo4j", timeout: float = 10.0) -> None:
        self.driver = driver
        self.database = database
        self.timeout = timeout

    def rows(self, query: str, what: str = "query", **params: Any) -> list[dict[str, Any]]:
        """Run a read and return every record as a dict (for builders whose result is bounded)."""

        @unit_of_work(timeout=self.timeout)
        def work(tx: ManagedTransaction) -> list[dict[str, Any]]:
            return [r.data() for r in tx.run(query, params)]

        try:
            with self.driver.session(database=self.database, default_access_mode=READ_ACCESS) as session:
                return session.execute_read(work)
        except (Neo4jError, DriverError, OSError) as e:
            raise _translate(e, what) from e

    def check(self, query: str) -> PlanCheck:
        """Refuse a client query that is not a plain read, before it runs.

        Raises:
            QueryRefusedError: The planner says it writes, changes the schema, loads CSV, runs an
                administration command or calls a procedure outside the read-only allow-list.
            ApiError: The query does not parse (several statements, syntax errors).
        """
        try:
            with self.driver.session(database=self.database, default_access_mode=READ_ACCESS) as session:
                summary = session.run(Query("EXPLAIN " + query, timeout=self.timeout)).consume()
        except (Neo4jError, DriverError, OSError) as e:
            raise _translate(e, "Cypher query") from e
        qtype = summary.query_type or ""
        plan: dict[str, Any] | None = summary.plan
        operators = tuple(str(step.get("operatorType", "")).split("@")[0] for step in _walk(plan))
        procedures: list[str] = []
        for step in _walk(plan):
            if str(step.get("operatorType", "")).startswith("ProcedureCall"):
                details = str((step.get("args") or {}).get("Details", ""))
                procedures.extend(_PROCEDURE_IN_DETAILS.findall(details)[:1])
        if qtype != "r":
            kinds = {"rw": "writes", "w": "writes", "s": "changes the schema"}
            raise QueryRefusedError(
                f"Cypher query refused: it {kinds.get(qtype, 'is not a read')} (read-only endpoint)"
            )
        bad = [op for op in operators if _FORBIDDEN_OPERATORS.match(op)]
        if bad:
            raise QueryRefusedError(f"Cypher query refused: operator {bad[0]} is not allowed on a read-only endpoint")
        for name in procedures:
            if not _ALLOWED_PROCEDURES.match(name):
                raise QueryRefusedError(f"Cypher query refused: procedure {name} is not allowed here")
        return PlanCheck(qtype, operators, tuple(procedures))

    def stream(self, query: str, params: dict[str, Any], limit: int) -> Iterator[tuple[str, Any]]:
        """Run a client query and yield ``("columns", [...])``, then ``("row", [...])`` per record,
        then ``("end", {"truncated": bool, "rows": n})``; at most ``limit`` rows are read.

        The transaction stays open while the caller consumes the iterator; it is closed (and the
        rest of the result discarded by the server) when the limit is reached or the caller stops.

        Raises:
            ArgwebError: Before the first item, when the query fails to start; a failure while
                streaming is raised from the iterator.
        """
        session = self.driver.session(database=self.database, default_access_mode=READ_ACCESS, fetch_size=500)
        try:
            tx = session.begin_transaction(timeout=self.timeout)
            result = tx.run(query, params)
            keys = list(result.keys())
            # Wait for the first record here, so that a query failing or timing out before it
            # produces anything is an error of the request, not of a half-sent response.
            result.peek()
        except (Neo4jError, DriverError, OSError) as e:
            session.close()
            raise _translate(e, "Cypher query") from e
        return self._records(session, tx, result, keys, limit)

    def _records(self, session: Any, tx: Any, result: Any, keys: list[str], limit: int) -> Iterator[tuple[str, Any]]:
        count = 0
        truncated = False
        try:
            yield "columns", keys
            for record in result:
                if count >= limit:
                    truncated = True
                    break
                yield "row", [to_json(v) for v in record.values()]
                count += 1
            yield "end", {"truncated": truncated, "rows": count}
        except (Neo4jError, DriverError, OSError) as e:
            raise _translate(e, "Cypher query") from e
        finally:
            with contextlib.suppress(Neo4jError, DriverError, OSError):
                if not tx.closed():
                    tx.rollback()
            session.close()


class ReadOnlyStore(GraphStore):
    """A :class:`~graphstore.store.GraphStore` whose reads run in READ access mode with a timeout.

    For readers written against ``GraphStore.run`` (stats, AIF export): every statement goes
    through :class:`ReadRunner`, so a write fails in the database.
    """

    def __init__(self, driver: Driver, database: str = "neo4j", timeout: float = 10.0) -> None:
        super().__init__(driver, database)
        self.reader = ReadRunner(driver, database, timeout)

    def run(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """Run one read statement and return its records as dicts."""
        return self.reader.rows(query, "read", **params)
