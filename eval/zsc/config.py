"""The cooperative-AI protocol's config (YAML), validated before any training or game.

env: hocus_pocus_v1                            # a cooperative game; must be the train config's
num_players: 4                                 # must be the train config's num_players
train: configs/train/hocus_pocus_torch.yaml    # the training config whose seeds are compared
seeds: [0, 1, 2]                               # k >= 3 distinct training seeds
train_overrides: {total_steps: 458752, max_minutes: 0}  # fields set as --set would (not seed):
                                               # each seed's budget in steps (max_minutes is
                                               # refused: it would give seeds different budgets)
checkpoints: [torch:a/final.pt, ...]           # optional: finished checkpoints (torch: or sb3:),
                                               # one per seed in order, used instead of training
partners: [heuristic:greedy, random]           # ad-hoc partners (default: every heuristic + random)
measure: score                                 # the team score compared: win (the win rate, the
                                               # default) or score (the game's own figure, e.g.
                                               # stuns; only where more is better)
games: 500                                     # seeded games per seat composition
seed: 0                                        # the first game seed (every lineup: same deals)
workers: 2                                     # evaluation processes (results do not depend on it)
engine: reference                              # reference (the harness) or batched (the batched
                                               # engine: the same lineups and seatings, other deals)
out: runs/zsc/hocus_pocus                      # report.md, results.json.xz, plots
"""

from __future__ import annotations

import json
from pathlib import Path, PurePath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cauldron import envs
from cauldron.agents import HEURISTICS, make_agent
from cauldron.agents.specs import parse_spec
from cauldron.envs.core.errors import ConfigError
from cauldron.eval import splits
from cauldron.eval.config import MAX_GAMES, SEED_LIMIT, parse_model, read_config_file
from cauldron.eval.stats import MIN_SEEDS
from cauldron.train.config import TrainConfig, load_config

QUICK_DIVISOR = 10  # --quick: each seed's steps (and warm-start games) divided by this
QUICK_GAMES = 100  # --quick: at most this many games per composition (and final evaluation)
CHECKPOINT_KINDS = {".pt": "torch", ".zip": "sb3"}  # a bare path's kind, by its suffix


class ZscConfig(BaseModel):
    """Self-play vs cross-play and ad-hoc teamwork of one training config's seeds."""

    model_config = ConfigDict(extra="forbid", strict=True)

    env: str = Field(description="a cooperative game's id (the train config's)")
    num_players: int = Field(description="players at the table (the train config's)")
    train: str = Field(description="path of the training config whose seeds are compared")
    seeds: list[int] = Field(description=f"at least {MIN_SEEDS} distinct training seeds")
    train_overrides: dict[str, Any] = Field(
        default_factory=dict,
        description="training fields set as `cauldron train --set` would (not seed); "
        "options.NAME sets one environment option",
    )
    checkpoints: list[str] | None = Field(
        None,
        description="finished checkpoints (torch:<file> or sb3:<file>, or a .pt / .zip path), "
        "one per seed in order, played instead of training the seeds",
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
    split: str = Field(
        splits.DEFAULT_SPLIT, description="the deals: dev (tuning) or test (reported figures)"
    )
    seed: int | None = Field(
        None, ge=0, lt=SEED_LIMIT, description="first game seed (default: the split's first)"
    )
    workers: int = Field(
        2, ge=1, le=64, description="evaluation worker processes (engine reference)"
    )
    engine: Literal["reference", "batched"] = Field(
        "reference",
        description="where the games are played: `reference`, the harness's games; `batched`, "
        "the game's batched engine (cauldron.eval.zsc.batched), the same lineups and seatings "
        "on other deals; seeds must be torch checkpoints, partners random, heuristics with a "
        "batched form, torch checkpoints or python agents (asked row by row)",
    )
    out: str = Field(description="folder of report.md, results.json.xz and the plots")
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
        self.seed = splits.first_seed(self.split, self.seed, self.games)
        first = self.train_config(self.seeds[0])
        for field in ("env", "num_players"):
            if getattr(first, field) != getattr(self, field):
                raise ValueError(
                    f"{field} {getattr(self, field)!r} is not the train config's "
                    f"{getattr(first, field)!r} ({self.train})"
                )
        if self.checkpoints is not None:
            self.checkpoints = self._checked_checkpoints(self.checkpoints)
        if self.engine == "batched":
            self._check_batched(first)
        if self.checkpoints is None and first.max_minutes:
            raise ValueError(
                f"max_minutes {first.max_minutes:g} (train config with train_overrides) stops "
                "each seed by the clock, so seeds get different step budgets; set "
                "train_overrides {max_minutes: 0, total_steps: N} (equal budgets, "
                "docs/benchmark_protocol.md), or give finished runs as checkpoints"
            )
        return self

    def _check_batched(self, first: TrainConfig) -> None:
        """``engine: batched`` needs the game's batched engine, torch seeds and partners that
        play there (:func:`cauldron.agents.batched.make_batched_agent`)."""
        import torch

        from cauldron.agents.batched import make_batched_agent

        if self.env not in envs.batched_ids():
            raise ValueError(
                f"engine 'batched': {self.env} has no batched engine; games with one: "
                f"{envs.batched_ids()}"
            )
        kinds = (
            {parse_spec(spec).kind for spec in self.checkpoints}
            if self.checkpoints is not None
            else {first.trainer}
        )
        if kinds != {"torch"}:
            raise ValueError(
                f"engine 'batched' plays torch checkpoints only; the seeds are {sorted(kinds)}"
            )
        for spec in self.partners:
            try:
                make_batched_agent(
                    spec, self.env, self.num_players, torch.device("cpu"), None, per_game=True
                )
            except ConfigError as err:
                raise ValueError(f"engine 'batched', partner {spec!r}: {err}") from None

    def _checked_checkpoints(self, given: list[str]) -> list[str]:
        """The checkpoints as agent specs, after checking there is one per seed, each file
        exists and was trained for this game (and, where it records it, this player count)."""
        if len(given) != len(self.seeds):
            raise ValueError(
                f"checkpoints: {len(given)} given for the {len(self.seeds)} seeds "
                f"{self.seeds}; give one per seed, in order"
            )
        specs = [checkpoint_spec(text) for text in given]
        if len(set(specs)) != len(specs):
            raise ValueError(f"checkpoints must be distinct, got {given}")
        for spec in specs:
            try:
                make_agent(spec, self.env)
                players = trained_players(spec)
            except ConfigError as err:
                raise ValueError(f"checkpoints: {err}") from None
            if players not in (None, self.num_players):
                raise ValueError(
                    f"checkpoints: {spec} was trained at {players} players, the protocol "
                    f"plays {self.num_players}"
                )
        return specs

    def train_config(self, seed: int) -> TrainConfig:
        """The training config of one seed, with ``train_overrides`` applied; its folder is the
        run folder ``cauldron train <train> --seeds`` would use (``<stem>-seed<seed>``)."""
        pairs = [f"{key}={json.dumps(value)}" for key, value in self.train_overrides.items()]
        try:
            return load_config(self.train, pairs, seed)
        except ConfigError as err:
            raise ValueError(f"train (with train_overrides): {err}") from None


def checkpoint_spec(text: str) -> str:
    """``torch:<file>`` or ``sb3:<file>`` as given, or a bare ``.pt`` / ``.zip`` path as that
    spec; a :class:`ValueError` for anything else."""
    if not isinstance(text, str) or not text:
        raise ValueError(f"checkpoints: {text!r} is not a checkpoint path")
    if ":" not in text and PurePath(text).suffix in CHECKPOINT_KINDS:
        text = f"{CHECKPOINT_KINDS[PurePath(text).suffix]}:{text}"
    try:
        kind = parse_spec(text).kind
    except ConfigError:
        kind = None
    if kind not in CHECKPOINT_KINDS.values():
        raise ValueError(
            f"checkpoints: {text!r} is not a torch:<file> or sb3:<file> checkpoint (or a .pt "
            "or .zip path)"
        )
    return text


def trained_players(spec: str) -> int | None:
    """The player count a torch or sb3 checkpoint was trained at, where it records one."""
    parsed = parse_spec(spec)
    if parsed.kind == "torch":
        from cauldron.agents.torch_policy import load_checkpoint

        players = load_checkpoint(Path(parsed.target))[1].get("num_players")
    else:
        from cauldron.agents.checkpoints import SB3_META

        meta = json.loads(Path(parsed.target + SB3_META).read_text())
        players = meta.get("num_players")
    return players or None


def default_partners(env_id: str) -> list[str]:
    """Random play and every heuristic of the game."""
    return ["random"] + [f"heuristic:{name}" for name in HEURISTICS.get(env_id, {})]


def quick_config(config: ZscConfig) -> tuple[ZscConfig, list[str]]:
    """What ``--quick`` trains, and each change as text: every seed's ``total_steps`` and a
    warm start's games divided by :data:`QUICK_DIVISOR`, the final evaluation cut to
    :data:`QUICK_GAMES` games, in run folders of their own (``<name>-quick-seed<k>``) so a
    quick seed is never reused as a full one; the report goes to a folder of its own
    (``<out>-quick``), never over a full run's. Given checkpoints train nothing: only the
    report's folder changes."""
    out = f"{str(config.out).rstrip('/')}-quick"
    moved = f"report {config.out} -> {out}"
    if config.checkpoints is not None:
        return parse_zsc_config({**config.model_dump(), "out": out}, "--quick"), [moved]
    base = config.train_config(config.seeds[0])
    name = base.name.removesuffix(f"-seed{base.seed}")
    steps = max(1, base.total_steps // QUICK_DIVISOR)
    final = min(base.final_eval_games, QUICK_GAMES)
    overrides = {
        **config.train_overrides,
        "total_steps": steps,
        "final_eval_games": final,
        "name": f"{name}-quick",
    }
    changes = [
        f"total_steps {base.total_steps:,} -> {steps:,} (divided by {QUICK_DIVISOR})",
        f"final_eval_games {base.final_eval_games:,} -> {final:,}",
        f"run folders {name}-seed<k> -> {name}-quick-seed<k>",
        moved,
    ]
    if base.warm_start is not None:
        games = max(1, base.warm_start.games // QUICK_DIVISOR)
        overrides["warm_start"] = {**base.warm_start.model_dump(mode="json"), "games": games}
        changes.insert(1, f"warm_start.games {base.warm_start.games:,} -> {games:,}")
    data = {**config.model_dump(), "train_overrides": overrides, "out": out}
    return parse_zsc_config(data, "--quick"), changes


def load_zsc_config(path: str | Path, overrides: dict[str, Any] | None = None) -> ZscConfig:
    """Read and validate a protocol config (``name`` defaults to the file's stem), with the
    command line's ``overrides`` of its fields applied before it is checked."""
    path = Path(path)
    data = read_config_file(path) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config must be a mapping of keys to values")
    data = {"name": path.stem, **data, **(overrides or {})}
    return parse_model(ZscConfig, data, str(path))


def parse_zsc_config(data: dict[str, Any], where: str = "config") -> ZscConfig:
    """Validate a protocol config given as a mapping."""
    return parse_model(ZscConfig, data, where)
