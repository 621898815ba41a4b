"""Device choice and seeding shared by every model of ``gnn``.

torch is imported inside the functions: the CLI imports modules eagerly and must stay fast.
"""

from __future__ import annotations

import os
import random
from typing import Any


def pick_device(prefer: str | None = None) -> str:
    """The torch device to run on: ``prefer`` when given, else CUDA when present, else CPU.

    Args:
        prefer: An explicit device string (``"cpu"``, ``"cuda"``, ``"cuda:1"``); ``None`` picks.

    Returns:
        A device string usable with ``torch.device``.
    """
    torch = configured_torch()
    if prefer:
        return prefer
    return "cuda" if torch.cuda.is_available() else "cpu"


def configured_torch() -> Any:
    """The ``torch`` module with the process-wide settings every model of ``gnn`` expects.

    Sparse-tensor invariant checks stay off (torch's default: the relation model builds its
    sparse adjacency from indices it has just computed), but are now stated explicitly: left
    implicit, torch warns at the first sparse tensor of every process.
    """
    import torch

    torch.sparse.check_sparse_tensor_invariants.disable()
    return torch


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and CUDA) so that runs repeat.

    Args:
        seed: The seed.
    """
    import numpy as np

    torch = configured_torch()
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
