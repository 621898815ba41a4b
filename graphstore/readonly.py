"""Read-only execution of Cypher: READ access mode, a server-side timeout, a row limit.

Everything the HTTP API reads goes through :class:`ReadRunner`. The database is the real guard
against writes: sessions are opened in READ access mode and every statement runs inside a managed
read transaction with a timeout, so a write clause, a schema command or a writing procedure fails
in the server whatever the query text looks like. :meth:`ReadRunner.check` adds a second, earlier
guard for client queries: it asks the planner (``EXPLAIN``) what kind of statement it is and which
operators it would run, and refuses anything that is not a plain read.

Neo4j cannot interrupt one expression: a ``reduce`` or a list comprehension over a long list is
evaluated inside a single row, and neither the transaction timeout nor ``TERMINATE TRANSACTION``
stops it (the transaction is marked terminated and keeps its core busy until the database
stops). So :func:`check_cost` refuses, before anything runs, the constructs that loop inside one
expression without bound (``reduce``, nested loops, ``range`` outside ``UNWIND``), and a watchdog
(:class:`Watchdog`) ends every client transaction that outlives its time limit: it terminates the
transaction, checks in ``SHOW TRANSACTIONS`` that it really ended, and cuts the transaction's
connection so that the request is answered; one that survives is logged and counted
(:data:`SURVIVORS`). Parameters are checked (:func:`check_parameters`) before they reach the
driver, which cannot encode some JSON values and would leave its connection in use.

Neo4j failures are translated into the argweb error hierarchy: unreachable or overloaded ->
:class:`~ontology.errors.DatabaseUnavailableError`, a time limit -> :class:`~ontology.errors.QueryLimitError`,
a refused write -> :class:`~ontology.errors.QueryRefusedError`, bad syntax -> :class:`~ontology.errors.ApiError`.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import math
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from neo4j import READ_ACCESS, Driver, ManagedTransaction, Query, unit_of_work
from neo4j.exceptions import (
    ClientError,
    ConnectionPoolError,
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

log = logging.getLogger("argweb.readonly")

# -- Parameters ------------------------------------------------------------------------------------

MAX_PARAMETER_DEPTH = 32
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1


def check_parameters(params: dict[str, Any]) -> None:
    """Refuse query parameters the driver cannot send, naming the first bad one.

    The driver encodes parameters while the request is being written: a value it cannot encode
    fails there, after a connection was taken, and leaves that connection unusable. JSON can carry
    such values, so they are refused here: strings (and map keys) that are not valid Unicode (a
    lone surrogate), integers outside the 64-bit range Cypher has, and nesting deeper than
    :data:`MAX_PARAMETER_DEPTH`.

    Raises:
        ApiError: Names the parameter (``$name``, then ``.key`` and ``[index]`` down to the value).
    """
    if not isinstance(params, dict):
        raise ApiError("Cypher parameters must be a map of names to values")
    stack: list[tuple[str, Any, int]] = [(f"${_printable(k)}", v, 1) for k, v in params.items()]
    for key in params:
        _check_text(key, f"parameter name {_printable(key)!r}")
    while stack:
        where, value, depth = stack.pop()
        if depth > MAX_PARAMETER_DEPTH:
            raise ApiError(f"Cypher parameter {where}: nested deeper than {MAX_PARAMETER_DEPTH} levels")
        if value is None or isinstance(value, bool | float):
            continue
        if isinstance(value, int):
            if not _INT_MIN <= value <= _INT_MAX:
                raise ApiError(f"Cypher parameter {where}: integer outside the 64-bit range of Cypher")
        elif isinstance(value, str):
            _check_text(value, f"Cypher parameter {where}")
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item, depth + 1) for i, item in enumerate(value))
        elif isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise ApiError(f"Cypher parameter {where}: map keys must be strings")
                _check_text(key, f"Cypher parameter {where}: key {_printable(key)!r}")
                stack.append((f"{where}.{_printable(key)}", item, depth + 1))
        else:
            raise ApiError(f"Cypher parameter {where}: {type(value).__name__} values cannot be sent")


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")[:80]


def _check_text(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ApiError(f"{what}: not valid Unicode (a lone surrogate at character {e.start})") from e


# -- Cost guard ------------------------------------------------------------------------------------

MAX_RANGE = 100_000
# Strings, backquoted names (a doubled backquote inside is one backquote) and comments, which may
# contain anything; what is left is Cypher syntax.
_CYPHER_LEXEMES = re.compile(
    r"'(?:[^'\\]|\\.)*'" r'|"(?:[^"\\]|\\.)*"' r"|`(?:[^`]|``)*`" r"|//[^\n]*" r"|/\*.*?\*/",
    re.DOTALL,
)
# A name as Cypher reads it unquoted: a letter (any script) or underscore, then letters, digits, underscores.
_IDENT = r"[^\W\d]\w*"
_PLAIN_NAME = re.compile(rf"{_IDENT}")
# Loops inside one expression: list comprehensions and the quantifier predicates.
_LOOP = re.compile(rf"\[\s*{_IDENT}\s+IN\b|\b(?:all|any|none|single)\s*\(\s*{_IDENT}\s+IN\b", re.IGNORECASE)
_REDUCE = re.compile(r"\breduce\s*\(", re.IGNORECASE)
_RANGE = re.compile(r"\brange\s*\(", re.IGNORECASE)
_UNWIND_BEFORE = re.compile(r"\bUNWIND\s*$", re.IGNORECASE)
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")


def _cypher_syntax(query: str) -> str:
    """``query`` as the parser reads it, with strings and comments blanked out (same length).

    A backquoted name is the same name to Neo4j: `` `range`(1, 9) `` calls ``range`` and
    ``[`x` IN l | ...]`` is a list comprehension. So a backquoted name that is also a plain name is
    written without its backquotes (padded to the same length), and any other one becomes a plain
    placeholder name of underscores: every check below then sees the functions and variables the
    planner sees.
    """

    def blank(m: re.Match[str]) -> str:
        text = m.group()
        if text[0] != "`":
            return " " * len(text)
        name = text[1:-1]
        # UNWIND is let through by the range check; a variable of that name is not the clause.
        if _PLAIN_NAME.fullmatch(name) and name.upper() != "UNWIND":
            return name + "  "
        return "_" * len(text)

    return _CYPHER_LEXEMES.sub(blank, query)


def _closing(text: str, start: int) -> int:
    """Index just past the bracket that closes the one opened at ``start`` (or the end)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def check_cost(query: str) -> None:
    """Refuse a client query with a loop inside one expression that the time limit cannot stop.

    Neo4j checks its time limit between rows, not inside an expression, so these are refused:
    ``reduce`` (its accumulator can grow at every step, the cost quadratic or worse); a list
    comprehension or ``all``/``any``/``none``/``single`` inside another (the cost multiplies); and
    ``range`` anywhere but directly after ``UNWIND`` unless its bounds are integers spanning at most
    :data:`MAX_RANGE` values (``UNWIND range(...)`` produces rows, which the time limit does stop).

    Raises:
        QueryRefusedError: Names the construct.
    """
    syntax = _cypher_syntax(query)
    if _REDUCE.search(syntax):
        raise QueryRefusedError(
            "Cypher query refused: reduce() is not allowed here (one expression cannot be stopped by the time limit)"
        )
    spans = []
    for m in _LOOP.finditer(syntax):
        start = m.start() if syntax[m.start()] == "[" else syntax.index("(", m.start())
        spans.append((start, _closing(syntax, start)))
    for (a, end_a), (b, _) in itertools.combinations(sorted(spans), 2):
        if a < b < end_a:
            raise QueryRefusedError(
                "Cypher query refused: a list comprehension or all/any/none/single inside another is not "
                "allowed here (one expression cannot be stopped by the time limit); UNWIND the outer list instead"
            )
    for m in _RANGE.finditer(syntax):
        if _UNWIND_BEFORE.search(syntax[: m.start()]):
            continue
        paren = syntax.index("(", m.start())
        args = syntax[paren + 1 : _closing(syntax, paren) - 1].split(",")
        if not 2 <= len(args) <= 3 or not all(_INTEGER.match(a) for a in args):
            raise QueryRefusedError(
                "Cypher query refused: range() outside UNWIND needs integer bounds written in the query "
                f"(at most {MAX_RANGE} values); UNWIND range(...) has no such limit"
            )
        low, high, *rest = (int(a) for a in args)
        step = rest[0] if rest else 1
        if step == 0 or (high - low) // step + 1 > MAX_RANGE:
            raise QueryRefusedError(
                f"Cypher query refused: range() outside UNWIND may span at most {MAX_RANGE} values "
                "(a step of 0 never ends); UNWIND range(...) has no such limit"
            )


# -- Watchdog --------------------------------------------------------------------------------------

# Seconds past the server's time limit before the watchdog acts: the server's own timeout ends an
# ordinary query first and answers the client itself.
WATCHDOG_GRACE = 2.0
# Seconds the watchdog waits for a terminated transaction to leave SHOW TRANSACTIONS.
WATCHDOG_SETTLE = 3.0
_META = "argweb_query"
SURVIVORS: list[str] = []
"""Tags of client transactions that were still running after termination (logged as errors)."""


@dataclass(order=True)
class _Watch:
    due: float
    tag: str = field(compare=False)
    stream: CypherStream = field(compare=False)


class Watchdog:
    """One thread that ends client transactions still open past their time limit.

    At ``timeout + WATCHDOG_GRACE`` after a transaction began, if its stream is still open:
    ``TERMINATE TRANSACTION`` on a separate session, then poll ``SHOW TRANSACTIONS`` for up to
    :data:`WATCHDOG_SETTLE` seconds until it is gone, then cut the stream's connection, which
    unblocks a request thread waiting for a server that will not answer.
    """

    def __init__(self) -> None:
        self._heap: list[_Watch] = []
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, stream: CypherStream, due: float) -> None:
        """Act on ``stream`` at the monotonic time ``due`` unless it is closed by then."""
        with self._cond:
            heapq.heappush(self._heap, _Watch(due, stream.tag, stream))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="argweb-cypher-watchdog", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap or self._heap[0].due > time.monotonic():
                    wait = self._heap[0].due - time.monotonic() if self._heap else None
                    self._cond.wait(timeout=wait)
                item = heapq.heappop(self._heap)
            if not item.stream.closed:
                try:
                    item.stream.expire()
                except Exception:  # the watchdog must outlive any one failure
                    log.exception("watchdog failed on Cypher transaction %s", item.tag)


WATCHDOG = Watchdog()


def tagged_transactions(driver: Driver, database: str, tag: str | None = None) -> list[dict[str, Any]]:
    """Open client transactions (started by :meth:`ReadRunner.stream`), optionally of one tag."""
    query = (
        "SHOW TRANSACTIONS YIELD transactionId, metaData, status, elapsedTime "
        f"WHERE metaData['{_META}'] IS NOT NULL AND ($tag IS NULL OR metaData['{_META}'] = $tag) "
        f"RETURN transactionId AS id, metaData['{_META}'] AS tag, status"
    )
    with driver.session(database=database) as session:
        return [r.data() for r in session.run(query, tag=tag)]


def _cut(session: Any) -> None:
    """Shut the socket of ``session``'s connection down, waking a thread blocked reading it.

    The driver has no public way to abandon a request whose answer never comes; a closed socket
    makes the blocked read fail, and the pool then discards the connection.
    """
    connection = getattr(session, "_connection", None)
    raw = getattr(getattr(connection, "socket", None), "_socket", None)
    if isinstance(raw, socket.socket):
        with contextlib.suppress(OSError):
            raw.shutdown(socket.SHUT_RDWR)
    elif connection is not None:
        with contextlib.suppress(Exception):
            connection.kill()


class CypherStream:
    """The items of one client query, read from its own session and transaction.

    Iterate it for ``("columns", [...])``, ``("row", [...])`` per record and ``("end", {...})``;
    :meth:`close` (idempotent, also at the end of the iteration) releases the transaction and the
    session on every path.
    """

    def __init__(self, runner: ReadRunner, session: Any, tag: str, limit: int) -> None:
        self.runner = runner
        self.session = session
        self.tag = tag
        self.limit = limit
        self.tx: Any = None
        self.result: Any = None
        self.keys: list[str] = []
        self.closed = False
        self.expired = False
        self.on_close: list[Callable[[], None]] = []
        """Called once when the stream is closed (whoever closes it), e.g. to free a slot."""
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        count = 0
        truncated = False
        try:
            yield "columns", self.keys
            for record in self.result:
                if count >= self.limit:
                    truncated = True
                    break
                yield "row", [to_json(v) for v in record.values()]
                count += 1
            yield "end", {"truncated": truncated, "rows": count}
        except (Neo4jError, DriverError, OSError) as e:
            raise self.error(e) from e
        finally:
            self.close()

    def error(self, e: Exception) -> ArgwebError:
        """The argweb error for a failure of this stream (a cut connection is the time limit)."""
        if self.expired:
            return QueryLimitError(f"Cypher query was stopped by the time limit ({self.runner.timeout:g} s)")
        return _translate(e, "Cypher query")

    def close(self) -> None:
        """Roll the transaction back and close the session (once; safe from any thread)."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        with contextlib.suppress(Exception):
            if self.tx is not None and not self.tx.closed():
                self.tx.rollback()
        with contextlib.suppress(Exception):
            self.session.close()
        for callback in self.on_close:
            callback()

    def expire(self) -> None:
        """End a transaction past its time limit (the watchdog): terminate, check, cut, close."""
        self.expired = True
        driver, database = self.runner.driver, self.runner.database
        with driver.session(database=database) as session:
            session.run(
                "SHOW TRANSACTIONS YIELD transactionId, metaData "
                f"WHERE metaData['{_META}'] = $tag "
                "TERMINATE TRANSACTIONS transactionId YIELD message RETURN message",
                tag=self.tag,
            ).consume()
        deadline = time.monotonic() + WATCHDOG_SETTLE
        while tagged_transactions(driver, database, self.tag):
            if time.monotonic() > deadline:
                SURVIVORS.append(self.tag)
                log.error(
                    "Cypher transaction %s still runs after its time limit and termination: one expression that "
                    "Neo4j cannot interrupt; it keeps a database core until it ends or the database restarts",
                    self.tag,
                )
                break
            time.sleep(0.1)
        _cut(self.session)
        self.close()


_EXPLAIN = "EXPLAIN "
_POSITION = re.compile(r"\(line (\d+), column (\d+) \(offset: (\d+)\)\)")


def _unexplained(message: str) -> str:
    """``message`` with the positions Neo4j gave in ``EXPLAIN <query>`` moved to ``<query>`` itself."""

    def shift(m: re.Match[str]) -> str:
        line, column, offset = (int(g) for g in m.groups())
        if line == 1:
            column = max(column - len(_EXPLAIN), 1)
        return f"(line {line}, column {column} (offset: {max(offset - len(_EXPLAIN), 0)}))"

    return _POSITION.sub(shift, message)


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
    if isinstance(e, ConnectionPoolError):
        return DatabaseUnavailableError("Neo4j is busy: every connection of the pool is in use; retry later")
    if isinstance(e, DriverError):
        return DatabaseUnavailableError(f"Neo4j driver error: {type(e).__name__}")
    return DatabaseUnavailableError(f"Neo4j failed: {type(e).__name__}")


def non_finite(value: float) -> str:
    """A NaN or infinite float as the string JSON answers carry (JSON has no such numbers).

    ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``: the names JavaScript, Jackson and Python's own
    ``float()`` read back, so a client that expects a number can still recover it.
    """
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


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
    if isinstance(value, float) and not math.isfinite(value):
        return non_finite(value)
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
                administration command or calls a procedure outside the read-only allow-list; or it
                loops inside one expression beyond what the time limit can stop (:func:`check_cost`).
            ApiError: The query does not parse (several statements, syntax errors).
        """
        try:
            with self.driver.session(database=self.database, default_access_mode=READ_ACCESS) as session:
                summary = session.run(Query(_EXPLAIN + query, timeout=self.timeout)).consume()
        except (Neo4jError, DriverError, OSError) as e:
            error = _translate(e, "Cypher query")
            # The position Neo4j names is in the EXPLAIN statement; the client's query starts later.
            raise type(error)(_unexplained(str(error))) from e
        qtype = summary.query_type or ""
        plan: dict[str, Any] | None = summary.plan
        operators = tuple(str(step.get("operatorType", "")).split("@")[0] for step in _walk(plan))
        procedures: list[str] = []
        for step in _walk(plan):
            if str(step.get("operatorType", "")).startswith("ProcedureCall"):
                details = str((step.get("args") or {}).get("Details", ""))
                procedures.extend(_PROCEDURE_IN_DETAILS.findall(details)[:1])
        # Procedures first: the planner types a dbms.* call as "s", which says nothing about what it does.
        for name in procedures:
            if not _ALLOWED_PROCEDURES.match(name):
                raise QueryRefusedError(
                    f"Cypher query refused: procedure {name} is not allowed here (read-only endpoint)"
                )
        if qtype != "r":
            kinds = {"rw": "writes", "w": "writes", "s": "changes the schema or administers the database"}
            raise QueryRefusedError(
                f"Cypher query refused: it {kinds.get(qtype, 'is not a read')} (read-only endpoint)"
            )
        bad = [op for op in operators if _FORBIDDEN_OPERATORS.match(op)]
        if bad:
            raise QueryRefusedError(f"Cypher query refused: operator {bad[0]} is not allowed on a read-only endpoint")
        check_cost(query)
        return PlanCheck(qtype, operators, tuple(procedures))

    def stream(self, query: str, params: dict[str, Any], limit: int) -> CypherStream:
        """Run a client query; iterate the returned stream for ``("columns", [...])``, then
        ``("row", [...])`` per record, then ``("end", {"truncated": bool, "rows": n})``; at most
        ``limit`` rows are read.

        The transaction stays open while the caller consumes the stream; it is closed (and the rest
        of the result discarded by the server) when the limit is reached, the iteration ends or
        :meth:`CypherStream.close` is called. The parameters are checked before anything is sent;
        the :data:`WATCHDOG` ends the transaction if it is still open ``timeout`` +
        :data:`WATCHDOG_GRACE` seconds after it began.

        Raises:
            ApiError: A parameter the driver cannot send (:func:`check_parameters`).
            ArgwebError: Before the first item, when the query fails to start; a failure while
                streaming is raised from the iteration.
        """
        check_parameters(params)
        session = self.driver.session(database=self.database, default_access_mode=READ_ACCESS, fetch_size=500)
        stream = CypherStream(self, session, uuid.uuid4().hex, limit)
        try:
            stream.tx = session.begin_transaction(timeout=self.timeout, metadata={_META: stream.tag})
            WATCHDOG.watch(stream, time.monotonic() + self.timeout + WATCHDOG_GRACE)
            stream.result = stream.tx.run(query, params)
            stream.keys = list(stream.result.keys())
            # Wait for the first record here, so that a query failing or timing out before it
            # produces anything is an error of the request, not of a half-sent response.
            stream.result.peek()
        except (Neo4jError, DriverError, OSError) as e:
            stream.close()
            raise stream.error(e) from e
        except BaseException:
            stream.close()
            raise
        return stream


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
