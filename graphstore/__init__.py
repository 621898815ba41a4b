"""Neo4j runtime, schema, batched ingest of record bundles and Cypher query builders."""
