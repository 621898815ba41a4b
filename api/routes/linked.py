"""Linked Data: the IRIs of the RDF export dereference here, with content negotiation.

``<rdf_base><node id>`` (default ``https://w3id.org/argweb/data/<node id>``) is served at
``/data/<node id>``: Turtle, N-Triples or JSON-LD (the resource's description from the SPARQL
store), or, for a browser asking for HTML, a redirect to the graph page focused on the node.
"""

from __future__ import annotations

import functools
import threading
from functools import lru_cache
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Header, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from api.routes import deps
from api.routes.query import sparql_answer
from api.routes.schemas import Problem
from api.services.query import run_sparql, sparql_store
from api.settings import Settings
from ontology.errors import NotFoundError
from ontology.rdf import RdfMapper
from ontology.sparql import holds_triples
from ontology.sparql_protocol import accepted, media_type
from ontology.sparql_run import SparqlRun

router = APIRouter(tags=["linked data"])
_LD = {"text/turtle", "application/n-triples", "application/ld+json", "text/plain", "application/x-turtle"}
MAX_DESCRIPTION = 8 * 1024 * 1024


@lru_cache(maxsize=4)
def _mapper(base: str) -> RdfMapper:
    return RdfMapper(base)


def wants_html(accept: str | None) -> bool:
    """Whether a client prefers HTML to every RDF format it accepts."""
    ranked = accepted(accept)
    for media in ranked:
        if media in _LD:
            return False
        if media in ("text/html", "application/xhtml+xml"):
            return True
    return False


def acceptable(accept: str | None) -> bool:
    """Whether ``accept`` admits a format served here (RDF of :data:`_LD`, HTML, or a wildcard).

    A client asking only for, say, RDF/XML gets 406 rather than Turtle it did not ask for.
    """
    ranked = accepted(accept)
    served = _LD | {"text/html", "application/xhtml+xml", "*/*", "text/*", "application/*"}
    return not ranked or any(media in served for media in ranked)


def _describe(cfg: Settings, iri: str, accept: str | None, cancel: threading.Event) -> SparqlRun:
    # Through the worker pool and its cap, as every SPARQL evaluation (40 concurrent dereferences
    # once ran 40 workers beside a cap of 4).
    return run_sparql(
        sparql_store(cfg),
        f"DESCRIBE <{iri}>",
        accept=accept,
        timeout=cfg.sparql_timeout,
        memory_mb=cfg.sparql_memory_mb,
        max_workers=cfg.sparql_max_workers,
        cancel=cancel,
    )


@router.get(
    "/data/{resource:path}",
    responses={
        200: {"content": {m: {"schema": {"type": "string"}} for m in sorted(_LD)}, "description": "RDF"},
        303: {"description": "HTML requested: the graph page focused on the node"},
        404: {"model": Problem},
        406: {"model": Problem, "description": "Accept names no format served here (e.g. only RDF/XML)"},
        503: {"model": Problem},
    },
    response_class=Response,
)
async def dereference(resource: str, request: Request, accept: Annotated[str | None, Header()] = None) -> Response:
    """The RDF description of an exported resource, or the graph page for a browser."""
    cfg = deps.settings(request)
    if resource.startswith("graph/"):
        iri = cfg.rdf_base + "graph/" + quote(resource[len("graph/") :], safe="")
    else:
        iri = _mapper(cfg.rdf_base).iri(resource)
    if not acceptable(accept):
        # 406 as a problem document (the handler of HTTPException), naming what can be served.
        raise HTTPException(406, f"cannot answer {accept!r}; this resource is served as {', '.join(sorted(_LD))}")
    if wants_html(accept):
        return RedirectResponse(f"/?node={quote(resource, safe='')}", status_code=303)
    if any(c in iri for c in '<>"{}|^`\\ '):
        raise NotFoundError(f"no resource {iri} in the RDF export")
    run, body = await sparql_answer(request, functools.partial(_describe, cfg, iri, accept), MAX_DESCRIPTION)
    if not holds_triples(body, run.fmt):
        raise NotFoundError(f"no resource {iri} in the RDF export; run `argweb export rdf` after loading")
    return Response(body, media_type=media_type(run.form, run.fmt), headers={"Vary": "Accept"})
