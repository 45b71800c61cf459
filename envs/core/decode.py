"""The observation decoder: every game's vectors as named fields.

    from cauldron import envs
    envs.layout("hocus_pocus_v1")            # the Layout: fields (name, size, meaning), slices
    fields = envs.decode("hocus_pocus_v1", obs["observation"])   # {"phase": array([...]), ...}
    batch = envs.decode("hocus_pocus_v1", observations)   # [B, size]: {"phase": [B, 12], ...}

The layout is the one the environment writes through (the ``RULES.md`` tables are generated from
it), so a feature-based agent never slices by hand. ``kind="state"`` decodes ``env.state()``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.layout import Layout
from cauldron.envs.registry import make, spec

KINDS = ("observation", "state")


@functools.lru_cache(maxsize=64)
def _layout(env_id: str, kind: str, num_players: int | None, options: tuple) -> Layout:
    encoder = make(env_id, num_players=num_players, **dict(options)).unwrapped.encoder
    return encoder.observation_layout if kind == "observation" else encoder.state_layout


def layout(
    env_id: str, kind: str = "observation", num_players: int | None = None, **options: Any
) -> Layout:
    """The :class:`~cauldron.envs.core.layout.Layout` of ``env_id``'s observation (or ``state()``)
    vector at ``num_players`` with ``options``: ``fields`` (name, size, meaning in order),
    ``slices`` (name -> slice), ``size``."""
    spec(env_id)  # a clear error for an unknown id
    if kind not in KINDS:
        raise ConfigError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    try:
        frozen = tuple(sorted(options.items()))
        hash(frozen)
    except TypeError:  # an unhashable option value: build without the cache
        return _layout.__wrapped__(env_id, kind, num_players, tuple(options.items()))
    return _layout(env_id, kind, num_players, frozen)


def decode(
    env_id: str,
    vector: np.ndarray | Mapping[str, np.ndarray],
    kind: str = "observation",
    num_players: int | None = None,
    **options: Any,
) -> dict[str, np.ndarray]:
    """Name -> values (copied) of an observation vector, an observation dict (its
    ``"observation"`` entry) or, with ``kind="state"``, a ``state()``.

    One vector of shape ``[size]`` gives a 1-d array per field (``[field size]``); a batch of
    shape ``[B, size]`` (one vector per row, e.g. from a vectorised environment) gives a 2-d
    array per field, ``[B, field size]``, row ``i`` being the decoding of row ``i``."""
    if isinstance(vector, Mapping):
        if "observation" not in vector:
            raise ConfigError(
                f"decode takes a vector or an observation dict with an 'observation' entry; "
                f"got keys {sorted(vector)}"
            )
        vector = vector["observation"]
    array = np.asarray(vector)
    shape = layout(env_id, kind, num_players, **options)
    if array.ndim not in (1, 2) or array.shape[-1] != shape.size:
        raise ConfigError(
            f"{env_id} {kind} vectors have {shape.size} entries, got an array of shape "
            f"{array.shape} (decode takes one vector [{shape.size}] or a batch [B, {shape.size}])"
        )
    return {f.name: array[..., shape.slices[f.name]].copy() for f in shape.fields}
