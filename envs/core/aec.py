"""The AEC environment every Cauldron game shares.

It maps seats to agent names (``player_0`` …), keeps rewards, terminations and infos, builds the
``{"observation", "action_mask"}`` dicts, rejects illegal actions (or turns them into a penalty, by
option) and renders through the game's text renderer. Games plug in a
:class:`~envs.core.rules.Rules`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from envs.core.errors import ConfigError, IllegalActionError
from envs.core.options import CommonOptions, parse_options


class CauldronAECEnv(AECEnv):
    """Base AEC environment. Subclasses set the class attributes below and nothing else.

    ``rules_class(num_players, options)`` builds the game's rules; ``options_class`` is a dataclass
    deriving from :class:`CommonOptions`; ``player_range`` is the inclusive allowed player count.
    """

    rules_class: ClassVar[type]
    options_class: ClassVar[type[CommonOptions]] = CommonOptions
    player_range: ClassVar[tuple[int, int]]
    default_players: ClassVar[int]
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(
        self, num_players: int | None = None, render_mode: str | None = None, **options: Any
    ) -> None:
        super().__init__()
        num_players = self.default_players if num_players is None else num_players
        low, high = self.player_range
        if (
            isinstance(num_players, bool)
            or not isinstance(num_players, int)
            or not (low <= num_players <= high)
        ):
            raise ConfigError(
                f"{self.metadata['name']} takes {low} to {high} players, got {num_players!r}"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, "
                f"got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.options = parse_options(self.options_class, options)
        self.rules = self.rules_class(num_players, self.options)
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}
        n_actions = self.rules.num_actions
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(
                    0.0, 1.0, (self.rules.observation_layout.size,), np.float32
                ),
                "action_mask": spaces.Box(0, 1, (n_actions,), np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {a: spaces.Discrete(n_actions) for a in self.possible_agents}
        self.state_space = spaces.Box(0.0, 1.0, (self.rules.state_layout.size,), np.float32)
        self._no_mask = np.zeros(n_actions, np.int8)
        self._rng = np.random.default_rng()
        self.game: Any = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        n = self.rules.num_players
        start = 0 if self.options.start_seat == "first" else int(self._rng.integers(n))
        self.game = self.rules.new_game(self._rng, start)
        self._mask_key: int | None = None
        self._steps = 0
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: self.rules.info(self.game, i) for i, a in enumerate(self.agents)}
        self.agent_selection = self.agents[self.rules.acting_seat(self.game)]

    def _legal_mask(self) -> np.ndarray:
        if self._mask_key != self._steps:
            self._mask = self.rules.legal_mask(self.game)
            self._mask_key = self._steps
        return self._mask

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat[agent]
        acting = agent == self.agent_selection and not self.terminations[agent]
        return {
            "observation": self.rules.observe(self.game, seat),
            "action_mask": self._legal_mask().copy() if acting else self._no_mask.copy(),
        }

    def state(self) -> np.ndarray:
        return self.rules.encode_state(self.game)

    def legal_actions(self) -> list[int]:
        """The legal actions of the agent to act, as action indices."""
        return np.flatnonzero(self._legal_mask()).tolist()

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        mask = self._legal_mask()
        legal = isinstance(action, (int, np.integer)) and 0 <= action < len(mask) and mask[action]
        if not legal:
            self._reject(agent, action)
            return
        self._cumulative_rewards[agent] = 0.0
        seat_rewards = self.rules.apply(self.game, int(action))
        self._steps += 1
        for agent_name, reward in zip(self.agents, seat_rewards, strict=True):
            self.rewards[agent_name] = float(reward)
        seat = self.rules.acting_seat(self.game)
        if self.rules.is_over(self.game):
            ended = self.truncations if self.rules.is_truncated(self.game) else self.terminations
            ended.update(dict.fromkeys(self.agents, True))
            self.infos = {a: self.rules.info(self.game, i) for i, a in enumerate(self.agents)}
        else:
            self.infos[self.agents[seat]] = self.rules.info(self.game, seat)
        self.agent_selection = self.agents[seat]
        self._accumulate_rewards()

    def _reject(self, agent: str, action: object) -> None:
        if self.options.illegal_action == "raise":
            legal = [f"{a} ({self.rules.action_name(a)})" for a in self.legal_actions()]
            raise IllegalActionError(action, agent, self.rules.phase_name(self.game), legal)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = float(self.options.illegal_reward)
        self.terminations = dict.fromkeys(self.agents, True)
        for agent_name in self.agents:
            self.infos[agent_name] = {**self.infos[agent_name], "illegal_action": True}
        self._accumulate_rewards()

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        return self.rules.render(self.game, None)

    def render_for(self, agent: str) -> str:
        """The table as ``agent`` sees it (hidden cards hidden)."""
        return self.rules.render(self.game, self._seat[agent])

    def close(self) -> None:
        pass
