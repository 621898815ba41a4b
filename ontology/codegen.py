"""Generate :mod:`ontology.terms` from the OWL ontology ``argweb.ttl``.

Run ``python -m ontology.codegen`` after editing the ontology; a test fails when the committed
module differs from what this script produces.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rdflib import OWL, RDFS, Graph, Namespace, URIRef

ONTOLOGY_FILE = Path(__file__).with_name("argweb.ttl")
TERMS_FILE = Path(__file__).with_name("terms.py")
AW = Namespace("https://w3id.org/argweb/ontology#")


@dataclass(frozen=True)
class _Scheme:
    corpus: str
    raw: str
    iri: str
    label: str
    sense: str | None


def _literal(g: Graph, s: URIRef, p: URIRef) -> str | None:
    value = g.value(s, p)
    return None if value is None else str(value)


def _unified(g: Graph, cls: URIRef, seen: frozenset[URIRef] = frozenset()) -> tuple[str, str | None]:
    """Return (neo4j label, sense) of the nearest unified class above or equivalent to ``cls``."""
    label = _literal(g, cls, AW.neo4jLabel)
    sense = _literal(g, cls, AW.senseName)
    if label is not None:
        return label, sense
    supers = list(g.objects(cls, RDFS.subClassOf)) + list(g.objects(cls, OWL.equivalentClass))
    supers += list(g.subjects(OWL.equivalentClass, cls))
    for sup in supers:
        if isinstance(sup, URIRef) and sup not in seen and str(sup).startswith(str(AW)):
            found_label, found_sense = _unified(g, sup, seen | {cls})
            return found_label, sense or found_sense
    for sup in supers:
        if isinstance(sup, URIRef) and sup not in seen:
            try:
                found_label, found_sense = _unified(g, sup, seen | {cls})
            except LookupError:
                continue
            return found_label, sense or found_sense
    raise LookupError(f"{cls} is not mapped onto any unified class with a Neo4j label")


def render(ontology_file: Path = ONTOLOGY_FILE) -> str:
    """Render the source text of ``ontology/terms.py`` from the ontology file."""
    g = Graph()
    g.parse(ontology_file, format="turtle")

    labels: dict[str, URIRef] = {}
    for cls in g.subjects(AW.neo4jLabel, None):
        labels[str(g.value(cls, AW.neo4jLabel))] = URIRef(str(cls))
    ancestors: dict[str, list[str]] = {}
    for name, cls in labels.items():
        chain: list[str] = []
        todo = [cls]
        while todo:
            cur = todo.pop()
            for sup in g.objects(cur, RDFS.subClassOf):
                sup_label = _literal(g, URIRef(sup), AW.neo4jLabel) if isinstance(sup, URIRef) else None
                if sup_label and sup_label not in chain:
                    chain.append(sup_label)
                if isinstance(sup, URIRef):
                    todo.append(sup)
        ancestors[name] = chain
    rel_types = {str(g.value(p, AW.neo4jType)): str(p) for p in g.subjects(AW.neo4jType, None)}
    props = {str(g.value(p, AW.neo4jProperty)): str(p) for p in g.subjects(AW.neo4jProperty, None)}
    senses = {str(g.value(c, AW.senseName)): str(c) for c in g.subjects(AW.senseName, None)}

    schemes: list[_Scheme] = []
    for cls in g.subjects(AW.schemeLabel, None):
        scheme = g.value(cls, AW.inScheme)
        corpus = _literal(g, URIRef(str(scheme)), AW.schemeCorpus) if scheme is not None else None
        if corpus is None:
            continue
        label, sense = _unified(g, URIRef(str(cls)))
        prefix, _, local = str(cls).rpartition("#")
        schemes.append(_Scheme(corpus, str(g.value(cls, AW.schemeLabel)), str(cls), label, sense))
        del prefix, local

    def ident(name: str) -> str:
        return name.upper() if name.isupper() else name

    lines = [
        '"""Ontology terms generated from ``ontology/argweb.ttl``. Do not edit by hand.',
        "",
        "Regenerate with ``python -m ontology.codegen``.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from enum import StrEnum",
        "from typing import NamedTuple",
        "",
        f'NAMESPACE = "{AW}"',
        "",
        "",
        "class Label(StrEnum):",
        '    """Neo4j node labels (OWL classes annotated with ``aw:neo4jLabel``)."""',
        "",
    ]
    lines += [f'    {ident(n)} = "{n}"' for n in sorted(labels)]
    lines += ["", "", "class RelType(StrEnum):", '    """Neo4j relationship types (``aw:neo4jType``)."""', ""]
    lines += [f'    {n} = "{n}"' for n in sorted(rel_types)]
    lines += ["", "", "class Prop(StrEnum):", '    """Neo4j property keys (``aw:neo4jProperty``)."""', ""]
    lines += [f'    {n.upper()} = "{n}"' for n in sorted(props)]
    lines += ["", "", "class Sense(StrEnum):", '    """Unified SDRT discourse senses."""', ""]
    lines += [f'    {n} = "{n}"' for n in sorted(senses)]
    lines += ["", "", "LABEL_IRI: dict[Label, str] = {"]
    lines += [f'    Label.{ident(n)}: "{labels[n]}",' for n in sorted(labels)]
    lines += ["}", "", "REL_TYPE_IRI: dict[RelType, str] = {"]
    lines += [f'    RelType.{n}: "{rel_types[n]}",' for n in sorted(rel_types)]
    lines += ["}", "", "PROP_IRI: dict[Prop, str] = {"]
    lines += [f'    Prop.{n.upper()}: "{props[n]}",' for n in sorted(props)]
    lines += ["}", "", "SENSE_IRI: dict[Sense, str] = {"]
    lines += [f'    Sense.{n}: "{senses[n]}",' for n in sorted(senses)]
    lines += [
        "}",
        "",
        "# Every unified super-class label of a label, nearest first.",
        "LABEL_ANCESTORS: dict[Label, tuple[Label, ...]] = {",
    ]
    for n in sorted(ancestors):
        inner = ", ".join(f"Label.{ident(a)}" for a in ancestors[n])
        inner = inner + "," if len(ancestors[n]) == 1 else inner
        lines.append(f"    Label.{ident(n)}: ({inner}),")
    lines += [
        "}",
        "",
        "",
        "class SchemeTerm(NamedTuple):",
        '    """A corpus-scheme class and the unified class it is mapped onto."""',
        "",
        "    corpus: str",
        "    raw: str",
        "    iri: str",
        "    label: Label",
        "    sense: Sense | None",
        "",
        "",
    ]
    lines += _scheme_tables(schemes, ident)
    return "\n".join(lines)


def _scheme_tables(schemes: list[_Scheme], ident: Callable[[str], str]) -> list[str]:
    """``SCHEME_TERMS`` as two tables and one loop.

    The discourse-relation classes of the dialogue corpora are one row per unified sense, with the
    class each corpus maps onto it (an alignment table of the corpora's SDRT labels); every other
    scheme class is a row of its own. ``SCHEME_TERMS`` joins both, sorted by corpus and label.

    Raises:
        LookupError: A corpus maps two classes onto the same sense (the table could not hold them).
    """
    senses: dict[str, dict[str, _Scheme]] = {}
    others: list[_Scheme] = []
    for s in sorted(schemes, key=lambda s: (s.corpus, s.raw)):
        if s.label != "DiscourseRelation" or s.sense is None:
            others.append(s)
            continue
        by_corpus = senses.setdefault(s.sense, {})
        if s.corpus in by_corpus:
            raise LookupError(f"{s.corpus}: {by_corpus[s.corpus].iri} and {s.iri} both map onto sense {s.sense}")
        by_corpus[s.corpus] = s
    lines = [
        "# Discourse-relation classes of the dialogue corpora, per unified sense: corpus -> (label, class IRI).",
        "_SENSE_CLASSES: dict[Sense, dict[str, tuple[str, str]]] = {",
    ]
    for sense in sorted(senses):
        by_corpus = senses[sense]
        cells = ", ".join(f'"{c}": ("{t.raw}", "{t.iri}")' for c, t in sorted(by_corpus.items()))
        lines.append(f"    Sense.{sense}: {{{cells}}},")
    lines += [
        "}",
        "",
        "# Every other scheme class: units, argument relations, non-relations.",
        "_OTHER_SCHEME_TERMS: tuple[SchemeTerm, ...] = (",
    ]
    for s in others:
        sense = f"Sense.{s.sense}" if s.sense else "None"
        lines.append(f'    SchemeTerm("{s.corpus}", "{s.raw}", "{s.iri}", Label.{ident(s.label)}, {sense}),')
    lines += [
        ")",
        "",
        "SCHEME_TERMS: tuple[SchemeTerm, ...] = tuple(",
        "    sorted(",
        "        [",
        "            *_OTHER_SCHEME_TERMS,",
        "            *(",
        "                SchemeTerm(corpus, raw, iri, Label.DiscourseRelation, sense)",
        "                for sense, by_corpus in _SENSE_CLASSES.items()",
        "                for corpus, (raw, iri) in by_corpus.items()",
        "            ),",
        "        ],",
        "        key=lambda t: (t.corpus, t.raw),",
        "    )",
        ")",
        "",
    ]
    return lines


def main() -> int:
    """Write ``terms.py``; with ``--check`` only report whether it is stale."""
    text = render()
    if "--check" in sys.argv[1:]:
        if TERMS_FILE.read_text(encoding="utf-8") != text:
            print("ontology/terms.py is stale: run python -m ontology.codegen", file=sys.stderr)
            return 1
        return 0
    TERMS_FILE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
