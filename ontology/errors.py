"""The one error hierarchy of argweb.

Every package raises a subclass of :class:`ArgwebError`; they live here because ``ontology`` is
the package every other package may import.
"""

from __future__ import annotations


class ArgwebError(Exception):
    """Root of every error argweb raises on purpose."""


class OntologyError(ArgwebError):
    """The ontology, a record or an RDF/SPARQL operation is invalid."""


class GraphStoreError(ArgwebError):
    """Neo4j could not be started, reached or written to."""


class LoaderError(GraphStoreError):
    """A corpus file is malformed; the message names the file and the record."""


class ModelError(ArgwebError):
    """Features, training, evaluation or prediction failed."""


class ApiError(ArgwebError):
    """The API or CLI was used with invalid arguments or settings."""


class NotFoundError(ApiError):
    """A named resource (node, dialogue, corpus, RDF resource) does not exist."""


class QueryRefusedError(ApiError):
    """A query was refused: it would write, change the schema, load files or call out."""


class QueryLimitError(ApiError):
    """A query ran past its time limit and was stopped."""


class UnauthorizedError(ApiError):
    """A write was attempted without the configured API key."""


class UnavailableError(GraphStoreError):
    """Neo4j or the SPARQL store cannot be reached right now (retry later)."""
