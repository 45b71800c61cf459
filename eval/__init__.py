"""Evaluation: ``python -m eval CONFIG`` and, from Python, :func:`eval.evaluate`."""

from __future__ import annotations

from typing import Any

__all__ = ["evaluate"]


def __getattr__(name: str) -> Any:
    """``eval.evaluate``, imported on first use, so that ``python -m eval.play`` does not import
    ``eval.play`` before running it (runpy warns about that)."""
    if name == "evaluate":
        from eval.api import evaluate

        return evaluate
    raise AttributeError(f"module 'eval' has no attribute {name!r}")
