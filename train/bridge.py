"""A Gymnasium single-agent view of a Cauldron AEC game, for SB3 and the PyTorch trainer.

*Cooperative* games: the learner acts for every seat (one policy, shared parameters) and is paid
the team reward. *Competitive* games: the learner takes one seat, rotated every episode, and the
other seats are played by opponents drawn from a pool (random, heuristics, frozen snapshots of the
learner); the learner's reward is its own, including the end-of-game reward whichever seat's move
ended the game. Observations are the acting seat's observation vector; :meth:`action_masks`
returns the same mask as the observation's ``action_mask``. The game runs with
``illegal_action="penalty"`` (unless the options say otherwise), so an unmasked illegal action, as
SB3's ``check_env`` sends, ends the episode with ``illegal_reward`` instead of raising.

``reward_shaping`` is the hook for shaped rewards: a callable ``shaping(state, event) -> float``
called after every move of the game (the learner's and the others'), with the game's rules
state and ``event = {"seat", "action", "action_name", "rewards"}`` of that move; what it returns
is added to the learner's reward. The training config names one as ``reward_shaping:
package.module:function`` (:func:`load_shaping`). This class is the public single-agent view
for other single-agent libraries too.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from cauldron import envs
from cauldron.agents import Agent

OpponentFactory = Callable[[np.random.Generator], Agent]
RewardShaping = Callable[[Any, dict[str, Any]], float]


def load_shaping(spec: str) -> RewardShaping:
    """The function named ``package.module:function``, or a :class:`cauldron.envs.ConfigError`
    saying why it cannot be used."""
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise envs.ConfigError(
            f"reward_shaping {spec!r} must name a function as package.module:function"
        )
    try:
        function = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as err:
        raise envs.ConfigError(f"reward_shaping {spec!r} cannot be imported: {err}") from err
    if not callable(function):
        raise envs.ConfigError(f"reward_shaping {spec!r} is not callable")
    return function


def shaping(config: Any) -> RewardShaping | None:
    """The reward-shaping function a training config names, if any."""
    return load_shaping(config.reward_shaping) if config.reward_shaping else None


class SingleAgentBridge(gym.Env):
    """One learner against (or with) the rest of the table; see the module docstring."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        env_id: str,
        num_players: int,
        options: dict[str, Any] | None = None,
        opponents: Sequence[OpponentFactory] = (),
        seed: int = 0,
        aec: Any = None,
        reward_shaping: RewardShaping | None = None,
    ) -> None:
        """``aec`` plays another cooperative PettingZoo AEC env (with ``action_mask``
        observations), as given, in place of ``env_id``; the training benchmark runs Hanabi this
        way. A Cauldron game is stepped without its PettingZoo wrappers, as the bridge only ever
        sends masked actions or handles the penalty itself."""
        self.env_id = env_id
        self.cooperative = aec is not None or envs.spec(env_id).cooperative
        if not self.cooperative and not opponents:
            raise envs.ConfigError(f"{env_id} is competitive: the learner needs opponents")
        options = {"illegal_action": "penalty", **(options or {})}
        self.aec = aec if aec is not None else envs.make(env_id, num_players, **options).unwrapped
        first = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(first)["observation"]
        self.state_space = getattr(self.aec.unwrapped, "state_space", None)
        self.action_space = self.aec.action_space(first)
        self.opponents = list(opponents)
        self.reward_shaping = reward_shaping
        self.rng = np.random.default_rng(seed)
        self.episodes = 0
        self.learner = first
        self._players: dict[str, Agent] = {}
        self._mask = np.zeros(self.action_space.n, np.int8)

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.aec.reset(seed=int(self.rng.integers(2**31)))
        agents = self.aec.possible_agents
        self.learner = agents[self.episodes % len(agents)]
        self.episodes += 1
        if not self.cooperative:
            self._players = {}
            for agent in agents:
                if agent != self.learner:
                    pick = self.opponents[int(self.rng.integers(len(self.opponents)))]
                    self._players[agent] = pick(self.rng)
                    self._players[agent].reset(int(self.rng.integers(2**31)))
        self._return = 0.0
        reward, _ = self._play_others(0.0)
        return self._observation(), {"learner": self.learner, "reward_before_first_move": reward}

    def step(self, action: int):
        reward, done = self._play_others(self._move(int(action)))
        if not done:
            return self._observation(), reward, False, False, {}
        info = {**self.aec.infos.get(self.learner, {}), "episode_return": self._return}
        truncated = bool(all(self.aec.truncations.values()))
        self._mask = np.ones(self.action_space.n, np.int8)
        return (
            np.zeros(self.observation_space.shape, np.float32),
            reward,
            not truncated,
            truncated,
            info,
        )

    def action_masks(self) -> np.ndarray:
        """The mask of the decision the learner now faces (as in the observation dict)."""
        return self._mask.astype(bool)

    def seat(self) -> int:
        """The index of the seat whose decision the learner now makes."""
        return self.aec.possible_agents.index(self.aec.agent_selection)

    def state(self) -> np.ndarray:
        """The full-information ``state()`` of the underlying game (for a centralized critic)."""
        return self.aec.unwrapped.state()

    # ------------------------------------------------------------------ internals
    def _move(self, action: int) -> float:
        """Play ``action`` for the seat to act; return the learner's reward from it (the team's,
        in cooperative games), shaped by ``reward_shaping`` if one is set."""
        aec = self.aec
        seat = aec.possible_agents.index(aec.agent_selection)
        aec.step(action)
        reward = float(aec.rewards[self.learner])
        if self.reward_shaping is not None:
            event = {
                "seat": seat,
                "action": int(action),
                "action_name": aec.unwrapped.rules.action_name(int(action)),
                "rewards": tuple(aec.rewards[a] for a in aec.possible_agents),
            }
            reward += float(self.reward_shaping(aec.unwrapped.game, event))
        return reward

    def _over(self) -> bool:
        """Whether the game has ended (every seat of these games ends at once)."""
        return self.aec.terminations[self.learner] or self.aec.truncations[self.learner]

    def _play_others(self, reward: float) -> tuple[float, bool]:
        """Let the opponents move until the learner must act or the game ends; return the
        learner's reward since its last action and whether the game is over."""
        aec = self.aec
        while not self._over() and not (self.cooperative or aec.agent_selection == self.learner):
            agent = aec.agent_selection
            obs = aec.observe(agent)
            reward += self._move(self._players[agent].act(obs["observation"], obs["action_mask"]))
        self._return += reward
        return reward, self._over()

    def _observation(self) -> np.ndarray:
        obs = self.aec.observe(self.aec.agent_selection)
        self._mask = obs["action_mask"]
        return obs["observation"]
