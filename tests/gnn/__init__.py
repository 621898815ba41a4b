"""Tests of gnn."""
