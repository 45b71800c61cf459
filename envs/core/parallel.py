"""The Parallel environment every simultaneous Cauldron game shares.

Simultaneous rules offer, besides the :class:`~cauldron.envs.core.rules.Rules` methods used by the
AEC environment (where seats choose one after another and nobody sees a choice made earlier in the
same step), ``choosing_seats(state)``, ``legal_mask_for(state, seat)`` and
``apply_joint(state, actions)``, which resolves one simultaneous step of every choosing seat.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from cauldron.envs.core.actions import as_action
from cauldron.envs.core.aec import CauldronAECEnv, penalty_info, penalty_rewards
from cauldron.envs.core.errors import IllegalActionError


class CauldronParallelEnv(ParallelEnv):
    """Base Parallel environment; ``aec_class`` is the game's AEC class (for spaces, options and
    ``metadata``).

    Every live agent acts in every step; an agent with nothing to choose has a single legal
    action. Observations and masks are those of the AEC environment, and so are truncation (a
    joint step of n agents counts n agent-steps towards ``max_steps``) and illegal-action
    penalties. A step after the game has ended raises :class:`IllegalActionError` and changes
    nothing.
    """

    aec_class: ClassVar[type[CauldronAECEnv]]
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "is_parallelizable": True}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A game's class has the ``metadata`` of its AEC class (read from the game's facts)."""
        super().__init_subclass__(**kwargs)
        if "aec_class" in cls.__dict__:
            aec = cls.aec_class
            cls.metadata = aec.facts.metadata(aec.metadata["render_modes"])

    def __init__(
        self, num_players: int | None = None, render_mode: str | None = None, **options: Any
    ) -> None:
        self._aec = self.aec_class(num_players, render_mode, **options)
        self.rules = self._aec.rules
        self.encoder = self._aec.encoder
        self.options = self._aec.options
        self.render_mode = render_mode
        self.possible_agents = self._aec.possible_agents[:]
        self.observation_spaces = self._aec.observation_spaces
        self.action_spaces = self._aec.action_spaces
        self.state_space: spaces.Box = self._aec.state_space

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    @property
    def game(self) -> Any:
        """The game state, kept by the inner AEC env (which deals it, so both APIs deal alike)."""
        return self._aec.game

    def reset(self, seed: int | None = None, options: dict | None = None):
        self._aec.reset(seed=seed, options=options)
        self._steps = 0
        self.agents = self.possible_agents[:]
        infos = {a: self.rules.info(self.game, i) for i, a in enumerate(self.agents)}
        return self._observations(), infos

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        return {
            agent: {
                "observation": self.encoder.observe(self.game, seat),
                "action_mask": self.rules.legal_mask_for(self.game, seat),
            }
            for seat, agent in enumerate(self.agents)
        }

    def state(self) -> np.ndarray:
        return self.encoder.encode_state(self.game)

    def step(self, actions: dict[str, int]):
        if not self.agents:
            raise IllegalActionError(
                actions, "every agent", "over", ["none: the game has ended; call reset()"]
            )
        missing = set(self.agents) - set(actions)
        if missing:
            raise IllegalActionError(
                None,
                sorted(missing)[0],
                self.rules.phase_name(self.game),
                ["every live agent must act in a parallel step"],
            )
        joint = []
        for seat, agent in enumerate(self.agents):
            action = actions[agent]
            mask = self.rules.legal_mask_for(self.game, seat)
            index = as_action(action)
            if index is None or not (0 <= index < len(mask)) or not mask[index]:
                return self._reject(agent, action, mask)
            joint.append(index)
        seat_rewards = self.rules.apply_joint(self.game, joint)
        self._steps += len(joint)
        out_of_steps = self._steps >= self.options.max_steps
        over = self.rules.is_over(self.game) or out_of_steps
        rewards = {a: float(r) for a, r in zip(self.agents, seat_rewards, strict=True)}
        observations = self._observations()
        infos = {a: self.rules.info(self.game, i) for i, a in enumerate(self.agents)}
        truncated = out_of_steps or (over and self.rules.is_truncated(self.game))
        terminations = dict.fromkeys(self.agents, over and not truncated)
        truncations = dict.fromkeys(self.agents, truncated)
        if over:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _reject(self, agent: str, action: object, mask: np.ndarray):
        if self.options.illegal_action == "raise":
            legal = [f"{a} ({self.rules.action_name(a)})" for a in np.flatnonzero(mask)]
            raise IllegalActionError(action, agent, self.rules.phase_name(self.game), legal)
        observations = self._observations()
        rewards = penalty_rewards(self.agents, agent, self.options, self._aec.cooperative)
        infos = {
            a: {**self.rules.info(self.game, i), **penalty_info(a, agent)}
            for i, a in enumerate(self.agents)
        }
        terminations = dict.fromkeys(self.agents, True)
        truncations = dict.fromkeys(self.agents, False)
        self.agents = []
        return observations, rewards, terminations, truncations, infos

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        return self._aec.draw(None, self.render_mode)

    def close(self) -> None:
        pass
