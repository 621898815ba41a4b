"""Stored precision of model weights.

Every trained head is stored in float16 (half the size: the shipped models share a 20 MB budget)
and run in float32. Integer tensors (buffers such as counters) keep their type.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def half_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """A state dict as stored: floating tensors in float16, on the CPU, contiguous (safetensors needs that)."""
    out = {}
    for k, v in state.items():
        v = v.detach().cpu()
        out[k] = (v.half() if v.is_floating_point() else v).contiguous()
    return out


def float_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """A stored state dict made ready to load: floating tensors back in float32."""
    return {k: v.float() if v.is_floating_point() else v for k, v in state.items()}


def round_to_half(module: Any) -> None:
    """Round a module's floating parameters and buffers to float16 precision in place (they stay float32).

    What is tuned or scored after this sees exactly the weights that :func:`half_state` stores.
    """
    import torch

    with torch.no_grad():
        for tensor in module.state_dict().values():
            if tensor.is_floating_point():
                tensor.copy_(tensor.half().float())


def save_weights(model_dir: Path, weights: str, state: Mapping[str, Any], config_file: str, config: Any) -> int:
    """Write ``state`` (tensors in their dtype) as the safetensors file ``weights`` and ``config`` as the
    JSON file ``config_file`` into ``model_dir`` (created); returns the bytes written."""
    from safetensors.torch import save_file

    model_dir.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().cpu().contiguous() for k, v in state.items()}, str(model_dir / weights))
    (model_dir / config_file).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return (model_dir / weights).stat().st_size + (model_dir / config_file).stat().st_size
