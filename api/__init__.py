"""FastAPI app, CLI and settings: the layer that wires ontology, graphstore and gnn."""

from typing import Any

__all__ = ["Argweb"]


def __getattr__(name: str) -> Any:
    # ``from api import Argweb`` imports the facade only when asked: the CLI starts without it.
    if name == "Argweb":
        from api.notebook import Argweb

        return Argweb
    raise AttributeError(f"module 'api' has no attribute {name!r}")
