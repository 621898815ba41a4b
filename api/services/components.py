"""``predict components`` and ``predict sciarg --components``: the Sci-Arg component tagger on text files.

Wiring only: the tagger, its brat lines and the task (training, evaluation, cross-validation by
paper) live in :mod:`gnn.components`, imported inside the functions (it imports torch); the model
is loaded once through :func:`api.services.tasks.load`.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from api.services import tasks
from api.settings import get_settings
from gnn.modelcard import atomic_write_bytes
from ontology.errors import LoaderError

if TYPE_CHECKING:
    from gnn.components.net import ComponentTagger

TASK_NAME = "components"


@dataclass(frozen=True)
class TaggedPapers:
    """What :func:`predict_dir` wrote.

    Attributes:
        papers: Papers tagged.
        components: Components written (``T`` lines).
        relations: Relations written (``R`` lines of the nearest-claim linker).
        out: The output directory.
    """

    papers: int
    components: int
    relations: int
    out: str


def load_tagger(model: Path | None = None) -> ComponentTagger:
    """The tagger of ``model`` or the shipped one, on the encoder its card names (loaded once).

    Raises:
        ApiError: ``model`` is not a component tagger's directory.
        ModelError: The shipped tagger is missing or broken, or the encoder is not the one it was
            trained with.
    """
    loaded: ComponentTagger = tasks.load(get_settings(), TASK_NAME, model).model
    return loaded


def component_lines(txt: Path, model: Path | None = None) -> list[str]:
    """Predicted ``T`` lines for one Sci-Arg text with the tagger of ``model`` (default: the shipped one)."""
    from gnn.components import component_lines as tagged_lines

    return tagged_lines(txt, load_tagger(model))


def predict_dir(source: Path, target: Path, model: Path | None = None, link: bool = True) -> TaggedPapers:
    """Write predicted ``.ann`` files (components, and nearest-claim relations when ``link``) plus the texts.

    Raises:
        LoaderError: ``source`` holds no ``.txt`` files.
    """
    from gnn.components import component_lines as tagged_lines
    from gnn.components import component_of_line, nearest_claim_relations

    txts = sorted(source.glob("*.txt")) if source.is_dir() else []
    if not txts:
        raise LoaderError(f"{source}: no Sci-Arg .txt files")
    tagger = load_tagger(model)
    papers = components = relations = 0
    for txt in txts:
        lines = tagged_lines(txt, tagger)
        comps = [component_of_line(line) for line in lines]
        if link:
            lines += [
                f"R{k}\t{lab} Arg1:{s} Arg2:{t}\t" for k, (lab, s, t) in enumerate(nearest_claim_relations(comps), 1)
            ]
        atomic_write_bytes(target / f"{txt.stem}.ann", "".join(f"{line}\n" for line in lines).encode("utf-8"))
        shutil.copyfile(txt, target / txt.name)
        papers += 1
        components += len(comps)
        relations += len(lines) - len(comps)
    return TaggedPapers(papers, components, relations, str(target))
