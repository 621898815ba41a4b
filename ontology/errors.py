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


class PredictionError(LoaderError):
    """Predicted relations are invalid (unknown or non-unit end nodes, a conflicting run id); nothing written."""


class ModelError(ArgwebError):
    """Features, training, evaluation or prediction failed."""


class ApiError(ArgwebError):
    """The API or CLI was used with invalid arguments or settings."""
