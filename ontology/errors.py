"""The one error hierarchy of argweb.

Every package raises a subclass of :class:`ArgwebError`; they live here because ``ontology`` is
the package every other package may import. What each class means for a caller (HTTP status,
exit code) is decided in one place, ``api/errors.py``.
"""

from __future__ import annotations

from collections.abc import Iterable


class ArgwebError(Exception):
    """Root of every error argweb raises on purpose."""


class ClientError(ArgwebError):
    """The caller's mistake: invalid arguments, input or query. Retrying the same request fails again."""


class InvalidQueryError(ClientError):
    """A Cypher or SPARQL query given by the caller is malformed or refused (e.g. an update)."""


class NotFoundError(ClientError):
    """Something the caller named (corpus, dialogue, file, store) does not exist."""


class OntologyError(ArgwebError):
    """The ontology, a record or an RDF/SPARQL operation is invalid."""


class GraphStoreError(ArgwebError):
    """Neo4j could not be written to or read from."""


class DatabaseUnavailableError(GraphStoreError):
    """Neo4j cannot be started or reached, or refuses the configured credentials."""


class CorpusIncompleteError(GraphStoreError):
    """A corpus is half-loaded (an ingest is running or was interrupted): reading it would give partial data."""


class WriteConflictError(GraphStoreError):
    """Another run holds what a write needs (a bulk load replacing the store, an ingest of the same corpus):
    nothing was written; the same write succeeds once that run has finished."""


class LoaderError(GraphStoreError, ClientError):
    """A corpus file is malformed; the message names the file and the record."""


class PredictionError(LoaderError):
    """Predicted relations are invalid (unknown or non-unit end nodes, a conflicting run id); nothing written."""


class ModelError(ArgwebError):
    """Features, training, evaluation or prediction failed."""


class ApiError(ClientError):
    """The API or CLI was used with invalid arguments or settings."""


class UnknownTaskError(ApiError):
    """The caller named a model task that is not registered; the message lists the known ones."""

    @classmethod
    def check(cls, task: str, known: Iterable[str]) -> None:
        """Raise unless ``task`` is one of ``known``.

        Raises:
            UnknownTaskError: ``task`` is not known; the message names it and lists the known ones.
        """
        names = list(known)
        if task not in names:
            raise cls(f"unknown task {task!r}; expected one of {', '.join(names)}")


class UnknownProfileError(ApiError):
    """The caller named a training profile (recipe) its task does not have; the message lists the known ones."""

    @classmethod
    def check(cls, profile: str, known: Iterable[str], task: str | None = None) -> None:
        """Raise unless ``profile`` is one of ``known``, the profiles of ``task``.

        Every task checks its profile here, so an unknown one is the caller's mistake (400, exit
        code 2) whichever task was asked.

        Raises:
            UnknownProfileError: ``profile`` is not known; the message names it, the task and the known ones.
        """
        names = sorted(known)
        if profile not in names:
            of = f" for the {task} task" if task else ""
            raise cls(f"unknown profile {profile!r}{of}; expected one of {', '.join(names)}")


class ModelNotInstalledError(ModelError):
    """No model is installed for what was asked (train one or install the shipped one): the server
    or command is not at fault in what it was asked, and the same request succeeds once one is."""


class BusyError(ArgwebError):
    """Every slot of a bounded kind of work (predictions, SPARQL queries) is taken: the request is
    refused, not queued, and the same request succeeds once a slot is free."""


class QueryRefusedError(InvalidQueryError):
    """A query was refused: it would write, change the schema, load files or call out."""


class QueryLimitError(InvalidQueryError):
    """A query ran past its time limit (or memory cap) and was stopped."""


class RequestTooLargeError(ClientError):
    """A request holds more than a limit allows (items, string length, nesting): refused before it is processed."""


class UnauthorizedError(ClientError):
    """A write was attempted without the configured API key."""


class StoreNotEmptyError(ApiError):
    """A bulk first load was asked of a database that holds data (the importer would replace it)."""
