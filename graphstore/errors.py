"""Turn Neo4j driver exceptions into argweb errors, telling the caller's mistakes from an absent database."""

from __future__ import annotations

from neo4j.exceptions import (
    AuthError,
    ClientError,
    ConnectionPoolError,
    ServiceUnavailable,
    SessionExpired,
)

from ontology.errors import DatabaseUnavailableError, GraphStoreError, InvalidQueryError

# Server-side codes that mean "this statement is wrong", not "the database is in trouble".
_QUERY_CODES = ("Neo.ClientError.Statement.", "Neo.ClientError.Procedure.")


def database_error(exc: BaseException, context: str) -> GraphStoreError | InvalidQueryError:
    """The argweb error for a driver exception raised while doing ``context``.

    Args:
        exc: What the driver (or the socket under it) raised.
        context: What was being done, prefixed to the message (e.g. ``"Neo4j query failed"``).

    Returns:
        :class:`~ontology.errors.DatabaseUnavailableError` when the server cannot be reached,
        refuses the credentials or every pooled connection is in use,
        :class:`~ontology.errors.InvalidQueryError` for a malformed or refused statement (syntax,
        unknown procedure, write in a read transaction), else
        :class:`~ontology.errors.GraphStoreError`.
    """
    message = f"{context}: {exc}"
    if isinstance(exc, AuthError | ServiceUnavailable | SessionExpired | ConnectionPoolError | OSError):
        return DatabaseUnavailableError(message)
    if isinstance(exc, ClientError) and str(exc.code or "").startswith(_QUERY_CODES):
        return InvalidQueryError(message)
    return GraphStoreError(message)
