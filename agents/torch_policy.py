"""The PyTorch policy network shared by the PyTorch trainer and the ``torch:`` agents.

A checkpoint is a ``torch.save`` of a plain dict (loadable with ``weights_only=True``)::

    {"format": "cauldron-torch-v1", "env_id": str, "obs_size": int, "num_actions": int,
     "hidden": [int, ...], "state_size": int, "recurrent": int, "head": str,
     "state_dict": {...}, "num_players": int, "options": {...}, "steps": int}

``num_players`` and ``options`` record what the policy was trained with, and ``steps`` the
learner steps it had trained when saved (checkpoints written by the trainer; older ones lack
them, and those before ``steps`` lack only it).

``state_size`` is 0 unless the critic is centralized (fed by ``state()``); ``recurrent`` is the
size of the actor's GRU memory (0: none). ``critic`` is ``False`` in a shipped checkpoint whose
centralized critic was left out (:func:`policy_only`): it reads ``state()``, which no seat sees at
play time, so only training needs it (key absent: the critic is stored). The memory is per
player: a policy that plays several seats keeps one memory per seat.

``head`` is ``flat`` (one output row per action; checkpoints without the key) or ``factored``:
the game's own head (:data:`FACTORED_HEADS`, by game module name) computes the logits from the
observation and the trunk's hidden vector (with a memory: the GRU's memory, updated from the
trunk's), e.g. one network shared by every "play card k on space s" of Hocus Pocus
(:mod:`cauldron.agents.hocus_pocus.head`).

``prior`` (``""``: none) names a batched heuristic (e.g. ``heuristic:planner``) whose action is
an input of the policy: its logit gets ``prior_weight`` added, a learnt scalar that starts at
the configured value (residual policy learning: PPO learns where to depart from the heuristic).
The policy then contains the heuristic; results say so.
"""

from __future__ import annotations

import importlib
import io
import math
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from cauldron import envs
from cauldron.agents.base import Thought, thought
from cauldron.agents.heuristics import batched_heuristics
from cauldron.agents.specs import parse_spec
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.folders import atomic_file

FORMAT = "cauldron-torch-v1"
# Lines of PyTorch's load errors that advise loading unsafely; never shown to a user.
_UNSAFE_ADVICE = ("weights_only", "safe_globals", "Please ", "Check the documentation")
HEADS = ("flat", "factored")
# game module name -> "module:class" of its factored head, built as cls(hidden, obs, actions)
FACTORED_HEADS = {
    "hocus_pocus": "cauldron.agents.hocus_pocus.head:HocusPocusHead",
    "voodoo_mania": "cauldron.agents.voodoo_mania.head:VoodooManiaHead",
}


def factored_head(env_id: str) -> type[nn.Module]:
    """The factored head class of ``env_id``'s game; a :class:`ConfigError` naming the games
    that have one otherwise."""
    game = envs.spec(env_id).module.split(".")[-1]
    if game not in FACTORED_HEADS:
        games = [i for i in envs.ids() if envs.spec(i).module.split(".")[-1] in FACTORED_HEADS]
        raise ConfigError(
            f"head 'factored': {env_id} has no factored head (games with one: {games})"
        )
    module, name = FACTORED_HEADS[game].split(":")
    return getattr(importlib.import_module(module), name)


def check_prior(prior: str, env_id: str) -> None:
    """A :class:`ConfigError` unless ``prior`` is a batched heuristic of ``env_id``
    (``heuristic:<name>``): the priors a policy can have, so that a prior never loads a network
    (a checkpoint naming itself as its prior would load itself without end)."""
    known = [f"heuristic:{name}" for name in batched_heuristics(env_id)]
    if prior not in known:
        raise ConfigError(
            f"prior {prior!r} is not a batched heuristic of {env_id}; priors: {known}"
        )


TIE_TOLERANCE = 1e-5
"""Logits this close to a row's best (relative to its size, at least absolutely) tie."""


def greedy(logits: torch.Tensor) -> torch.Tensor:
    """``[B]`` int64: per row of ``logits`` ``[B, A]`` the lowest action id among the actions
    whose logit lies within :data:`TIE_TOLERANCE` of the row's best. Two copies of one card
    score alike; float rounding that depends on the batch must not pick between them."""
    best = logits.max(dim=1, keepdim=True).values
    near = logits >= best - TIE_TOLERANCE * best.abs().clamp(min=1.0)
    return near.to(torch.uint8).argmax(dim=1)


def mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), nn.Tanh()]
    return nn.Sequential(*layers)


class PolicyNet(nn.Module):
    """Masked categorical actor (optionally with a GRU memory, a game's factored head, or both)
    and value critic (which may read ``state()`` instead of the observation). A factored head
    needs the ``env_id`` whose head it is."""

    def __init__(
        self,
        obs_size: int,
        num_actions: int,
        hidden: list[int],
        state_size: int = 0,
        recurrent: int = 0,
        head: str = "flat",
        env_id: str = "",
        prior: str = "",
        prior_weight: float = 0.0,
        num_players: int = 0,
        critic: bool = True,
    ) -> None:
        super().__init__()
        if head not in HEADS:
            raise ConfigError(f"head {head!r} unknown; heads: {list(HEADS)}")
        self.recurrent, self.head_kind = recurrent, head
        if head == "factored":
            self.trunk = mlp([obs_size, *hidden])
            if recurrent:
                self.core = nn.GRUCell(hidden[-1], recurrent)
            self.factored = factored_head(env_id)(recurrent or hidden[-1], obs_size, num_actions)
        elif recurrent:
            self.encoder = mlp([obs_size, *hidden])
            self.core = nn.GRUCell(hidden[-1], recurrent)
            self.head = nn.Linear(recurrent, num_actions)
        else:
            self.actor = nn.Sequential(mlp([obs_size, *hidden]), nn.Linear(hidden[-1], num_actions))
        if critic:
            self.critic = nn.Sequential(
                mlp([state_size or obs_size, *hidden]), nn.Linear(hidden[-1], 1)
            )
        self.prior = prior
        if prior:
            check_prior(prior, env_id)
            self.prior_weight = nn.Parameter(torch.tensor(float(prior_weight)))
            self._prior_agents: dict[torch.device, Any] = {}
        self.config = {
            "obs_size": int(obs_size),
            "num_actions": int(num_actions),
            "hidden": [int(h) for h in hidden],
            "state_size": int(state_size),
            "recurrent": int(recurrent),
            "head": head,
            **({"env_id": env_id} if head == "factored" or prior else {}),
            **(
                {"prior": prior, "prior_weight": float(prior_weight), "num_players": num_players}
                if prior
                else {}
            ),
            **({} if critic else {"critic": False}),
        }

    @torch.no_grad()
    def prior_actions(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``[B]`` int64: the ``prior`` heuristic's action in every row (a function of the
        observation and the mask alone)."""
        device = obs.device
        if device not in self._prior_agents:
            heuristic = batched_heuristics(self.config["env_id"])[parse_spec(self.prior).target]
            self._prior_agents[device] = heuristic(
                self.config["num_players"], device, torch.Generator(device).manual_seed(0)
            )
        seat = torch.zeros(len(obs), dtype=torch.int64, device=device)
        return self._prior_agents[device].act(obs, mask.bool(), seat)

    @property
    def feature_size(self) -> int:
        """Width of the actor's features (see :meth:`forward_actor`): the GRU memory or the
        last hidden layer."""
        return self.recurrent or self.config["hidden"][-1]

    def encode(self, obs: torch.Tensor) -> torch.Tensor:
        """The trunk's last hidden layer ``[B, hidden]``: what the memory is updated from (or,
        without one, the actor's features). It reads the observation alone, so a whole
        sequence's steps are encoded in one pass."""
        if self.head_kind == "factored":
            return self.trunk(obs)
        return self.encoder(obs) if self.recurrent else self.actor[0](obs)

    def read(
        self,
        obs: torch.Tensor,
        features: torch.Tensor,
        mask: torch.Tensor,
        prior: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The masked logits from the actor's features (see :meth:`forward_actor`)."""
        if self.head_kind == "factored":
            logits = self.factored(obs, features, mask)
        else:
            logits = self.head(features) if self.recurrent else self.actor[1](features)
        if self.prior:
            if prior is None:
                prior = self.prior_actions(obs, mask)
            chosen = nn.functional.one_hot(prior, logits.shape[1]).to(logits.dtype)
            logits = logits + self.prior_weight * chosen
        return logits + (mask.to(logits.dtype) - 1.0) * 1e9

    def forward_actor(
        self,
        obs: torch.Tensor,
        mask: torch.Tensor,
        memory: torch.Tensor | None = None,
        prior: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """:meth:`masked_logits` and the actor's features ``[B, feature_size]`` the logits are
        read from (the trunk's last hidden layer, or the memory updated from it): what an
        auxiliary head trained beside the policy reads."""
        features = self.encode(obs)
        if self.recurrent:
            memory = features = self.core(features, memory)
        return self.read(obs, features, mask, prior), memory, features

    def masked_logits(
        self,
        obs: torch.Tensor,
        mask: torch.Tensor,
        memory: torch.Tensor | None = None,
        prior: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Action logits with illegal actions (``mask`` 0) lowered by 1e9, and the updated memory
        (None without a recurrent core; a missing memory starts at zeros). An added bias, not
        ``masked_fill``: several times faster on CPU, and the same after the softmax. With a
        ``prior`` heuristic, its action's logit gets ``prior_weight`` (``prior``: its actions,
        if already known)."""
        logits, memory, _ = self.forward_actor(obs, mask, memory, prior)
        return logits, memory

    def value(self, critic_input: torch.Tensor) -> torch.Tensor:
        if not hasattr(self, "critic"):
            raise ConfigError(
                "this policy was shipped without its critic (critic: false), so it acts but "
                "cannot be trained further; train from its run's final.pt"
            )
        return self.critic(critic_input).squeeze(-1)


def save_atomically(data: Any, path: Path) -> None:
    """``torch.save`` ``data`` to ``path`` whole (:func:`cauldron.envs.core.folders.atomic_file`): a
    reader, or a run killed mid-save, never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, "wb") as file:
        torch.save(data, file)


def load_weights(source: Path | bytes, what: str) -> Any:
    """Tensors and plain data (dicts, lists, numbers, strings) saved with ``torch.save``, loaded
    with ``weights_only=True`` so that nothing in the file can run code. Any failure (a file
    that would unpickle other objects, a truncated or corrupt file) raises a one-line
    :class:`ConfigError` naming ``what`` was loaded, without PyTorch's advice to load unsafely."""
    try:
        handle = io.BytesIO(source) if isinstance(source, bytes) else source
        with warnings.catch_warnings():  # a plain pickle's protocol: the error says enough
            warnings.filterwarnings("ignore", message="Detected pickle protocol")
            return torch.load(handle, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises many kinds (unpickling, zip, EOF, OS errors)
        raise ConfigError(f"cannot load {what}: {_reason(err)}") from None


def _reason(err: Exception) -> str:
    """The part of a load error that says what is wrong with the file, on one line."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    if lines and lines[0].startswith("Weights only load failed"):
        detail = [line for line in lines[1:] if not any(a in line for a in _UNSAFE_ADVICE)]
        return (
            "it holds objects other than tensors and plain data, refused without running them ("
            + (" ".join(detail) or type(err).__name__)
            + ")"
        )
    first = lines[0].split(". ")[0] if lines else type(err).__name__
    return first.rstrip(".") + " (a truncated or damaged file?)"


def save_checkpoint(net: PolicyNet, env_id: str, path: Path, extra: dict | None = None) -> None:
    """Write ``net`` for ``env_id`` in the checkpoint format above (atomically)."""
    if net.config.get("env_id", env_id) != env_id:
        raise ValueError(f"a factored head of {net.config['env_id']} saved for {env_id}")
    save_atomically(
        {
            "format": FORMAT,
            "env_id": env_id,
            **net.config,
            "state_dict": net.state_dict(),
            **(extra or {}),
        },
        path,
    )


def policy_only(source: Path, target: Path) -> None:
    """Write the checkpoint ``source`` to ``target`` without its centralized critic (``critic``:
    ``False``), or whole if its critic reads the observation (its value is shown beside a
    decision). The actor's weights are the same, so the policy plays the same games."""
    data = load_weights(source, f"torch checkpoint {str(source)!r}")
    if data.get("state_size"):
        weights = {k: v for k, v in data["state_dict"].items() if not k.startswith("critic.")}
        data = {**data, "critic": False, "state_dict": weights}
    save_atomically(data, target)


def load_checkpoint(path: Path) -> tuple[PolicyNet, dict[str, Any]]:
    """The network and the metadata of a checkpoint, loaded with :func:`load_weights`. The
    sizes the metadata declares must be those of the stored tensors (checked on PyTorch's
    ``meta`` device, which allocates nothing), so a small file cannot make the network it
    builds large."""
    where = f"torch checkpoint {str(path)!r}"
    data = load_weights(path, where)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{str(path)!r} is not a Cauldron PyTorch checkpoint ({FORMAT})")
    arguments = _declared(data, where)
    try:
        with torch.device("meta"):
            expected = PolicyNet(**arguments).state_dict()
    except ConfigError as err:  # a prior or head the checkpoint cannot have
        raise ConfigError(f"{where}: {err}") from None
    stored = data["state_dict"]
    for key in sorted(expected.keys() | stored.keys(), key=str):
        declared, saved = _shape(expected, key), _shape(stored, key)
        if declared != saved:
            raise ConfigError(
                f"{where}: its metadata does not match its weights ({str(key)[:100]}: "
                f"{declared} declared, {saved} stored)"
            )
    check_finite(stored, where)
    net = PolicyNet(**arguments)
    net.load_state_dict(stored)
    net.eval()
    return net, data


def check_finite(tensors: dict, where: str) -> None:
    """A :class:`ConfigError` naming ``where`` and the tensor if any tensor of ``tensors``
    holds NaN or an infinity (a diverged run's weights play nonsense, or nothing)."""
    for key, value in tensors.items():
        if isinstance(value, torch.Tensor) and not bool(torch.isfinite(value).all()):
            raise ConfigError(
                f"{where}: tensor {str(key)[:100]!r} holds NaN or infinite values; only "
                "finite weights are loaded"
            )


def _shape(tensors: dict, key: Any) -> str:
    """How ``tensors[key]`` is shown: its shape, the type of a non-tensor, or none."""
    if key not in tensors:
        return "none"
    value = tensors[key]
    return str(tuple(value.shape)) if isinstance(value, torch.Tensor) else type(value).__name__


def _declared(data: dict[str, Any], where: str) -> dict[str, Any]:
    """The :class:`PolicyNet` arguments of a checkpoint's metadata, after checking their types:
    sizes are whole numbers below 2**31, ``hidden`` lists at most as many layers as there are
    stored tensors, ``prior_weight`` is a finite number."""

    def size(name: str, value: Any, low: int) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value < 2**31:
            raise ConfigError(f"{where}: {name} must be a whole number from {low} to 2**31 - 1")
        return value

    stored = data.get("state_dict")
    if not isinstance(stored, dict):
        raise ConfigError(f"{where}: state_dict must be a mapping of names to tensors")
    hidden = data.get("hidden")
    if not isinstance(hidden, list) or not 1 <= len(hidden) <= len(stored):
        raise ConfigError(f"{where}: hidden must list the hidden layers' sizes")
    for key in ("env_id", "head", "prior"):
        if not isinstance(data.get(key, ""), str):
            raise ConfigError(f"{where}: {key} must be a string")
    if not isinstance(data.get("critic", True), bool):
        raise ConfigError(f"{where}: critic must be true or false")
    weight = data.get("prior_weight", 0.0)
    if (
        not isinstance(weight, (int, float))
        or isinstance(weight, bool)
        or not math.isfinite(weight)
    ):
        raise ConfigError(f"{where}: prior_weight must be a finite number")
    return {
        "obs_size": size("obs_size", data.get("obs_size"), 1),
        "num_actions": size("num_actions", data.get("num_actions"), 1),
        "hidden": [size("hidden", h, 1) for h in hidden],
        "state_size": size("state_size", data.get("state_size"), 0),
        "recurrent": size("recurrent", data.get("recurrent", 0), 0),
        "head": data.get("head", "flat"),
        "env_id": data.get("env_id", ""),
        "prior": data.get("prior", ""),
        "prior_weight": weight,
        "num_players": size("num_players", data.get("num_players", 0), 0),
        "critic": data.get("critic", True),
    }


THREADS_VARIABLE = "CAULDRON_TORCH_THREADS"
_threads_chosen = False


def choose_threads(threads: int) -> None:
    """Run torch on ``threads`` threads from now on, chosen by a command or a trainer (its
    ``threads`` option): policy agents made later keep it (:func:`inference_threads`)."""
    global _threads_chosen
    torch.set_num_threads(threads)
    _threads_chosen = True


def inference_threads() -> int:
    """Set torch's threads for one-observation inference, unless a command chose them
    (:func:`choose_threads`), and return them: the :data:`THREADS_VARIABLE` environment
    variable's count when set, else 1. A policy agent decides on one observation at a time, and
    these small networks run that several times slower on many threads than on one (starting
    the threads costs more than the sums). Called when a ``torch:`` or ``sb3:`` agent is made."""
    if _threads_chosen:
        return torch.get_num_threads()
    wanted = os.environ.get(THREADS_VARIABLE, "1")
    try:
        threads = int(wanted)
    except ValueError:
        raise ConfigError(f"{THREADS_VARIABLE} must be a whole number, got {wanted!r}") from None
    if threads < 1:
        raise ConfigError(f"{THREADS_VARIABLE} must be at least 1, got {threads}")
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


class TorchAgent:
    """Plays a trained :class:`PolicyNet` in one seat: the most likely legal action (or a
    sample); a recurrent net's memory starts empty at every ``reset``.

    :meth:`explain` reads the last decision's own logits (the memory steps once per ``act``);
    its value is the critic's on the observation, or ``None`` for a centralized critic, which
    reads ``state()`` (hidden cards) that a seat does not see at play time."""

    def __init__(
        self, net: PolicyNet, name: str, sample: bool = False, seed: int | None = None
    ) -> None:
        self.net, self.name, self.sample = net, name, sample
        self.generator = torch.Generator().manual_seed(seed or 0)
        self.memory: torch.Tensor | None = None
        self._last: tuple[torch.Tensor, torch.Tensor, np.ndarray, int] | None = None

    def reset(self, seed: int | None = None) -> None:
        self.memory = self._last = None
        if seed is not None:
            self.generator.manual_seed(seed)

    @torch.no_grad()
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs = torch.as_tensor(observation, dtype=torch.float32)[None]
        mask = torch.as_tensor(action_mask)[None]
        logits, self.memory = self.net.masked_logits(obs, mask, self.memory)
        logits = logits[0]
        if self.sample:
            action = int(torch.multinomial(torch.softmax(logits, -1), 1, generator=self.generator))
        else:
            action = int(greedy(logits[None])[0])
        self._last = (obs.clone(), logits, np.array(action_mask), action)  # buffers may be reused
        return action

    @torch.no_grad()
    def explain(self) -> Thought | None:
        """The :class:`~cauldron.agents.base.Thought` of the last ``act`` (``None`` before any)."""
        if self._last is None:
            return None
        obs, logits, mask, action = self._last
        value = None
        if not self.net.config["state_size"]:
            value = float(self.net.value(obs)[0])
        return thought(torch.softmax(logits, -1).numpy(), mask, action, value)
