"""Argument relation classifiers: support / attack / rephrase / none (QT30, Sci-Arg, M-Arg)."""
