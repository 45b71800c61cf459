"""The cooperative-AI protocol's config (YAML), validated before any training or game.

env: hocus_pocus_v1                            # a cooperative game; must be the train config's
num_players: 4                                 # must be the train config's num_players
train: configs/train/hocus_pocus_torch.yaml    # the training config whose seeds are compared
seeds: [0, 1, 2]                               # k >= 3 distinct training seeds
train_overrides: {max_minutes: 10}             # optional fields set as --set would (not seed)
partners: [heuristic:greedy, random]           # ad-hoc partners (default: every heuristic + random)
measure: score                                 # the team score compared: win (the win rate, the
                                               # default) or score (the game's own figure, e.g.
                                               # stuns; only where more is better)
games: 500                                     # seeded games per seat composition
seed: 0                                        # the first game seed (every lineup: same deals)
workers: 2                                     # evaluation processes (results do not depend on it)
out: runs/zsc/hocus_pocus                      # report.md, results.json and the plots go here
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

import envs
from agents import HEURISTICS, make_agent
from envs.core.errors import ConfigError
from eval.config import MAX_GAMES, SEED_LIMIT, load_model, parse_model
from train.config import TrainConfig, load_config

MIN_SEEDS = 3


class ZscConfig(BaseModel):
    """Self-play vs cross-play and ad-hoc teamwork of one training config's seeds."""

    model_config = ConfigDict(extra="forbid", strict=True)

    env: str = Field(description="a cooperative game's id (the train config's)")
    num_players: int = Field(description="players at the table (the train config's)")
    train: str = Field(description="path of the training config whose seeds are compared")
    seeds: list[int] = Field(description=f"at least {MIN_SEEDS} distinct training seeds")
    train_overrides: dict[str, Any] = Field(
        default_factory=dict,
        description="training fields set as `python -m train --set` would (not seed); "
        "options.NAME sets one environment option",
    )
    partners: list[str] | None = Field(
        None, description="ad-hoc partner specs (default: random and every heuristic)"
    )
    measure: Literal["win", "score"] = Field(
        "win",
        description="team score of the ratio and plots: the win rate, or the game's own figure "
        "(score: only where more is better, e.g. Hocus Pocus' stuns, not the Horseman's scares)",
    )
    games: int = Field(500, ge=1, le=MAX_GAMES, description="seeded games per seat composition")
    seed: int = Field(0, ge=0, lt=SEED_LIMIT, description="first game seed")
    workers: int = Field(2, ge=1, le=64, description="evaluation worker processes")
    out: str = Field(description="folder of report.md, results.json and the plots")
    name: str = Field(
        "zsc",
        pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$",
        description="the run's name in the report (default: the file's stem): letters, digits, "
        "_ . -",
    )

    @field_validator("env")
    @classmethod
    def _cooperative(cls, env: str) -> str:
        if not envs.spec(env).cooperative:
            cooperative = [e for e in envs.ids() if envs.spec(e).cooperative]
            raise ValueError(f"{env} is not cooperative; the protocol takes {cooperative}")
        return env

    @field_validator("seeds")
    @classmethod
    def _enough_seeds(cls, seeds: list[int]) -> list[int]:
        if len(seeds) < MIN_SEEDS:
            raise ValueError(
                f"cross-play needs at least {MIN_SEEDS} training seeds (k >= {MIN_SEEDS}), "
                f"got {seeds}"
            )
        if len(set(seeds)) != len(seeds) or min(seeds) < 0:
            raise ValueError(f"seeds must be distinct and at least 0, got {seeds}")
        return seeds

    @field_validator("train_overrides")
    @classmethod
    def _no_seed(cls, overrides: dict[str, Any]) -> dict[str, Any]:
        if "seed" in overrides:
            raise ValueError("seed is set by seeds, not train_overrides")
        return overrides

    @model_validator(mode="after")
    def _consistent(self) -> ZscConfig:
        if self.partners is None:
            self.partners = default_partners(self.env)
        if not self.partners or len(set(self.partners)) != len(self.partners):
            raise ValueError(f"partners must be distinct agent specs, got {self.partners}")
        for spec in self.partners:
            try:
                make_agent(spec, self.env)
            except ConfigError as err:
                raise ValueError(f"partner {spec!r}: {err}") from None
        if self.seed + self.games > SEED_LIMIT:
            raise ValueError(f"seed + games must be at most {SEED_LIMIT}")
        first = self.train_config(self.seeds[0])
        for field in ("env", "num_players"):
            if getattr(first, field) != getattr(self, field):
                raise ValueError(
                    f"{field} {getattr(self, field)!r} is not the train config's "
                    f"{getattr(first, field)!r} ({self.train})"
                )
        return self

    def train_config(self, seed: int) -> TrainConfig:
        """The training config of one seed, with ``train_overrides`` applied; its folder is the
        run folder ``python -m train <train> --seeds`` would use (``<stem>-seed<seed>``)."""
        pairs = [f"{key}={json.dumps(value)}" for key, value in self.train_overrides.items()]
        try:
            return load_config(self.train, pairs, seed)
        except ConfigError as err:
            raise ValueError(f"train (with train_overrides): {err}") from None


def default_partners(env_id: str) -> list[str]:
    """Random play and every heuristic of the game."""
    return ["random"] + [f"heuristic:{name}" for name in HEURISTICS.get(env_id, {})]


def load_zsc_config(path: str | Path) -> ZscConfig:
    """Read and validate a protocol config (``name`` defaults to the file's stem)."""
    return load_model(ZscConfig, path)


def parse_zsc_config(data: dict[str, Any], where: str = "config") -> ZscConfig:
    """Validate a protocol config given as a mapping."""
    return parse_model(ZscConfig, data, where)
