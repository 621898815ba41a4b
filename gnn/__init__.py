"""Features, models, training, evaluation and write-back of predicted relations."""

import warnings

# PyTorch Geometric calls the deprecated ``torch.jit.script`` on classes of its own while it is
# imported (torch_geometric.nn.pool.select), and torch warns from inside that call. Nothing in argweb
# uses TorchScript; the warning is about PyG's code, so it is silenced for that call site only.
warnings.filterwarnings(
    "ignore", message=r"`torch\.jit\.script` is deprecated", category=FutureWarning, module=r"torch\.jit\._script"
)
