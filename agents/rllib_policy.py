"""The ``rllib:<path>`` agent: a policy trained with ``trainer: rllib``, loaded from weights only.

``<path>`` is the RLlib checkpoint folder the trainer writes (``final_rllib/``), or any file
the trainer exported (``final.pt``, ``checkpoints/step_N.pt``). The agent reads the export alone
(``cauldron_policy.pt`` in the folder): a Cauldron torch checkpoint of the same actor layers as
RLlib's module, loaded with ``weights_only=True`` (:mod:`cauldron.agents.torch_policy`). RLlib's own
checkpoint files are never opened: restoring them runs RLlib's loader, which unpickles its class
and constructor file (always a pickle) and, unless saved as msgpack, its state files. Ray is
not needed to play.
"""

from __future__ import annotations

from pathlib import Path

from cauldron.agents.checkpoints import load_torch_agent
from cauldron.envs.core.errors import ConfigError

POLICY = "cauldron_policy.pt"


def policy_file(path: str) -> Path:
    """The weights file of ``path``: ``path/cauldron_policy.pt`` for a folder, else ``path``."""
    file = Path(path)
    if file.is_dir():
        file = file / POLICY
        if not file.is_file():
            raise ConfigError(
                f"rllib checkpoint {path!r} holds no {POLICY} (the weights that trainer 'rllib' "
                "exports beside RLlib's files); this agent never opens RLlib's pickles"
            )
    elif not file.is_file():
        raise ConfigError(f"rllib checkpoint {path!r} not found")
    return file


def load_rllib_agent(path: str, env_id: str, seed: int | None = None, sample: bool = False):
    """A :class:`cauldron.agents.torch_policy.TorchAgent` playing the RLlib-trained policy at
    ``path`` (``sample``: draw from the policy instead of taking its most likely action)."""
    agent = load_torch_agent(str(policy_file(path)), env_id, seed, sample=sample)
    agent.name = f"rllib:{path}"
    return agent
