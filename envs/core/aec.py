"""The AEC environment every Cauldron game shares.

It maps seats to agent names (``player_0`` …), keeps rewards, terminations and infos, builds the
``{"observation", "action_mask"}`` dicts, rejects illegal actions (or turns them into a penalty, by
option), truncates a game after ``max_steps`` agent-steps and renders through the game's text
renderer. A game plugs in three independent pieces: its :class:`~cauldron.envs.core.rules.Rules`,
its encoder (a :class:`~cauldron.envs.core.encoding.FlatEncoder`) and its text renderer; only this
layer puts them together.

Illegal actions with ``illegal_action="penalty"`` end the game for everybody. In a competitive
game the offender gets ``illegal_reward`` and the others 0; in a cooperative game the whole team
shares ``illegal_reward`` (the team reward stays one number). Every agent's ``info`` then holds
``illegal_agent`` (the offender's name) and ``illegal_action`` (``True`` for the offender only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from cauldron.envs.core.actions import as_action
from cauldron.envs.core.encoding import FlatEncoder
from cauldron.envs.core.errors import ConfigError, IllegalActionError
from cauldron.envs.core.facts import EnvSpec
from cauldron.envs.core.options import CommonOptions, parse_options
from cauldron.envs.core.svg import rasterize


class CauldronAECEnv(AECEnv):
    """Base AEC environment. Subclasses set the class attributes below and nothing else.

    ``rules_class(num_players, options)`` builds the game's rules; ``encoder_class(rules)`` its
    observation and state encoder; ``render_table(rules, state, seat)`` draws the table as text
    and ``svg_table(rules, state, seat)`` as SVG (:mod:`cauldron.envs.core.svg`; the render modes
    ``svg`` and ``rgb_array`` where ``metadata["render_modes"]`` lists them);
    ``options_class`` is a dataclass deriving from :class:`CommonOptions`; ``facts`` is the
    game's :class:`~cauldron.envs.core.facts.EnvSpec`, from which the class takes
    ``player_range`` (the inclusive allowed player count), ``default_players`` and ``metadata``
    (its ``name`` and ``is_parallelizable``; render modes ``ansi``, and ``svg`` and ``rgb_array``
    when the game has an ``svg_table``).
    """

    rules_class: ClassVar[type]
    encoder_class: ClassVar[type[FlatEncoder]]
    render_table: ClassVar[Callable[[Any, Any, int | None], str]]
    svg_table: ClassVar[Callable[[Any, Any, int | None], str]]
    options_class: ClassVar[type[CommonOptions]] = CommonOptions
    facts: ClassVar[EnvSpec]
    player_range: ClassVar[tuple[int, int]]
    default_players: ClassVar[int]
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "is_parallelizable": False}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A game's class reads its player counts and ``metadata`` from its ``facts``."""
        super().__init_subclass__(**kwargs)
        if "facts" in cls.__dict__:
            cls.player_range = cls.facts.players
            cls.default_players = cls.facts.default_players
            svg = ["svg", "rgb_array"] if hasattr(cls, "svg_table") else []
            cls.metadata = cls.facts.metadata(["ansi", *svg])

    def __init__(
        self, num_players: int | None = None, render_mode: str | None = None, **options: Any
    ) -> None:
        super().__init__()
        given = num_players
        num_players = self.default_players if num_players is None else as_action(num_players)
        low, high = self.player_range
        if num_players is None or not (low <= num_players <= high):
            raise ConfigError(
                f"{self.metadata['name']} takes {low} to {high} players, got {given!r}"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, "
                f"got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.options = parse_options(self.options_class, options)
        self.rules = self.rules_class(num_players, self.options)
        self.encoder = self.encoder_class(self.rules)
        self.cooperative = self.facts.cooperative
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}
        n_actions = self.rules.num_actions
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(
                    0.0, 1.0, (self.encoder.observation_layout.size,), np.float32
                ),
                "action_mask": spaces.Box(0, 1, (n_actions,), np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {a: spaces.Discrete(n_actions) for a in self.possible_agents}
        self.state_space = spaces.Box(0.0, 1.0, (self.encoder.state_layout.size,), np.float32)
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
            "observation": self.encoder.observe(self.game, seat),
            "action_mask": self._legal_mask().copy() if acting else self._no_mask.copy(),
        }

    def state(self) -> np.ndarray:
        return self.encoder.encode_state(self.game)

    def legal_actions(self) -> list[int]:
        """The legal actions of the agent to act, as action indices."""
        return np.flatnonzero(self._legal_mask()).tolist()

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        mask = self._legal_mask()
        index = as_action(action)
        if index is None or not (0 <= index < len(mask)) or not mask[index]:
            self._reject(agent, action)
            return
        self._cumulative_rewards[agent] = 0.0
        seat_rewards = self.rules.apply(self.game, index)
        self._steps += 1
        for agent_name, reward in zip(self.agents, seat_rewards, strict=True):
            self.rewards[agent_name] = float(reward)
        seat = self.rules.acting_seat(self.game)
        out_of_steps = self._steps >= self.options.max_steps and not self.rules.mid_step(self.game)
        if self.rules.is_over(self.game) or out_of_steps:
            truncated = out_of_steps or self.rules.is_truncated(self.game)
            ended = self.truncations if truncated else self.terminations
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
        self.rewards = penalty_rewards(self.agents, agent, self.options, self.cooperative)
        self.terminations = dict.fromkeys(self.agents, True)
        for agent_name in self.agents:
            self.infos[agent_name] = {
                **self.infos[agent_name],
                **penalty_info(agent_name, agent),
            }
        self._accumulate_rewards()

    def render(self) -> str | np.ndarray | None:
        """The whole table in the ``render_mode``: text (``ansi``), an SVG document (``svg``) or
        an ``[H, W, 3]`` uint8 picture (``rgb_array``)."""
        if self.render_mode is None:
            return None
        return self.draw(None, self.render_mode)

    def render_for(self, agent: str, mode: str = "ansi") -> str | np.ndarray:
        """The table as ``agent`` sees it (hidden cards hidden), in ``mode`` (as ``render``)."""
        return self.draw(self._seat[agent], mode)

    def draw(self, seat: int | None, mode: str) -> str | np.ndarray:
        """The table as ``seat`` sees it (``None``: all of it) in a render ``mode``."""
        if mode not in self.metadata["render_modes"]:
            raise ConfigError(f"render mode {mode!r} is not one of {self.metadata['render_modes']}")
        if mode == "ansi":
            return type(self).render_table(self.rules, self.game, seat)
        picture = type(self).svg_table(self.rules, self.game, seat)
        return picture if mode == "svg" else rasterize(picture)

    def _repr_svg_(self) -> str | None:
        """The whole table in a notebook (a game whose tables are drawn as SVG)."""
        return self.draw(None, "svg") if "svg" in self.metadata["render_modes"] else None

    def close(self) -> None:
        pass


def penalty_rewards(
    agents: list[str], offender: str, options: CommonOptions, cooperative: bool
) -> dict[str, float]:
    """Rewards of the step an illegal action ends (``illegal_action="penalty"``): the whole team
    shares ``illegal_reward`` in a cooperative game, only the offender gets it otherwise."""
    penalty = float(options.illegal_reward)
    return {a: penalty if cooperative or a == offender else 0.0 for a in agents}


def penalty_info(agent: str, offender: str) -> dict[str, Any]:
    """What every agent's ``info`` says after an illegal action ended the game."""
    return {"illegal_action": agent == offender, "illegal_agent": offender}
