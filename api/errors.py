"""What an error means to the caller: one mapping used by the CLI and the HTTP API.

``outcome(exc)`` gives the HTTP status, the process exit code and the message for any exception.
Client mistakes (bad arguments, malformed input files, invalid queries, unknown names) are 4xx and
exit code 2 (an unknown task or training profile among them, everywhere); a database that cannot be
reached, a task with no model installed and a bounded kind of work with every slot taken (predictions,
SPARQL queries) are 503 and exit code 1; a write that met another
run holding what it needs (a bulk load, an ingest of the same corpus) or a half-loaded corpus is
409 and exit code 1; a full disk (``ENOSPC``, whatever raised it) is 507 and exit code 1, said in
those words; any other argweb error is a server-side failure (500, exit code 1).
"""

from __future__ import annotations

import errno
from typing import NamedTuple

from ontology.errors import (
    ArgwebError,
    BusyError,
    ClientError,
    CorpusIncompleteError,
    DatabaseUnavailableError,
    InvalidQueryError,
    LoaderError,
    ModelNotInstalledError,
    NotFoundError,
    QueryRefusedError,
    RequestTooLargeError,
    UnauthorizedError,
    WriteConflictError,
)

EXIT_FAILURE = 1
EXIT_USAGE = 2

# Most specific class first: the first match decides.
_OUTCOMES: tuple[tuple[type[BaseException], int, int], ...] = (
    (NotFoundError, 404, EXIT_USAGE),
    (UnauthorizedError, 401, EXIT_USAGE),
    (QueryRefusedError, 403, EXIT_USAGE),
    (InvalidQueryError, 400, EXIT_USAGE),
    (LoaderError, 422, EXIT_USAGE),
    (RequestTooLargeError, 413, EXIT_USAGE),
    (ClientError, 400, EXIT_USAGE),
    (DatabaseUnavailableError, 503, EXIT_FAILURE),
    (ModelNotInstalledError, 503, EXIT_FAILURE),
    (BusyError, 503, EXIT_FAILURE),
    (CorpusIncompleteError, 409, EXIT_FAILURE),
    (WriteConflictError, 409, EXIT_FAILURE),
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


# The disk is full: neither the caller's mistake nor a bug, and worth saying in those words.
INSUFFICIENT_STORAGE = 507


def no_space(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it was raised from) is a full disk (``ENOSPC``)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno == errno.ENOSPC:
            return True
        if "No space left on device" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def _printable(message: str) -> str:
    """``message`` without what no terminal or JSON encoder can write (a lone surrogate, NUL)."""
    return message.encode("utf-8", "backslashreplace").decode("utf-8").replace("\0", "\\x00")


def outcome(exc: BaseException) -> Outcome:
    """The HTTP status, exit code and message for ``exc``.

    Args:
        exc: Any exception; those outside the :class:`~ontology.errors.ArgwebError` hierarchy are
            unexpected failures (500, exit code 1).

    Returns:
        The outcome of the first matching error class.
    """
    message = _printable(str(exc) or type(exc).__name__)
    if no_space(exc):
        said = "" if "No space left on device" in message else "no space left on device: "
        return Outcome(INSUFFICIENT_STORAGE, EXIT_FAILURE, f"{said}{message}; free some disk space and run it again")
    for cls, status, code in _OUTCOMES:
        if isinstance(exc, cls):
            return Outcome(status, code, message)
    return Outcome(500, EXIT_FAILURE, f"internal error: {type(exc).__name__}: {message}")
