"""Tests of the HTTP API against the real Neo4j, the SPARQL store and a live server."""
