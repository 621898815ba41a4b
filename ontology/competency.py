"""The competency questions: documented example queries, each in Cypher and in SPARQL.

They ship with the package in ``ontology/cq/NN-name.cypher`` and ``ontology/cq/NN-name.rq`` (see
``docs/competency-questions.md``); each file starts with comment lines ``title:`` and
``requires:`` (the corpora whose loaders the question is about). The tests run both versions and
compare the answers; ``bench/sparql.py`` times the SPARQL versions. This module only reads the
files; it builds no queries.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ontology.errors import NotFoundError, OntologyError

CQ_DIR = Path(__file__).resolve().with_name("cq")
_HEADER = re.compile(r"^\s*(?://|#)\s*(title|requires):(.*)$")


@dataclass(frozen=True)
class CompetencyQuestion:
    """One question in both query languages.

    Attributes:
        name: File stem, e.g. ``03-molweni-qap-per-dialogue``.
        title: One-line statement of the question.
        requires: Corpus ids whose loaders the question is about (empty: any corpus).
        cypher: The Cypher query (runs on Neo4j).
        sparql: The SPARQL query (runs on the RDF export).
    """

    name: str
    title: str
    requires: tuple[str, ...]
    cypher: str
    sparql: str


def _header(path: Path, text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        match = _HEADER.match(line)
        if match:
            fields[match.group(1)] = match.group(2).strip()
    if "title" not in fields:
        raise OntologyError(f"{path}: line 1: missing '// title:' / '# title:' header")
    return fields


def load_questions(directory: Path = CQ_DIR) -> list[CompetencyQuestion]:
    """Read every question pair in ``directory``, ordered by name.

    Raises:
        OntologyError: A question lacks its other half or its title.
    """
    questions: list[CompetencyQuestion] = []
    cypher_files = {p.stem: p for p in directory.glob("*.cypher")}
    sparql_files = {p.stem: p for p in directory.glob("*.rq")}
    for name in sorted(cypher_files.keys() | sparql_files.keys()):
        if name not in cypher_files or name not in sparql_files:
            have = cypher_files.get(name) or sparql_files[name]
            raise OntologyError(f"{have}: competency question {name} needs both a .cypher and a .rq file")
        cypher = cypher_files[name].read_text(encoding="utf-8")
        sparql = sparql_files[name].read_text(encoding="utf-8")
        head = _header(sparql_files[name], sparql)
        _header(cypher_files[name], cypher)
        requires = tuple(c.strip() for c in head.get("requires", "").split(",") if c.strip())
        questions.append(CompetencyQuestion(name, head["title"], requires, cypher, sparql))
    if not questions:
        raise OntologyError(f"{directory}: no competency questions found")
    return questions


def questions(names: Sequence[str] = (), directory: Path = CQ_DIR) -> list[CompetencyQuestion]:
    """The questions of ``directory`` (package data): all, or those named in the order named.

    Raises:
        NotFoundError: The installation lacks ``directory`` (a broken install), or an unknown name.
        OntologyError: A question lacks its other half or its title.
    """
    if not directory.is_dir():
        raise NotFoundError(f"no competency questions here: {directory} is missing (reinstall argweb)")
    found = load_questions(directory)
    if not names:
        return found
    known = {q.name: q for q in found}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise NotFoundError(f"no competency question {', '.join(unknown)}; there are: {', '.join(known)}")
    return [known[n] for n in names]


def _norm(value: Any, digits: int) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 2**53:
            # Counts and sums may come back as 2.0 from one engine and 2 from the other.
            return int(value)
        return round(value, digits)
    return value


def normalise(rows: Iterable[Mapping[str, Any]], columns: Sequence[str], digits: int = 9) -> list[tuple[Any, ...]]:
    """Rows as sorted tuples in ``columns`` order, floats rounded, so Cypher and SPARQL answers compare."""
    out = [tuple(_norm(row.get(c), digits) for c in columns) for row in rows]
    return sorted(out, key=lambda t: tuple((v is None, str(type(v)), v if v is not None else 0) for v in t))
