"""Device choice and seeding shared by every model of ``gnn``.

torch is imported inside the functions: the CLI imports modules eagerly and must stay fast.
"""

from __future__ import annotations

import os
import random


def pick_device(prefer: str | None = None) -> str:
    """The torch device to run on: ``prefer`` when given, else CUDA when present, else CPU.

    Args:
        prefer: An explicit device string (``"cpu"``, ``"cuda"``, ``"cuda:1"``); ``None`` picks.

    Returns:
        A device string usable with ``torch.device``.
    """
    if prefer:
        return prefer
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and CUDA) so that runs repeat.

    Args:
        seed: The seed.
    """
    import numpy as np
    import torch

    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
