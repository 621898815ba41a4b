"""Corpus names: the one grammar every door (command line, HTTP) checks before anything is written."""

from __future__ import annotations

import re
from collections.abc import Collection

from ontology.errors import ApiError

MAX_CORPUS_NAME = 100
# Lower-case letters, digits and '-', starting with a letter or digit. Matched whole (fullmatch):
# a `$` would let a trailing newline through ("qt30\n").
CORPUS_NAME = re.compile(rf"[a-z0-9][a-z0-9-]{{0,{MAX_CORPUS_NAME - 1}}}")
GRAMMAR = f"1-{MAX_CORPUS_NAME} lower-case letters, digits and '-', starting with a letter or digit"


def folded(name: str) -> str:
    """``name`` without case and punctuation: two names that fold alike are one corpus to a reader."""
    return re.sub(r"[\W_]", "", name.casefold())


def check_corpus_name(name: str, gold: Collection[str] = ()) -> str:
    """``name`` if it is a corpus name a client may write into; else the rule it breaks.

    Args:
        name: The corpus name given (``--corpus``, ``?corpus=``).
        gold: The gold corpora's names: a name that differs from one of them only in case or
            punctuation (``QT30``, ``Qt30``, ``qt30.``, ``q-t30``) is refused, so that no corpus can
            pass for gold annotation beside it.

    Raises:
        ApiError: Naming the rule (near-copy of a gold corpus, or the grammar).
    """
    for g in gold:
        if name != g and folded(name) == folded(g):
            raise ApiError(
                f"corpus {name!r} differs from the gold corpus {g!r} only in case or punctuation; "
                f"corpus must be {GRAMMAR}, and no name may pass for a gold corpus"
            )
    if not CORPUS_NAME.fullmatch(name):
        raise ApiError(f"corpus must be {GRAMMAR}, not {name!r}")
    return name
