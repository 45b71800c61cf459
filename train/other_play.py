"""Other-Play (Hu et al., 2020) in the torch trainer: each training game and seat plays through
its own random relabeling of the game (a symmetry from
:func:`cauldron.envs.core.symmetry.symmetries`), drawn anew when the game starts.

The seat's policy sees the relabelled observation and mask and chooses a relabelled action,
which is mapped back to the real one before the game steps; the rollout stores the relabelled
view, so PPO trains on what the policy saw. Partners thus cannot agree on an arbitrary labelling
(play the orange card on a yes to "orange?"), only on what survives every relabeling. The
critic's ``state()`` is not relabelled: a value of the real position, the same under any
relabeling of a symmetric game. Evaluation plays without relabeling.
"""

from __future__ import annotations

import numpy as np
import torch

from cauldron.envs.core.symmetry import symmetries


class OtherPlay:
    """The relabelings of ``env_id`` as stacked gather indices (``observation``
    ``[G, obs_size]``, ``action`` ``[G, num_actions]``, ``hand`` ``[G, per_seat]``) and the one
    drawn for each of ``n_envs`` games and ``seats`` seats (``drawn`` ``[n_envs, seats]``)."""

    def __init__(
        self,
        env_id: str,
        num_players: int,
        options: dict,
        n_envs: int,
        seats: int,
        device: torch.device,
        seed: int,
    ) -> None:
        group = symmetries(env_id, num_players, options)

        def stack(name: str) -> torch.Tensor:
            return torch.as_tensor(np.stack([getattr(s, name) for s in group]), device=device)

        self.observation, self.action, self.hand = (
            stack(name) for name in ("observation", "action", "hand")
        )
        self.generator = torch.Generator(device).manual_seed(seed)
        self.drawn = torch.zeros(n_envs, seats, dtype=torch.long, device=device)
        self.redraw(torch.arange(n_envs, device=device))

    @property
    def size(self) -> int:
        return len(self.action)

    def redraw(self, rows: torch.Tensor) -> None:
        """New relabelings for every seat of the games in ``rows`` (they have just begun)."""
        shape = (len(rows), self.drawn.shape[1])
        self.drawn[rows] = torch.randint(
            self.size, shape, generator=self.generator, device=rows.device
        )

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The generator's state and the relabelings drawn (copies), for a train state."""
        return {"generator": self.generator.get_state(), "drawn": self.drawn.clone()}

    def load_state_dict(self, saved: dict[str, torch.Tensor]) -> None:
        """Go on from a :meth:`state_dict` of the same game, seats and games."""
        self.generator.set_state(saved["generator"])
        self.drawn.copy_(saved["drawn"])

    def current(self, seat: torch.Tensor) -> torch.Tensor:
        """``[n_envs]``: the relabeling of each game's deciding ``seat``."""
        return self.drawn[torch.arange(len(seat), device=seat.device), seat]

    def view(
        self, drawn: torch.Tensor, obs: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The observation and mask rows as relabelled by ``drawn`` ``[B]``."""
        return obs.gather(1, self.observation[drawn]), mask.gather(1, self.action[drawn])

    def real_actions(self, drawn: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """The real actions behind relabelled ``actions`` ``[B]``."""
        return self.action[drawn].gather(1, actions[:, None]).squeeze(1)
