"""Neo4j runtime, schema, batched ingest, corpus loaders and Cypher query builders."""
