"""Running Cypher statements through an injected driver, with driver failures turned into argweb errors.

Every store (graph, predictions) runs its statements the same way: a write or a READ-mode
transaction through ``driver.execute_query``, retried on transient conflicts, or an auto-commit
transaction for ``CALL {} IN TRANSACTIONS``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from neo4j import Driver, GraphDatabase, RoutingControl, Session
from neo4j.api import BookmarkManager
from neo4j.exceptions import DriverError, Neo4jError

from graphstore.errors import database_error

T = TypeVar("T")

# Raised by a statement that meets a node another transaction deleted under it (read committed
# isolation), or by `CREATE ... IF NOT EXISTS` racing the same statement of a concurrent ingest;
# like a deadlock, running the statement again is the remedy.
_RETRY_CODES = (
    "Neo.ClientError.Statement.EntityNotFound",
    "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
    "Neo.TransientError.",
)


# The database has not (yet) the transactions a bookmark names: on one server, because its store was
# replaced (a bulk load's import) after the bookmark was taken. Waiting does not help.
BOOKMARK_TIMEOUT = "Neo.TransientError.Transaction.BookmarkTimeout"


def retrying(work: Callable[[], T], attempts: int = 5, delay: float = 0.2) -> T:
    """Run ``work``, again with backoff when Neo4j reports a transient conflict.

    The driver's managed transactions already retry transient errors; this adds
    ``EntityNotFound`` (a node deleted by a concurrent transaction) for reads and writes.
    """
    for attempt in range(attempts):
        try:
            return work()
        except Neo4jError as e:
            code = e.code or ""
            if attempt == attempts - 1 or code == BOOKMARK_TIMEOUT or not code.startswith(_RETRY_CODES):
                raise
            time.sleep(delay * 2**attempt)
    raise AssertionError("unreachable")


class Statements:
    """Statement runners of a store that holds ``driver`` and ``database``.

    Statements share the driver's bookmarks (causal consistency on a cluster) until
    :meth:`forget_bookmarks`: after the store was replaced under a waiting writer (a bulk load's
    import), the old bookmarks name transactions the new store never had, and every statement
    carrying them would wait for them in vain.
    """

    driver: Driver
    database: str
    _bookmarks: BookmarkManager | None = None

    def forget_bookmarks(self) -> None:
        """Run this store's statements with bookmarks of their own from now on (see the class)."""
        self._bookmarks = GraphDatabase.bookmark_manager()

    def session(self) -> Session:
        """A session on the store's database, with the store's bookmarks."""
        if self._bookmarks is None:
            return self.driver.session(database=self.database)
        return self.driver.session(database=self.database, bookmark_manager=self._bookmarks)

    def run(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """Run one statement in its own write transaction and return the records as dicts.

        Raises:
            InvalidQueryError: The statement is malformed.
            DatabaseUnavailableError: Neo4j cannot be reached.
            GraphStoreError: Neo4j failed otherwise.
        """
        return self._execute(query, params, RoutingControl.WRITE)

    def read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """Run one statement in a read transaction (READ access mode: a write in it is refused).

        On a cluster the statement goes to a reader. Raises as :meth:`run`.
        """
        return self._execute(query, params, RoutingControl.READ)

    def _execute(self, query: str, params: dict[str, Any], routing: RoutingControl) -> list[dict[str, Any]]:
        def attempt() -> Any:
            extra: dict[str, Any] = {} if self._bookmarks is None else {"bookmark_manager_": self._bookmarks}
            return self.driver.execute_query(query, params, database_=self.database, routing_=routing, **extra)

        try:
            try:
                records, _, _ = retrying(attempt)
            except Neo4jError as e:
                if e.code != BOOKMARK_TIMEOUT:
                    raise
                # The store was replaced since the bookmarks were taken: once more without them.
                self.forget_bookmarks()
                records, _, _ = retrying(attempt)
        except (Neo4jError, DriverError, OSError) as e:
            raise database_error(e, "Neo4j query failed") from e
        return [r.data() for r in records]

    def run_auto(self, query: str, **params: Any) -> None:
        """Run a statement in an auto-commit transaction (needed by ``CALL {} IN TRANSACTIONS``)."""
        try:
            with self.session() as session:
                session.run(query, params).consume()
        except (Neo4jError, DriverError, OSError) as e:
            raise database_error(e, "Neo4j query failed") from e
