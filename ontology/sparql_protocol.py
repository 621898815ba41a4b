"""The SPARQL Protocol rules argweb applies to a client's query before anyone evaluates it.

A query is checked (:func:`check_sparql`: a read-only query form, no ``SERVICE`` unless allowed, no
codepoint escapes outside literals) and its result format negotiated (:func:`negotiate`) the same
way whoever evaluates it: the embedded store's worker process or a SPARQL server
(:mod:`ontology.sparql_run`).
"""

from __future__ import annotations

import re

from ontology.client_query import check_query_size
from ontology.errors import ApiError, QueryRefusedError
from ontology.sparql import is_update, query_form

# Strings, IRIs and comments, which may contain anything; what is left is SPARQL syntax.
_LEXEMES = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|'(?:[^'\\\n]|\\.)*'"
    r"|<[^<>\"{}|^`\\\s]*>"
    r"|#[^\n]*",
    re.DOTALL,
)
_SERVICE = re.compile(r"(?<![\w:?$])SERVICE\b", re.IGNORECASE)

RESULT_MEDIA = {
    "json": "application/sparql-results+json",
    "csv": "text/csv; charset=utf-8",
    "tsv": "text/tab-separated-values; charset=utf-8",
    "xml": "application/sparql-results+xml",
}
GRAPH_MEDIA = {
    "ttl": "text/turtle; charset=utf-8",
    "nt": "application/n-triples",
    "jsonld": "application/ld+json",
}
_ACCEPT_RESULTS = {
    "application/sparql-results+json": "json",
    "application/json": "json",
    "text/csv": "csv",
    "text/tab-separated-values": "tsv",
    "application/sparql-results+xml": "xml",
    "application/xml": "xml",
}
_ACCEPT_GRAPH = {
    "text/turtle": "ttl",
    "application/x-turtle": "ttl",
    "application/n-triples": "nt",
    "text/plain": "nt",
    "application/ld+json": "jsonld",
    "application/json": "jsonld",
}


def syntax_only(query: str) -> str:
    """``query`` with strings, IRIs and comments blanked out."""
    return _LEXEMES.sub(" ", query)


def check_sparql(query: str, allow_service: bool = False) -> str:
    """The form (``SELECT``, ``ASK``, ``CONSTRUCT``, ``DESCRIBE``) of a query a client may run.

    Raises:
        ApiError: Empty or oversized, or not a query.
        QueryRefusedError: An update, a ``SERVICE`` clause (unless allowed), or codepoint escapes
            outside literals (which could spell a keyword the check cannot see).
    """
    check_query_size(query, "SPARQL")
    if is_update(query):
        raise QueryRefusedError(f"SPARQL {query_form(query)} refused: the endpoint is read-only")
    syntax = syntax_only(query)
    if "\\" in syntax:
        raise QueryRefusedError("SPARQL refused: codepoint escapes are only accepted inside literals and IRIs")
    if not allow_service and _SERVICE.search(syntax):
        raise QueryRefusedError("SPARQL SERVICE refused: federated queries are disabled on this endpoint")
    form = query_form(query)
    if form not in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE"):
        raise ApiError(f"not a SPARQL query (starts with {form or 'nothing'!r})")
    return form


def accepted(accept: str | None) -> list[str]:
    """The media types of an ``Accept`` header, most wanted first (by ``q``, then by order)."""
    ranked = []
    for i, part in enumerate((accept or "").split(",")):
        media, *params = (p.strip() for p in part.split(";"))
        q = 1.0
        for p in params:
            if p.startswith("q="):
                try:
                    q = float(p[2:])
                except ValueError:
                    q = 0.0
        if media:
            ranked.append((-q, i, media.lower()))
    return [m for _, _, m in sorted(ranked)]


# Names clients put in a ``format`` / ``output`` parameter (SPARQLWrapper, Fuseki, Virtuoso).
_FORMAT_ALIASES = {
    "json": ("json", "jsonld"),
    "application/sparql-results+json": ("json", None),
    "csv": ("csv", None),
    "tsv": ("tsv", None),
    "xml": ("xml", None),
    "ttl": (None, "ttl"),
    "turtle": (None, "ttl"),
    "n3": (None, "ttl"),
    "nt": (None, "nt"),
    "ntriples": (None, "nt"),
    "n-triples": (None, "nt"),
    "jsonld": (None, "jsonld"),
    "json-ld": (None, "jsonld"),
}


def negotiate(form: str, accept: str | None, fmt: str | None = None, strict: bool = True) -> str:
    """The result format for a query form from an explicit ``fmt`` or the ``Accept`` header.

    SELECT/ASK default to SPARQL JSON, CONSTRUCT/DESCRIBE to Turtle. ``fmt`` may be any name of
    :data:`_FORMAT_ALIASES` (``turtle``, ``json-ld`` ...); with ``strict`` off, a name that does not
    fit the form is ignored and ``Accept`` decides (clients send one ``format`` for every query).

    Raises:
        ApiError: With ``strict``, ``fmt`` does not fit the form.
    """
    graph = form in ("CONSTRUCT", "DESCRIBE")
    table = _ACCEPT_GRAPH if graph else _ACCEPT_RESULTS
    allowed = GRAPH_MEDIA if graph else RESULT_MEDIA
    if fmt is not None:
        results_name, graph_name = _FORMAT_ALIASES.get(fmt.strip().lower(), (None, None))
        chosen = graph_name if graph else results_name
        if chosen is not None:
            return chosen
        if strict:
            raise ApiError(f"format {fmt!r} does not fit a {form} query; use one of {', '.join(allowed)}")
    for media in accepted(accept):
        if media in table:
            return table[media]
        if media in ("*/*", "application/*", "text/*"):
            break
    return "ttl" if graph else "json"


def media_type(form: str, fmt: str) -> str:
    """The Content-Type of a result."""
    return GRAPH_MEDIA[fmt] if form in ("CONSTRUCT", "DESCRIBE") else RESULT_MEDIA[fmt]
