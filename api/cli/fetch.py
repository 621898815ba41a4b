"""``argweb fetch CORPUS|--all``: corpora from their official sources."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from api.cli_common import REPORTER, settings
from api.services.fetch import fetch as fetch_corpora


def register(app: typer.Typer) -> None:
    """Add ``fetch`` to the ``argweb`` app."""
    app.command("fetch")(fetch)


def fetch(
    corpus: Annotated[str | None, typer.Argument(help="Corpus folder name (molweni, stac, dialam-2024, ...).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Fetch every corpus.")] = False,
    dest: Annotated[
        Path | None, typer.Option("--dest", help="Corpora directory (default: ARGWEB_CORPORA or ./corpora).")
    ] = None,
    from_dir: Annotated[
        Path | None, typer.Option("--from", help="Copy from a local mirror laid out like shared/corpora.")
    ] = None,
    groups: Annotated[
        list[str] | None, typer.Option("--with", help="Also fetch an extra group: test (held-out splits), audio.")
    ] = None,
    timeout: Annotated[float, typer.Option(help="Network timeout per request in seconds.")] = 30.0,
) -> None:
    """Get corpus files from their official sources (or a local mirror) and verify their sha256."""
    fetch_corpora(
        settings(),
        corpus,
        all_corpora=all_,
        dest=dest,
        from_dir=from_dir,
        groups=groups,
        timeout=timeout,
        reporter=REPORTER,
    )
