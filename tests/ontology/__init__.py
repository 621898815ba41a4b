"""Tests of ontology."""
