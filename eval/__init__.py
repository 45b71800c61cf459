"""Evaluation: ``python -m eval CONFIG`` and, from Python, :func:`eval.evaluate`."""

from eval.api import evaluate

__all__ = ["evaluate"]
