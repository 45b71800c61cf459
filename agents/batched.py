"""Batched policies: baselines and trained networks that choose for B games at once.

A batched policy maps tensors to tensors: ``act(observation [B, obs], mask [B, A] bool,
seat [B]) -> LongTensor[B]``, a legal action per row. Each game's heuristics live in
``agents/<game>/batched.py`` (:func:`cauldron.agents.heuristics.batched_heuristics`), each tested to
choose what the reference heuristic chooses. Specs are those of :func:`cauldron.agents.make_agent`:
``random``, ``heuristic:<name>``, ``torch:<checkpoint>``, and for a caller that starts each
row's games (``cauldron.eval.batched``) ``python:<module>:<Class>`` through a per-row fallback
(:class:`PerGameAgents`: the per-game agent asked row by row, slow but exact). The random ones
draw through :func:`cauldron.envs.core.batched.uniform`, so a generator or per-row streams both
serve.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from cauldron.agents.base import Agent, seat_seed
from cauldron.agents.heuristics import batched_heuristics
from cauldron.agents.specs import OPTIONS, parse_spec
from cauldron.agents.torch_policy import PolicyNet, greedy
from cauldron.agents.user import AgentError, load_python_agent
from cauldron.envs.core.actions import as_action
from cauldron.envs.core.batched import Chance, uniform
from cauldron.envs.core.errors import ConfigError


class BatchedPolicy(Protocol):
    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """A legal action per row."""


def draw_by_running_total(running: torch.Tensor, generator: Chance) -> torch.Tensor:
    """``[B]``: per row of ``running [B, A]`` (the running sums of non-negative weights), the
    first index whose running sum exceeds a uniform draw times the row's total, so index ``i``
    comes with probability weight ``i`` / total (a binary search; the last index at most)."""
    draw = uniform(generator, (len(running), 1), running.device, dtype=torch.float64)
    target = (draw * running[:, -1:]).to(running.dtype)  # integer sums: rounded down
    chosen = torch.searchsorted(running, target, right=True).squeeze(1)
    return chosen.clamp_(max=running.shape[1] - 1)


class BatchedRandom:
    """Uniformly random legal actions: per row, the ``k``-th legal action for ``k`` uniform in
    ``0 .. count - 1``, found by a binary search of the running count of legal actions. One
    random number per row, where keys for every action cost 3-15x more on the CPU at 31-329
    actions. A row without a legal action gets the last action."""

    def __init__(self, num_players: int, device: torch.device, generator: torch.Generator):
        self.generator = generator

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        width = torch.int16 if mask.shape[1] < 2**15 else torch.int32
        return draw_by_running_total(mask.view(torch.uint8).cumsum(1, dtype=width), self.generator)


class BatchedNet:
    """A policy network's most likely legal action per row (a frozen snapshot or checkpoint),
    or, given a ``generator`` (spec option ``sample=1``), an action drawn from its policy: the
    first action whose running probability exceeds a uniform draw, as :class:`BatchedRandom`.

    A recurrent net keeps one memory per row and seat (``[rows, seats, size]``, grown as rows
    and seats appear), as the per-game agent keeps one per seat: callers that ask about some rows
    say which (:meth:`act_rows`), :meth:`begin` starts new games in every row and
    :meth:`forget` in some."""

    def __init__(self, net: PolicyNet, generator: torch.Generator | None = None) -> None:
        self.net, self.generator = net, generator
        self.memory: torch.Tensor | None = None

    def begin(self, seeds: Sequence[int] | None = None) -> None:
        """New games in every row: every memory starts again at zeros."""
        self.memory = None

    def forget(self, rows: torch.Tensor) -> None:
        """New games in ``rows`` (indices or a boolean mask over the rows): their memories go
        back to zeros."""
        if self.memory is not None:
            if rows.dtype == torch.bool:
                rows = rows.nonzero().squeeze(1)
            self.memory[rows[rows < len(self.memory)]] = 0.0

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """Rows ``0 .. B-1`` (the whole batch)."""
        return self.act_rows(torch.arange(len(seat), device=seat.device), observation, mask, seat)

    @torch.no_grad()
    def act_rows(
        self,
        rows: torch.Tensor,
        observation: torch.Tensor,
        mask: torch.Tensor,
        seat: torch.Tensor,
    ) -> torch.Tensor:
        """``[len(rows)]`` int64: the action at row ``rows[i]``, seat ``seat[i]``."""
        if self.net.recurrent:
            memory = self._memory(rows, seat)
            logits, memory[rows, seat] = self.net.masked_logits(
                observation, mask, memory[rows, seat]
            )
        else:
            logits = self.net.masked_logits(observation, mask)[0]
        if self.generator is None:
            return greedy(logits)
        running = torch.softmax(logits.double(), dim=1).cumsum(dim=1)
        return draw_by_running_total(running, self.generator)

    def _memory(self, rows: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
        """The memories, grown with zeros to hold ``rows`` and ``seat``."""
        need = (int(rows.max()) + 1, int(seat.max()) + 1)
        old = self.memory
        if old is None or need[0] > old.shape[0] or need[1] > old.shape[1]:
            have = (0, 0) if old is None else old.shape[:2]
            size = (max(need[0], have[0]), max(need[1], have[1]), self.net.recurrent)
            self.memory = torch.zeros(size, device=rows.device)
            if old is not None:
                self.memory[: have[0], : have[1]] = old
        return self.memory


class PerGameAgents:
    """A per-game agent (:class:`cauldron.agents.base.Agent`, e.g. a ``python:`` spec) played row by
    row: each row's acting seat asks its own object with that row's numpy observation (float32) and
    int8 mask. Objects are made by ``make`` on first use, one per row and seat, and reset with
    :func:`cauldron.agents.base.seat_seed` of the row's game seed and the seat when :meth:`begin`
    gave the rows' seeds (as :func:`cauldron.eval.play.play_game` resets a seat's agent), else with
    no seed; they live until the next :meth:`begin`, so later games of a row (auto-reset) keep the
    same objects. Slow (a Python call per row and step) but the agent's own choices."""

    def __init__(self, make: Callable[[], Agent], name: str) -> None:
        self.make, self.name = make, name
        self.agents: dict[tuple[int, int], Agent] = {}
        self.seeds: list[int] | None = None

    def begin(self, seeds: Sequence[int]) -> None:
        """New games, one per row: row ``b``'s agents are made afresh, reset from ``seeds[b]``."""
        self.agents, self.seeds = {}, [int(s) for s in seeds]

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """Rows ``0 .. B-1`` (the whole batch)."""
        return self.act_rows(torch.arange(len(seat)), observation, mask, seat)

    def act_rows(
        self,
        rows: torch.Tensor,
        observation: torch.Tensor,
        mask: torch.Tensor,
        seat: torch.Tensor,
    ) -> torch.Tensor:
        """``[len(rows)]`` int64: the action of row ``rows[i]``'s agent at seat ``seat[i]``."""
        obs = observation.cpu().numpy()
        legal = mask.cpu().numpy().astype(np.int8)
        chosen = [
            self._legal(self._agent(r, s).act(obs[i], legal[i]), r, s, legal[i])
            for i, (r, s) in enumerate(zip(rows.tolist(), seat.tolist(), strict=True))
        ]
        return torch.tensor(chosen, dtype=torch.int64, device=seat.device)

    def _agent(self, row: int, seat: int) -> Agent:
        agent = self.agents.get((row, seat))
        if agent is None:
            agent = self.agents[row, seat] = self.make()
            agent.reset(None if self.seeds is None else seat_seed(self.seeds[row], seat))
        return agent

    def _legal(self, action: Any, row: int, seat: int, legal: np.ndarray) -> int:
        """``action`` as an index (Python or numpy integers, 0-d or one-element integer arrays,
        as the reference env takes it) if ``legal`` allows it; else an :class:`AgentError`
        naming the agent, its seat and game, what it returned and what was legal."""
        index = as_action(action)
        if index is not None and 0 <= index < len(legal) and legal[index]:
            return index
        game = "" if self.seeds is None else f" in the game of seed {self.seeds[row]}"
        allowed = np.flatnonzero(legal).tolist()
        shown = ", ".join(map(str, allowed[:20])) + (
            f", ... ({len(allowed)} in all)" if len(allowed) > 20 else ""
        )
        what = "an integer action" if index is None else "a legal action"
        raise AgentError(
            f"agent {self.name!r} at seat {seat}{game} returned {_shown(action)}, not {what}; "
            f"actions are 0 to {len(legal) - 1}, legal here: {shown}"
        )


def _shown(action: Any) -> str:
    """``action`` as an error shows it: its ``repr``, cut to 60 characters."""
    text = repr(action)
    return text if len(text) <= 60 else f"{text[:60]}..."


def snapshot_policy(
    net: PolicyNet, device: torch.device, generator: torch.Generator | None = None
) -> BatchedNet:
    """A frozen copy of ``net`` as a batched policy (sampling from ``generator`` if given)."""
    frozen = copy.deepcopy(net).to(device).eval()
    for parameter in frozen.parameters():
        parameter.requires_grad_(False)
    return BatchedNet(frozen, generator)


def make_batched_agent(
    spec: str,
    env_id: str,
    num_players: int,
    device: torch.device,
    generator: Chance,
    per_game: bool = False,
) -> BatchedPolicy:
    """A batched policy from an agent spec; with ``per_game`` (a caller that tells each row's
    new game, as ``cauldron.eval.batched``), ``python:`` agents row by row (:class:`PerGameAgents`);
    a clear error for a spec with no batched form."""
    parsed = parse_spec(spec)
    sample = parsed.checked_sample(spec) if parsed.kind in OPTIONS else False
    if parsed.kind == "random":
        return BatchedRandom(num_players, device, generator)
    if parsed.kind == "heuristic":
        known = batched_heuristics(env_id)
        if parsed.target not in known:
            raise ConfigError(
                f"no batched heuristic {parsed.target!r} for {env_id}; batched heuristics: "
                f"{[f'heuristic:{k}' for k in known]}"
            )
        return known[parsed.target](num_players, device, generator)
    if parsed.kind == "torch":
        from cauldron.agents.checkpoints import load_torch_agent

        agent = load_torch_agent(parsed.target, env_id)
        return snapshot_policy(agent.net, device, generator if sample else None)
    if parsed.kind == "python" and per_game:

        def make() -> Agent:
            return load_python_agent(spec, parsed.target, parsed.options)

        make()  # import and build errors now, not at the first move
        return PerGameAgents(make, spec)
    raise ConfigError(
        f"agent spec {spec!r} has no batched form; batched agents are random, "
        "heuristic:<name> and torch:<checkpoint> (python:<module>:<Class> agents play row by "
        "row in cauldron eval-batched only)"
    )


def table_agent(
    spec: str, env_id: str, num_players: int, device: torch.device, generator: torch.Generator
) -> BatchedPolicy:
    """:func:`make_batched_agent` of ``spec``, and for a ``torch:`` checkpoint a
    :class:`ConfigError` unless it was trained for ``num_players`` players."""
    policy = make_batched_agent(spec, env_id, num_players, device, generator)
    parsed = parse_spec(spec)
    if parsed.kind == "torch":
        from cauldron.agents.torch_policy import load_checkpoint

        players = load_checkpoint(Path(parsed.target))[1].get("num_players")
        if players != num_players:
            raise ConfigError(
                f"checkpoint {parsed.target!r} was trained for {players} players, not "
                f"{num_players} (num_players)"
            )
    return policy
