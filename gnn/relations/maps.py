"""Relations of AIF maps given as documents: the one prediction path of `predict aif` and the oAMF `ari` module."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gnn.relations.argmap import maps_from_records
from ontology.formats.aif import load_aif
from ontology.formats.common import FileRelation, named_as


def map_relations(
    qt: Any, maps: Sequence[tuple[str, dict[str, Any]]], objective: str = "general", progress: bool = False
) -> list[list[FileRelation]]:
    """The QT30 model's RA / CA / MA relations between the I-nodes of each AIF map, named by the map's node ids.

    The one prediction path of AIF maps (``argweb predict aif`` and the oAMF module ``/amf/ari``):
    each map is read by the AIF loader as it is given (callers reduce it to the test-input form
    first, :func:`ontology.formats.aif_write.strip_relations`) and the model predicts over all
    maps at once.

    Args:
        qt: A loaded QT30 relation model (``RelationsModel.qt30`` of a loaded relations model).
        maps: ``(name, map)`` pairs; names only tell the maps apart.
        objective: The model's decision objective.
        progress: Show the model's progress bar.

    Returns:
        Per map, in order, its predicted relations (a map without propositions has none).

    Raises:
        LoaderError: A malformed map (named by its name).
    """
    with tempfile.TemporaryDirectory(prefix="argweb-maps-") as tmp:
        tmp_paths = []
        for k, (name, data) in enumerate(maps):
            p = Path(tmp) / f"{k:06d}_{name}.json"
            p.write_text(json.dumps(data), encoding="utf-8")
            tmp_paths.append(p)
        # The message names the map by its name, not by the scratch file it was read from.
        with named_as({p: name for p, (name, _) in zip(tmp_paths, maps, strict=True)}):
            bundle = load_aif(tmp_paths)
    by_stem = {m.name: m for m in maps_from_records(bundle.nodes, bundle.edges)}
    # A map without propositions (empty, or locutions only) has nothing to relate: written back as it is.
    found_maps = [by_stem[p.stem] for p in tmp_paths if p.stem in by_stem]
    found = dict(zip([m.name for m in found_maps], qt.predict(found_maps, objective, progress=progress), strict=True))
    return [[FileRelation(s, t, lab, score) for s, t, lab, score in found.get(p.stem, [])] for p in tmp_paths]
