"""Torch devices by one spelling: :func:`torch_device` (torch is imported only when called)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cauldron.envs.core.errors import ConfigError

if TYPE_CHECKING:
    import torch


def torch_device(device: str | torch.device) -> torch.device:
    """``device`` (a name such as ``"cpu"``, ``"cpu:0"``, ``"cuda"``, ``"cuda:1"``, or a
    ``torch.device``) as the one ``torch.device`` that its tensors report, so that devices
    compare equal exactly when they are the same: every CPU spelling is ``cpu`` and ``cuda``
    is ``cuda:<current index>``. A :class:`ConfigError` naming what is allowed for anything
    else: an unknown name, a type other than CPU or CUDA, CUDA where none is available, or a
    CUDA index this machine does not have."""
    import torch

    allowed = "'cpu', 'cuda' or 'cuda:<index>'"
    try:
        parsed = torch.device(device) if isinstance(device, (str, torch.device)) else None
    except (RuntimeError, TypeError):
        parsed = None
    if parsed is None:
        raise ConfigError(f"device must name a torch device such as {allowed}, got {device!r}")
    if parsed.type == "cpu":
        return torch.device("cpu")
    if parsed.type != "cuda":
        raise ConfigError(f"device {device!r}: the batched engines run on {allowed}")
    if not torch.cuda.is_available():
        raise ConfigError(f"device {device!r} asked for, but CUDA is not available here; use 'cpu'")
    count = torch.cuda.device_count()
    index = torch.cuda.current_device() if parsed.index is None else parsed.index
    if index >= count:
        raise ConfigError(
            f"device {device!r}: this machine's CUDA devices are cuda:0 to cuda:{count - 1}"
        )
    return torch.device("cuda", index)
