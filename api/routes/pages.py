"""HTML pages: the graph page at ``/`` and a dashboard per corpus; the built static bundle."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Request
from fastapi import Path as PathParam
from fastapi.concurrency import run_in_threadpool
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, Response

from api import dashboard as plots
from api.routes import deps
from api.routes.schemas import Problem
from api.services import report
from ontology.errors import DatabaseUnavailableError, NotFoundError

WEB = Path(__file__).resolve().parent.parent / "web"
router = APIRouter(include_in_schema=True, tags=["pages"])
_STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".map": "application/json"}


@router.get("/", response_class=HTMLResponse)
def graph_page() -> FileResponse:
    """The graph page: choose a corpus and a dialogue or document and see its graph."""
    return FileResponse(WEB / "index.html", media_type="text/html")


@router.get("/workbench", response_class=HTMLResponse)
def workbench_page() -> FileResponse:
    """The query workbench: Cypher and SPARQL editors (read-only, through ``/cypher`` and
    ``/sparql``), results as a table, the competency questions one click away."""
    return FileResponse(WEB / "workbench.html", media_type="text/html")


@router.get("/docs", response_class=HTMLResponse, include_in_schema=False)
def docs(request: Request) -> HTMLResponse:
    """The API page (Swagger UI), its script and style served from ``/static`` so that it renders offline."""
    return get_swagger_ui_html(
        openapi_url=request.app.openapi_url or "/openapi.json",
        title="argweb · API",
        swagger_js_url="/static/swagger-ui-bundle.js",
        swagger_css_url="/static/swagger-ui.css",
        swagger_favicon_url="data:,",
    )


@router.get("/static/{name}", response_class=Response, responses={404: {"model": Problem}})
def static(name: Annotated[str, PathParam(pattern=r"^[A-Za-z0-9_.-]+$")]) -> FileResponse:
    """The page's built script and style (no CDN)."""
    path = WEB / "static" / name
    if path.suffix not in _STATIC_TYPES or not path.is_file():
        if name in ("graph.js", "workbench.js"):
            raise DatabaseUnavailableError(
                "the graph page is not built: run scripts/setup.sh (npm run build in api/web)"
            )
        raise NotFoundError(f"no static file {name!r}")
    return FileResponse(path, media_type=_STATIC_TYPES[path.suffix], headers={"Cache-Control": "max-age=300"})


def _score(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _comparison_table(data: report.CorpusData) -> str:
    """Each prediction run against gold per relation type, with its model and run (HTML)."""
    if not data.comparisons:
        return ""
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "model",
            "run",
            "maps",
            "type",
            "gold",
            "predicted",
            "matched",
            "other type",
            "missed",
            "P",
            "R",
            "F1",
        )
    )
    rows = []
    for c in data.comparisons:
        for t in [*c.types, c.micro]:
            cells = [
                f"{c.run.model} {c.run.model_version}",
                c.run.run_id,
                str(c.maps),
                t.type,
                *(str(v) for v in (t.gold, t.predicted, t.matched, t.other_type, t.missed)),
                *(_score(v) for v in (t.precision, t.recall, t.f1)),
            ]
            micro = ' class="micro"' if t.type == "micro" else ""
            tds = "".join(f"<td>{html.escape(v)}</td>" for v in cells)
            rows.append(
                f'<tr data-run="{html.escape(c.run.run_id)}" data-type="{html.escape(t.type)}"{micro}>{tds}</tr>'
            )
    return (
        '<section class="against-gold"><h2>Predicted against gold</h2><p class="muted">Edges (source–target '
        "pairs) per relation type, micro over the maps each run covers; a prediction matches when gold has "
        "the same ends and type (docs/graph-model.md). Open a map with “compare with gold” to see them drawn.</p>"
        f'<table id="against-gold"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></section>'
    )


@router.get("/dashboard/{corpus}", response_class=HTMLResponse, responses={404: {"model": Problem}})
def dashboard(corpus: str, request: Request) -> HTMLResponse:
    """Plots of a corpus: relation types, utterances per speaker, relations per topic, agreement
    against trust and confidence thresholds, gold and predicted per type, and each prediction run
    against gold per type with its model and run; a plot that does not apply is left out."""
    data = report.corpus_data(deps.browse(request), corpus)  # 404 for an unknown corpus
    name = html.escape(corpus)
    figures = "".join(
        f'<figure data-plot="{plot}"><img src="/dashboard/{name}/{plot}.svg" alt="{html.escape(plots.PLOTS[plot])}" '
        f'loading="lazy"><figcaption>{html.escape(plots.PLOTS[plot])} · '
        f'<a href="/dashboard/{name}/{plot}.png">PNG</a></figcaption></figure>'
        for plot in plots.applicable(data)
    )
    page = (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>argweb · {name}</title><link rel=stylesheet href=/static/page.css></head>"
        f'<body class=dashboard><header><a href="/">argweb</a> <h1>corpus {name}</h1></header>'
        f"{_comparison_table(data)}<main class=plots>{figures}</main></body></html>"
    )
    return HTMLResponse(page)


@router.get(
    "/dashboard/{corpus}/{plot}.{ext}",
    response_class=Response,
    responses={200: {"content": {"image/svg+xml": {}, "image/png": {}}}, 404: {"model": Problem}},
)
async def dashboard_plot(
    corpus: str,
    plot: str,
    ext: Annotated[str, PathParam(pattern="^(svg|png)$")],
    request: Request,
) -> Response:
    """One dashboard plot as SVG or PNG."""
    if plot not in plots.PLOTS:
        raise NotFoundError(f"no plot {plot!r}; plots: {', '.join(plots.PLOTS)}")
    service = deps.browse(request)
    data = await run_in_threadpool(report.corpus_data, service, corpus, plot == "predicted-against-gold")
    body = await run_in_threadpool(plots.render, plot, data, ext)
    return Response(body, media_type="image/svg+xml" if ext == "svg" else "image/png")
