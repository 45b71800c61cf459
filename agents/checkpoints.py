"""Agents loaded from trained checkpoints: ``torch:<path>`` and ``sb3:<path>``.

Both check that the checkpoint was trained for the environment it is asked to play and that its
observation and action sizes match, and say so clearly otherwise. Torch is imported only here,
so the environments and baselines work without the training extra.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from cauldron import envs
from cauldron.envs.core.errors import ConfigError

# Sidecar of an SB3 zip: {"env_id", "obs_size", "num_actions", "net_arch", "num_players",
# "options"} (the last two: what the policy was trained with).
SB3_META = ".cauldron.json"
MAX_SB3_BYTES = 512 * 2**20  # inflated bytes an SB3 zip may hold in all
MAX_SB3_RATIO = 100  # inflated / compressed size beyond RATIO_FLOOR (weights barely compress)
RATIO_FLOOR = 2**20


def _require(path: str, kind: str) -> Path:
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"{kind} checkpoint {path!r} not found")
    return file


def _check(meta: dict, env_id: str, path: Path) -> None:
    if meta.get("env_id") != env_id:
        raise ConfigError(
            f"checkpoint {str(path)!r} was trained for {meta.get('env_id')!r}, not {env_id!r}"
        )
    env = envs.make(env_id)
    obs = env.observation_space("player_0")["observation"].shape[0]
    actions = env.action_space("player_0").n
    if (meta.get("obs_size"), meta.get("num_actions")) != (obs, actions):
        raise ConfigError(
            f"checkpoint {str(path)!r} expects observations of {meta.get('obs_size')} and "
            f"{meta.get('num_actions')} actions; {env_id} has {obs} and {actions}"
        )


def _imports(kind: str):
    try:
        if kind == "torch":
            from cauldron.agents import torch_policy

            return torch_policy
        from cauldron.agents import sb3_policy

        return sb3_policy
    except ImportError as err:
        raise ConfigError(
            f"{kind}: agents need the training extra: pip install torch==2.13.0 && "
            f"pip install -e '.[train]' ({err})"
        ) from err


def load_torch_agent(path: str, env_id: str, seed: int | None = None, sample: bool = False):
    """A :class:`cauldron.agents.torch_policy.TorchAgent` from a PyTorch checkpoint (``sample``:
    draw from the policy instead of taking its most likely action)."""
    torch_policy = _imports("torch")
    file = _require(path, "torch")
    try:
        net, meta = torch_policy.load_checkpoint(file)
    except ConfigError:
        raise
    except Exception as err:  # loaded safely, but missing keys or mismatched sizes
        raise ConfigError(f"cannot load torch checkpoint {path!r}: {err}") from err
    _check(meta, env_id, file)
    torch_policy.inference_threads()
    return torch_policy.TorchAgent(net, f"torch:{path}", sample=sample, seed=seed)


def load_sb3_agent(path: str, env_id: str, seed: int | None = None):
    """An agent from a MaskablePPO zip and its ``.cauldron.json`` sidecar, rebuilt from the
    policy weights alone (``weights_only``), never unpickling the zip's other contents."""
    sb3_policy = _imports("sb3")
    file = _require(path, "sb3")
    meta_file = file.with_name(file.name + SB3_META)
    if not meta_file.is_file():
        raise ConfigError(f"sb3 checkpoint {path!r} has no {meta_file.name} beside it")
    try:
        meta = json.loads(meta_file.read_text())
    except (ValueError, OSError) as err:
        raise ConfigError(f"cannot read {str(meta_file)!r}: {err}") from None
    if not isinstance(meta, dict):
        raise ConfigError(f"{str(meta_file)!r} must hold a JSON object")
    _check(meta, env_id, file)
    weights = read_sb3_policy(file)
    agent = sb3_policy.SB3Agent.from_weights(weights, meta, f"sb3:{path}")
    _imports("torch").inference_threads()
    return agent


def read_sb3_policy(file: Path) -> bytes:
    """The bytes of ``policy.pth`` in the SB3 zip ``file``. The sizes the zip declares are
    checked before anything is inflated (at most :data:`MAX_SB3_BYTES` in all, and at most
    :data:`MAX_SB3_RATIO` times the compressed size above :data:`RATIO_FLOOR`: weights barely
    compress, a zip bomb a thousandfold), and the read stops at that cap whatever they say."""
    try:
        with zipfile.ZipFile(file) as archive:
            _check_sizes(archive.infolist(), file)
            with archive.open("policy.pth") as member:
                weights = member.read(MAX_SB3_BYTES + 1)
    except (zipfile.BadZipFile, KeyError, OSError, EOFError) as err:
        raise ConfigError(
            f"{str(file)!r} is not a Stable-Baselines3 zip with policy.pth ({err})"
        ) from None
    if len(weights) > MAX_SB3_BYTES:
        raise ConfigError(f"{str(file)!r}: policy.pth inflates beyond {MAX_SB3_BYTES:,} bytes")
    return weights


def _check_sizes(members: list[zipfile.ZipInfo], file: Path) -> None:
    """A :class:`ConfigError` if ``members`` declare more than :data:`MAX_SB3_BYTES` inflated,
    or inflate more than :data:`MAX_SB3_RATIO` times their compressed size (beyond
    :data:`RATIO_FLOOR`)."""
    inflated = sum(m.file_size for m in members)
    packed = sum(m.compress_size for m in members)
    if inflated > MAX_SB3_BYTES:
        raise ConfigError(
            f"{str(file)!r} inflates to {inflated:,} bytes; an SB3 zip may hold at most "
            f"{MAX_SB3_BYTES:,}"
        )
    if inflated > RATIO_FLOOR and inflated > MAX_SB3_RATIO * packed:
        raise ConfigError(
            f"{str(file)!r} inflates {packed:,} bytes to {inflated:,} (more than "
            f"{MAX_SB3_RATIO}-fold): not the weights of a policy, refused"
        )
