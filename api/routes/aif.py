"""AIF JSON: export a dialogue or document, import a map (API key)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool

from api.routes import deps
from api.routes.schemas import AifImport, Problem
from api.services import aif as svc

router = APIRouter(tags=["aif"])


@router.get(
    "/aif/{discourse_id:path}",
    responses={404: {"model": Problem}, 400: {"model": Problem}, 503: {"model": Problem}},
)
def export_aif(
    discourse_id: str,
    request: Request,
    include_predicted: Annotated[
        bool, Query(description="also export predicted relations (with origin, score, model, modelVersion, runID)")
    ] = False,
    format: Annotated[
        Literal["aif", "xaif", "ova"],
        Query(description="aif (AIFdb JSON), xaif (oAMF: integer ids, text) or ova (OVA3: with the node layout)"),
    ] = "aif",
) -> dict[str, Any]:
    """The map of a dialogue or document as AIF, xAIF or OVA3 (the same as ``argweb export aif --dialogue``).

    A map read from AIF keeps its node and edge ids in AIF; predicted S-nodes get fresh ids beside them."""
    cfg = deps.settings(request)
    return svc.export_map(
        deps.driver(request),
        cfg.neo4j_database,
        discourse_id,
        cfg.cypher_timeout,
        include_predicted,
        format,
        undo=deps.undo(request),
    )


@router.post(
    "/aif",
    response_model=AifImport,
    status_code=201,
    dependencies=[Depends(deps.require_key)],
    responses={400: {"model": Problem}, 401: {"model": Problem}, 413: {"model": Problem}, 503: {"model": Problem}},
)
async def import_aif(
    request: Request,
    aif: Annotated[dict[str, Any], Body(description="an AIF map: nodes, edges, locutions, participants")],
    corpus: Annotated[str, Query(max_length=100, description="a non-gold corpus")] = svc.DEFAULT_IMPORT_CORPUS,
    name: Annotated[str, Query(max_length=100, description="dialogue name (graph id <corpus>:<name>)")] = "map",
) -> AifImport:
    """Import an AIF map as one dialogue (needs ``X-API-Key``); re-importing the same name replaces nothing
    and duplicates nothing (ingest merges by id). A gold corpus (qt30, m-arg, ...) is refused with 400:
    gold annotation changes only through its own ingest."""
    cfg = deps.settings(request)
    did, report = await run_in_threadpool(svc.import_map, deps.driver(request), cfg.neo4j_database, aif, corpus, name)
    return AifImport(id=did, corpus=corpus, nodes=report.nodes, edges=report.edges)
