"""Undoing the leftovers of ingests whose process was killed mid-way.

A corpus left ``loading`` is undone from its journal (what the run created goes, what it changed is
put back) by :meth:`GraphStore.recover`, so that it is never served or exported as if it were
whole. A run still going on elsewhere is left alone. The API and the main job call
:func:`recover_interrupted` when they start; the running API calls :func:`undo_in_background` from
every read that refuses a half-loaded corpus whose ingest process is gone.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable

from graphstore.store import DEFAULT_CLAIM_WAIT, GraphStore
from ontology.errors import ArgwebError

log = logging.getLogger("argweb.recover")

# Corpora whose undo a background thread of this process is running.
_UNDOING: set[str] = set()
_UNDOING_LOCK = threading.Lock()


def recover_interrupted(store: Callable[[], GraphStore], warn: Callable[[str], None] | None = None) -> list[str]:
    """Undo the leftovers of every interrupted ingest; the corpora recovered.

    A database that cannot be reached is not an error here (nothing to recover from then).

    Args:
        store: The store (called once: connecting may fail, and then nothing is recovered).
        warn: Also receives one line per corpus recovered (besides the log).
    """
    try:
        recovered = store().recover_all()
    except ArgwebError as e:
        log.warning("recovery of interrupted ingests skipped: %s", e)
        return []
    for corpus in recovered:
        message = f"{corpus}: the leftovers of an interrupted ingest were undone"
        log.warning(message)
        if warn is not None:
            warn(message)
    return recovered


WAIT_POLL_S = 1.0


def wait_for_loads(
    store: Callable[[], GraphStore],
    what: str,
    say: Callable[[str], None],
    warn: Callable[[str], None] | None = None,
    timeout: float = DEFAULT_CLAIM_WAIT,
) -> None:
    """Wait while another process loads a corpus, so that ``what`` (an export) reads one state of the graph.

    An ingest whose process is gone is undone at once (:func:`recover_interrupted`); one still running
    is waited for, up to ``timeout`` seconds.

    Args:
        store: The store.
        what: What waits, for the line ``say`` hears once (``the RDF export``).
        say: Hears that the wait began.
        warn: Hears each corpus recovered.
        timeout: Seconds to wait at most.

    Raises:
        CorpusIncompleteError: A corpus is still loading after ``timeout`` seconds (naming it).
    """
    graph = store()
    deadline = time.monotonic() + timeout
    told = False
    while graph.incomplete():
        recover_interrupted(store, warn)
        loading = graph.incomplete()
        if not loading:
            return
        if time.monotonic() > deadline:
            graph.require_complete()
        if not told:
            say(f"waiting for the ingest of {', '.join(loading)} to finish before {what}")
            told = True
        time.sleep(WAIT_POLL_S)


def undo_in_background(store: Callable[[], GraphStore], corpora: list[str]) -> list[str]:
    """Undo, in a background thread, the interrupted ingests of ``corpora``; the corpora whose undo
    this call started (none that is already being undone).

    The corpus is served again seconds later, without a restart or another ingest. A run still
    going on is left alone; an undo that fails is tried again by the next read that meets the corpus.

    Args:
        store: The store (called in the thread).
        corpora: The corpora a read found half-loaded.
    """
    with _UNDOING_LOCK:
        started = [corpus for corpus in corpora if corpus not in _UNDOING]
        _UNDOING.update(started)
    if not started:
        return []

    def work() -> None:
        try:
            # Not held for minutes behind a bulk load or a live ingest: the next read asks again.
            undo = dataclasses.replace(store(), claim_wait=10.0, bulk_wait=0.0)
            for corpus in started:
                try:
                    if undo.recover(corpus):
                        log.warning("%s: the leftovers of an interrupted ingest were undone", corpus)
                except ArgwebError as e:
                    log.warning("undo of the ingest of %s failed (the next read tries again): %s", corpus, e)
        except ArgwebError as e:
            log.warning("undo of interrupted ingests skipped: %s", e)
        finally:
            with _UNDOING_LOCK:
                _UNDOING.difference_update(started)

    threading.Thread(target=work, name="argweb-undo", daemon=True).start()
    return started
