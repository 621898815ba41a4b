"""FastAPI app, CLI and settings: the layer that wires ontology, graphstore and gnn."""
