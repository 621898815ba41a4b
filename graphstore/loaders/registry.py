"""Which loader reads which corpus, and where its files sit in a corpora directory.

A corpora directory is laid out like ``shared/corpora``: one folder per corpus
(``molweni/DP/*.json``, ``stac/*.json``, ``dialam-2024/**/*.json``, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from graphstore.loaders.aif import load_aif
from graphstore.loaders.common import expand
from graphstore.loaders.contextdep import load_contextdep
from graphstore.loaders.dialogue_json import load_dialogue_json
from graphstore.loaders.marg import load_marg
from graphstore.loaders.sciarg import load_sciarg
from ontology.records import CorpusBundle

SAMPLES: Path = Path(__file__).resolve().parent.parent / "samples"
"""Small real excerpts of every corpus, laid out like a corpora directory, shipped in the package:
what the main job loads when no corpora directory is found, and what the tests load."""


@dataclass(frozen=True)
class CorpusSpec:
    """How to find and load one corpus.

    Attributes:
        name: Corpus id in the graph.
        folder: Folder name inside a corpora directory.
        pattern: Glob of the files to load inside that folder.
        load: Loader taking the list of files.
    """

    name: str
    folder: str
    pattern: str
    load: Callable[[list[Path]], CorpusBundle]

    def find(self, root: Path) -> list[Path]:
        """The corpus files under ``root`` (empty if the folder is absent)."""
        folder = root / self.folder
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.glob(self.pattern) if p.is_file())


CORPORA: dict[str, CorpusSpec] = {
    spec.name: spec
    for spec in (
        CorpusSpec("molweni", "molweni", "DP/*.json", lambda paths: load_dialogue_json(paths, "molweni")),
        CorpusSpec("stac", "stac", "*.json", lambda paths: load_dialogue_json(paths, "stac")),
        CorpusSpec("qt30", "dialam-2024", "**/*.json", lambda paths: load_aif(paths, "qt30")),
        CorpusSpec("m-arg", "m-arg", "**/*.csv", load_marg),
        CorpusSpec("sciarg", "sciarg", "compiled_corpus/*.ann", load_sciarg),
        CorpusSpec("contextdep", "contextdep", "*.tsv", load_contextdep),
    )
}


def files_for(name: str, paths: list[Path]) -> list[Path]:
    """Expand user-given paths (files or directories) for corpus ``name``."""
    spec = CORPORA[name]
    return expand(paths, spec.pattern.rsplit("/", 1)[-1])
