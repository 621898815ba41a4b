"""CLI commands for audio features, AIF export and corpus fetching (registered by ``api.cli``).

* ``argweb features audio --corpus m-arg --audio-dir DIR [--cache-dir D]``
* ``argweb export aif (--dialogue ID | --corpus NAME) OUT``
* ``argweb fetch CORPUS|--all [--dest DIR] [--from LOCAL_DIR] [--with GROUP]``
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from api.cli_common import group, progress_bar


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``argweb`` app."""
    features_app = group(app, "features", "Compute features of graph units.")
    export_app = group(app, "export", "Export the graph.")
    features_app.command("audio")(features_audio)
    export_app.command("aif")(export_aif)
    app.command("fetch")(fetch)


def features_audio(
    audio_dir: Annotated[Path, typer.Option("--audio-dir", help="Folder with the recordings of the debate parts.")],
    corpus: Annotated[str, typer.Option(help="Corpus whose timed utterances to process.")] = "m-arg",
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Feature cache (default <data dir>/features/audio/<corpus>).")
    ] = None,
    buffer: Annotated[float, typer.Option(help="Seconds added before and after each utterance.")] = 2.0,
) -> None:
    """MFCC, spectral and chroma features per utterance (M-Arg paper), cached as one .npz per part.

    Utterances are the corpus's locutions with start/end times; each debate part's recording is
    looked up in AUDIO_DIR by its official name (us_election_2020_..._part1.mp3) or its part id
    (00.wav). Re-running skips utterances already cached.
    """

    from api.cli import _fail, _settings, console, open_driver
    from api.settings import Settings
    from gnn.audio import FeatureConfig, Segment, compute_features
    from graphstore.loaders.marg import PART_NAMES
    from graphstore.store import GraphStore
    from graphstore.units import find_part_audio, timed_utterances
    from ontology.errors import ApiError, ArgwebError

    settings: Settings = _settings()
    target = cache_dir or settings.data_dir / "features" / "audio" / corpus
    try:
        if not audio_dir.is_dir():
            raise ApiError(f"{audio_dir}: no such directory")
        with open_driver(settings) as driver:
            utterances = timed_utterances(GraphStore(driver, settings.neo4j_database), corpus)
        if not utterances:
            raise ApiError(f"corpus {corpus!r} has no utterances with start/end times in the graph")
        segments: list[Segment] = []
        missing: dict[str, int] = {}
        files: dict[str, Path | None] = {}
        for u in utterances:
            part = u.part or ""
            if part not in files:
                files[part] = find_part_audio(audio_dir, part, PART_NAMES) if part else None
            path = files[part]
            if path is None:
                missing[part or "(no part)"] = missing.get(part or "(no part)", 0) + 1
                continue
            segments.append(Segment(u.id, path, u.start, u.end))
        for part, n in sorted(missing.items()):
            console.print(f"[yellow]part {part}: no recording in {audio_dir}, {n} utterances skipped[/]")
        if not segments:
            raise ApiError(f"no recording of any part found in {audio_dir}")
        with progress_bar("audio features") as bar:
            task = bar.add_task("features", total=len(segments))
            report = compute_features(
                segments, target, FeatureConfig(buffer_s=buffer), progress=lambda n: bar.advance(task, n)
            )
    except ArgwebError as e:
        _fail(e)
    console.print(
        f"{report.computed} utterances computed, {report.cached} already cached, {report.files} recordings "
        f"-> {target} ({report.seconds:.1f}s, {report.per_second:.1f} utterances/s)"
    )


def export_aif(
    out: Annotated[Path, typer.Argument(help="Output .json file (--dialogue) or directory (--corpus).")],
    dialogue: Annotated[
        str | None, typer.Option("--dialogue", help="Dialogue/document id or local id (e.g. nodeset21318).")
    ] = None,
    corpus: Annotated[
        str | None, typer.Option("--corpus", help="Export every dialogue/document of this corpus (one file each).")
    ] = None,
    include_predicted: Annotated[bool, typer.Option(help="Also export predicted relations.")] = False,
) -> None:
    """AIF JSON (nodes, edges, locutions, participants) of a dialogue/document or a whole corpus."""
    from api.cli import _fail, _settings, console, open_driver
    from graphstore.aif_export import export_corpus, export_discourse, validate_aif, write_aif
    from graphstore.store import GraphStore
    from ontology.errors import ApiError, ArgwebError

    settings = _settings()
    try:
        if (dialogue is None) == (corpus is None):
            raise ApiError("give exactly one of --dialogue ID or --corpus NAME")
        with open_driver(settings) as driver:
            store = GraphStore(driver, settings.neo4j_database)
            if dialogue is not None:
                aif = export_discourse(store, dialogue, include_predicted=include_predicted)
                validate_aif(aif, dialogue)
                write_aif(aif, out)
                console.print(
                    f"{out}: {len(aif['nodes'])} nodes, {len(aif['edges'])} edges, {len(aif['locutions'])} locutions"
                )
            else:
                assert corpus is not None
                files = export_corpus(store, corpus, out, include_predicted=include_predicted)
                console.print(f"{out}: {len(files)} AIF maps of {corpus}")
    except ArgwebError as e:
        _fail(e)


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
    from api.cli import _fail, console
    from api.settings import Settings
    from graphstore.fetch import SOURCES, fetch_corpus
    from ontology.errors import ApiError, ArgwebError

    try:
        if all_ == (corpus is not None):
            raise ApiError(f"give a corpus or --all; corpora: {', '.join(SOURCES)}")
        names = list(SOURCES) if all_ else [str(corpus)]
        target = dest or Settings().corpora or Path("corpora")
        for name in names:
            report = fetch_corpus(
                name,
                target,
                from_dir=from_dir,
                groups=("main", *(groups or [])),
                timeout=timeout,
                log=lambda line: console.print(line, highlight=False),
            )
            console.print(
                f"{name}: {report.fetched} fetched, {report.present} already present, {report.verified} sha256 "
                f"verified, {report.unverified} without a known sum, {len(report.skipped)} not in the mirror "
                f"-> {target / report.folder}"
            )
    except ArgwebError as e:
        _fail(e)
