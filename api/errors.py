"""What an error means to the caller: one mapping used by the CLI and the HTTP API.

``outcome(exc)`` gives the HTTP status, the process exit code and the message for any exception.
Client mistakes (bad arguments, malformed input files, invalid queries, unknown names) are 4xx and
exit code 2; a database that cannot be reached is 503 and exit code 1; any other argweb error is a
server-side failure (500, exit code 1).
"""

from __future__ import annotations

from typing import NamedTuple

from ontology.errors import (
    ArgwebError,
    ClientError,
    DatabaseUnavailableError,
    InvalidQueryError,
    LoaderError,
    NotFoundError,
)

EXIT_FAILURE = 1
EXIT_USAGE = 2

# Most specific class first: the first match decides.
_OUTCOMES: tuple[tuple[type[BaseException], int, int], ...] = (
    (NotFoundError, 404, EXIT_USAGE),
    (InvalidQueryError, 400, EXIT_USAGE),
    (LoaderError, 422, EXIT_USAGE),
    (ClientError, 400, EXIT_USAGE),
    (DatabaseUnavailableError, 503, EXIT_FAILURE),
    (ArgwebError, 500, EXIT_FAILURE),
)


class Outcome(NamedTuple):
    """How an error is reported.

    Attributes:
        http_status: Status code of the HTTP response.
        exit_code: Exit code of the command line.
        message: Text shown to the user.
    """

    http_status: int
    exit_code: int
    message: str


def outcome(exc: BaseException) -> Outcome:
    """The HTTP status, exit code and message for ``exc``.

    Args:
        exc: Any exception; those outside the :class:`~ontology.errors.ArgwebError` hierarchy are
            unexpected failures (500, exit code 1).

    Returns:
        The outcome of the first matching error class.
    """
    message = str(exc) or type(exc).__name__
    for cls, status, code in _OUTCOMES:
        if isinstance(exc, cls):
            return Outcome(status, code, message)
    return Outcome(500, EXIT_FAILURE, f"internal error: {type(exc).__name__}: {message}")
