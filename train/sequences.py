"""Cutting a rollout into sequences for recurrent PPO (truncated back-propagation through time),
and running the GRU over them (:func:`memories`, :func:`unroll`).

The rollout is ``[T, N]`` (steps by envs). One policy plays several seats of a game and keeps
one memory per env and seat, so a seat's decisions are interleaved with other seats' steps:
each env and seat is one *stream* of that seat's decisions in step order (steps where the
learner does not decide, such as opponents' rows on a batched table, belong to no stream).

A stream is cut into chunks of ``seq_len - burn_in`` decisions; each chunk becomes one sequence,
preceded by up to ``burn_in`` of the stream's decisions just before it (fewer at the stream's
start). Burn-in steps only warm the memory: they take no loss and pass no gradient. Every
decision thus takes its loss in exactly one sequence. A decision ``resets`` the memory to zeros
when an episode began in its env (``dones``) since the seat's previous decision in the rollout
(for the stream's first decision: at or before it), as the rollout reset it.

A sequence is a row of ``seq_len`` slots: ``rows`` gives each slot's flat rollout row
(``t * N + env``, the layout of ``buffer.reshape(T * N, ...)``) and ``valid`` says which slots
hold a decision; the padding after a short sequence points at its last decision and weighs 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from cauldron.agents.torch_policy import PolicyNet


@dataclass(frozen=True)
class Sequences:
    """``S`` sequences of ``seq_len`` slots; every field is ``[S, seq_len]``."""

    rows: torch.Tensor  # int64: the slot's flat rollout row
    valid: torch.Tensor  # float32: 1 where the slot holds a decision, 0 in the padding
    burn: torch.Tensor  # bool: a burn-in slot (warms the memory; no loss, no gradient)
    reset: torch.Tensor  # bool: the memory restarts at zeros before this slot's decision

    @property
    def weight(self) -> torch.Tensor:
        """``[S, seq_len]`` float32: 1 where the slot's decision takes its loss."""
        return self.valid * ~self.burn


def cut(
    decides: torch.Tensor, seats: torch.Tensor, dones: torch.Tensor, seq_len: int, burn_in: int
) -> Sequences:
    """The sequences of a rollout (see the module docstring). ``decides`` ``[T, N]`` (bool): the
    learner decides at step ``t`` in env ``n``; ``seats`` ``[T, N]`` (int64): the deciding
    seat; ``dones`` ``[T, N]``: step ``t``'s observation is an episode's first."""
    if not 0 <= burn_in < seq_len:
        raise ValueError(f"burn_in ({burn_in}) must be at least 0 and below seq_len ({seq_len})")
    steps, n_envs = decides.shape
    device = decides.device
    flat = torch.arange(steps * n_envs, device=device).reshape(steps, n_envs)
    env = torch.arange(n_envs, device=device).expand(steps, n_envs)
    episode = dones.to(torch.long).cumsum(0)  # [T, N] episodes begun so far in the rollout
    chosen = decides.bool()
    stream = env[chosen] * (int(seats.max()) + 1) + seats[chosen]  # t-major order
    stream, order = torch.sort(stream, stable=True)  # by stream, then by step
    rows, episode = flat[chosen][order], episode[chosen][order]
    count = len(rows)
    index = torch.arange(count, device=device)
    first = torch.ones(count, dtype=torch.bool, device=device)  # a stream's first decision
    first[1:] = stream[1:] != stream[:-1]
    position = index - torch.where(first, index, 0).cummax(0).values  # within the stream
    previous = torch.where(first, 0, episode.roll(1))
    reset = episode != previous
    last = torch.ones(count, dtype=torch.bool, device=device)  # a stream's last decision
    last[:-1] = first[1:]
    stream_end = torch.where(last, index, count).flip(0).cummin(0).values.flip(0) + 1

    chunk = seq_len - burn_in
    starts = index[position % chunk == 0]  # each sequence's first trained decision
    begin = starts - position[starts].clamp(max=burn_in)  # ... and its first burn-in one
    slot = begin[:, None] + torch.arange(seq_len, device=device)  # [S, seq_len]
    end = torch.minimum(starts + chunk, stream_end[starts])[:, None]
    valid = slot < end
    slot = torch.minimum(slot, end - 1)  # the padding repeats the last decision (weight 0)
    return Sequences(
        rows=rows[slot],
        valid=valid.float(),
        burn=slot < starts[:, None],
        reset=reset[slot] & valid,
    )


def memories(
    net: PolicyNet,
    obs: torch.Tensor,
    start: torch.Tensor,
    reset: torch.Tensor,
    burn: torch.Tensor,
) -> torch.Tensor:
    """The memory after each step ``[S * L, memory]`` of ``S`` sequences of ``L`` steps
    (sequence-major ``obs`` ``[S * L, obs_size]``): the GRU runs from the stored memory
    ``start`` ``[S, memory]`` through every step with the gradient flowing along, restarts at
    zeros before the steps where ``reset`` ``[S, L]`` says so, and passes no gradient back
    through the burn-in steps (``burn`` ``[S, L]``). Only the GRU steps one at a time: the
    trunk before it runs once over every step."""
    n_seqs, length = reset.shape
    encoded = net.encode(obs).reshape(n_seqs, length, -1)
    memory, after = start, []
    for j in range(length):
        memory = torch.where(reset[:, j, None], 0.0, memory)
        updated = net.core(encoded[:, j], memory)
        memory = torch.where(burn[:, j, None], updated.detach(), updated)
        after.append(memory)
    return torch.stack(after, 1).reshape(n_seqs * length, -1)


def unroll(
    net: PolicyNet,
    obs: torch.Tensor,
    mask: torch.Tensor,
    prior: torch.Tensor | None,
    start: torch.Tensor,
    reset: torch.Tensor,
    burn: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The masked logits ``[S * L, A]`` of ``S`` sequences of ``L`` steps (``obs``, ``mask``
    and ``prior`` sequence-major), and the memories they were read from ``[S * L, memory]``
    (the actor's features, :func:`memories`); the head runs once over every step."""
    features = memories(net, obs, start, reset, burn)
    return net.read(obs, features, mask, prior), features
