"""Corpus format readers and writers: pure functions between files and ontology records.

Each reader turns source files into one validated :class:`~ontology.records.CorpusBundle`; the
writers put relations back into the same formats. Nothing here talks to Neo4j.
"""
