"""The prefixes of the RDF argweb writes and of the SPARQL it answers: one table, light to import.

Apart from :mod:`ontology.rdf` so that a SPARQL worker process (:mod:`ontology.sparql_worker`,
one per query) starts without building the record models.
"""

from __future__ import annotations

from ontology.terms import NAMESPACE

PREFIXES: dict[str, str] = {
    "aw": NAMESPACE,
    "aif": "http://www.arg.dundee.ac.uk/aif#",
    "sciarg": "https://w3id.org/argweb/scheme/sciarg#",
    "marg": "https://w3id.org/argweb/scheme/m-arg#",
    "molweni": "https://w3id.org/argweb/scheme/molweni#",
    "stac": "https://w3id.org/argweb/scheme/stac#",
    "cdep": "https://w3id.org/argweb/scheme/contextdep#",
    "qt30": "https://w3id.org/argweb/scheme/qt30#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
}
