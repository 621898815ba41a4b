"""Tests of graphstore."""
