"""Evaluation: ``cauldron eval CONFIG`` and, from Python, :func:`cauldron.eval.evaluate`."""

from __future__ import annotations

from typing import Any

__all__ = ["evaluate"]


def __getattr__(name: str) -> Any:
    """``cauldron.eval.evaluate``, imported on first use, so that ``cauldron play`` does not import
    ``cauldron.eval.play`` before running it (runpy warns about that)."""
    if name == "evaluate":
        from cauldron.eval.api import evaluate

        return evaluate
    raise AttributeError(f"module 'eval' has no attribute {name!r}")
