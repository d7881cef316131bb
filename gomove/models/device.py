"""Device choice: turn a config string ("auto", "cpu", "cuda", "cuda:1") into a torch.device."""

from __future__ import annotations

import torch


def resolve_device(name: str | torch.device = "auto") -> torch.device:
    """Map "auto" to CUDA when available, else CPU; pass anything else to torch.device.

    Asking for CUDA on a machine without it fails here, with a clear message,
    rather than at the first tensor copy.
    """
    if isinstance(name, torch.device):
        device = name
    elif name == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {device} requested but CUDA is not available")
    return device
