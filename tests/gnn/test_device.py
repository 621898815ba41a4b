"""Device choice and seeding."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from gnn.device import pick_device, seed_everything

pytestmark = pytest.mark.unit  # synthetic data, no model loaded: in the unit tier


def test_pick_device() -> None:
    assert pick_device("cpu") == "cpu"
    assert pick_device() == ("cuda" if torch.cuda.is_available() else "cpu")


def test_seed_everything_repeats() -> None:
    seed_everything(7)
    a = (random.random(), float(np.random.rand()), float(torch.rand(1)))
    seed_everything(7)
    b = (random.random(), float(np.random.rand()), float(torch.rand(1)))
    assert a == b
