"""Corpus loaders: each turns source files into one validated :class:`~ontology.records.CorpusBundle`."""
