"""Read-only SPARQL over the Oxigraph store."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from ontology.errors import ApiError
from ontology.namespaces import PREFIXES
from ontology.sparql import SparqlStore, python_value, serialize_result

# W3C result formats for SELECT/ASK, RDF syntaxes for CONSTRUCT/DESCRIBE.
SERIALIZED_FORMATS = ("json", "csv", "tsv", "xml", "nt", "ttl")


@dataclass
class SparqlAnswer:
    """The answer to a query, either serialized or as values.

    Attributes:
        form: ``solutions`` (SELECT), ``boolean`` (ASK) or ``graph`` (CONSTRUCT/DESCRIBE).
        body: The serialized answer (when a format was asked for, and always for graphs: Turtle).
        boolean: The ASK answer.
        variables: SELECT variables.
        rows: SELECT solutions as plain Python values (``None`` for unbound).
    """

    form: str
    body: bytes | None = None
    boolean: bool | None = None
    variables: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)


def result_form(result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples) -> str:
    """``boolean`` (ASK), ``graph`` (CONSTRUCT/DESCRIBE) or ``solutions`` (SELECT)."""
    if isinstance(result, ox.QueryBoolean):
        return "boolean"
    return "graph" if isinstance(result, ox.QueryTriples) else "solutions"


def compact(value: Any) -> str:
    """An IRI written with a known prefix (``aw:Support``); other values as text, unbound as ''."""
    if value is None:
        return ""
    text = str(value)
    for prefix, iri in PREFIXES.items():
        if text.startswith(iri) and len(text) > len(iri):
            return f"{prefix}:{text[len(iri) :]}"
    return text


def query(store_dir: Path, text: str, fmt: str | None = None) -> SparqlAnswer:
    """Run a read-only query on the store at ``store_dir``.

    Args:
        store_dir: The Oxigraph store.
        text: SELECT, ASK, CONSTRUCT or DESCRIBE (the usual prefixes are predeclared).
        fmt: One of :data:`SERIALIZED_FORMATS` for a serialized answer; ``None`` for values.

    Raises:
        ApiError: Unknown format.
        InvalidQueryError: Not valid SPARQL, or an update.
        NotFoundError: No store at ``store_dir``.
    """
    if fmt is not None and fmt not in SERIALIZED_FORMATS:
        raise ApiError(f"--format must be one of table, {', '.join(SERIALIZED_FORMATS)}, not {fmt!r}")
    with SparqlStore(store_dir, read_only=True) as store:
        result = store.query(text)
        form = result_form(result)
        if fmt is not None:
            return SparqlAnswer(form, body=serialize_result(result, fmt))
        if isinstance(result, ox.QueryBoolean):
            return SparqlAnswer(form, boolean=bool(result))
        if isinstance(result, ox.QueryTriples):
            return SparqlAnswer(form, body=serialize_result(result, "ttl"))
        names = [v.value for v in result.variables]
        rows = [[python_value(solution[name]) for name in names] for solution in result]
        return SparqlAnswer(form, variables=names, rows=rows)
