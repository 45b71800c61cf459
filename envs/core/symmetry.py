"""The relabelings that leave a cooperative game unchanged, for Other-Play (Hu et al., 2020).

A relabeling σ renames a game's labels (cards, spaces, questions, tokens) so that the rules
cannot tell the difference: a game relabelled by σ and played with σ's actions is the same game.
It acts on the flat encodings as gather indices. If σ maps real label ``i`` to ``σ(i)``, the
relabelled observation shows at ``σ(i)`` what the real one shows at ``i``, so its gather array is
σ⁻¹; the same array σ_A⁻¹ gathers the mask and maps a relabelled action back to the real one.

Each cooperative game with symmetries has ``envs/<game>/symmetries.py`` exposing
``symmetries(num_players, options) -> list[Symmetry]`` (options parsed into the game's options
dataclass); :func:`symmetries` imports it by name, so this module imports no game.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.layout import Layout
from cauldron.envs.registry import spec


@dataclass(frozen=True)
class Symmetry:
    """One relabeling of a game that leaves its rules unchanged, as gather indices (int64 numpy
    arrays): relabelled_obs = obs[..., observation]; relabelled_mask = mask[..., action]; the real
    action behind relabelled action a is action[a]; relabelled per-seat hand vector (a slice of
    state()'s `hands` field for one seat) = hand_vector[..., hand]."""

    name: str
    observation: np.ndarray  # [observation size]
    action: np.ndarray  # [num actions]
    hand: np.ndarray  # [per-seat size of state()'s `hands` field]


def symmetries(
    env_id: str, num_players: int, options: Mapping[str, Any] | None = None
) -> list[Symmetry]:
    """The game's relabelings, the identity first. Raises cauldron.envs.core.errors.ConfigError
    naming the field 'other_play' (e.g. "other_play: voodoo_mania_v1 has no symmetries: ...") for a
    game or options without any. ``num_players`` and ``options`` are checked as by
    ``cauldron.envs.make``."""
    game = spec(env_id)
    if not game.cooperative:
        raise ConfigError(
            f"other_play: {env_id} has no symmetries: Other-Play is for cooperative games and "
            f"{env_id} is competitive"
        )
    module = game.module + ".symmetries"
    if importlib.util.find_spec(module) is None:
        raise ConfigError(
            f"other_play: {env_id} has no symmetries: no relabeling is written down for it "
            f"({module.replace('.', '/')}.py)"
        )
    reference = importlib.import_module(game.module).raw_env(num_players, None, **(options or {}))
    return importlib.import_module(module).symmetries(num_players, reference.options)


def inverse(permutation: Sequence[int]) -> np.ndarray:
    """σ⁻¹ of a permutation given as its images (``permutation[i]`` = σ(i))."""
    forward = np.asarray(permutation, dtype=np.int64)
    backward = np.empty_like(forward)
    backward[forward] = np.arange(len(forward))
    return backward


def gather(
    layout: Layout, relabel: Mapping[str, Sequence[Sequence[int]]], unchanged: Iterable[str]
) -> np.ndarray:
    """The gather array (σ⁻¹) of a relabeling over a flat ``layout``. ``relabel[name]`` lists one
    permutation (as images) per axis of that field, seen as an array of those lengths in row-major
    order (``pile_tops``: spaces, then cards); entry ``(i, j)`` moves to ``(σ₁(i), σ₂(j))``. The
    fields in ``unchanged`` stay; every field must be in one of the two, so a field added to an
    encoding is not left out unnoticed."""
    names = {f.name for f in layout.fields}
    given = set(relabel) | set(unchanged)
    if given != names:
        raise ValueError(
            f"a relabeling must place every field: missing {sorted(names - given)}, "
            f"unknown {sorted(given - names)}"
        )
    out = np.arange(layout.size, dtype=np.int64)
    for name, axes in relabel.items():
        shape = tuple(len(axis) for axis in axes)
        block = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        if block.size != layout.slices[name].stop - layout.offsets[name]:
            raise ValueError(f"field {name!r} does not have the shape {shape}")
        moved = block[np.ix_(*[inverse(axis) for axis in axes])]
        out[layout.slices[name]] = layout.offsets[name] + moved.ravel()
    return out


def frozen(name: str, observation: np.ndarray, action: np.ndarray, hand: np.ndarray) -> Symmetry:
    """A :class:`Symmetry` whose arrays are int64 and read-only (the game modules cache them)."""
    arrays = []
    for array in (observation, action, hand):
        array = np.array(array, dtype=np.int64)
        array.flags.writeable = False
        arrays.append(array)
    return Symmetry(name, *arrays)
