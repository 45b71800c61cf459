"""The training config (YAML), validated before any work starts.

Every field is documented below; unknown keys, wrong types and impossible values are rejected
with a message naming the field and what is allowed. The config is saved with the run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.envs.core.errors import ConfigError
from cauldron.eval import splits
from cauldron.eval.config import (
    MAX_GAMES,
    apply_override,
    check_option_names,
    parse_model,
    read_config_file,
)
from cauldron.eval.executors import check_address, import_ray

RLLIB_FIELDS = ("num_env_runners", "num_learners", "ray_address")
RLLIB = "trainer 'rllib'"  # how errors name the RLlib trainer
# Bounds of the numeric fields (every float field must also be finite): far beyond any real run,
# near enough to refuse a typo or an absurd value at validation rather than deep into a run.
MAX_STEPS = 10**12  # learner steps
MAX_TRAINING_SEED = 100_000_000  # a run's seeds and its evaluation seeds stay in the dev split
MAX_WIDTH = 8192  # units of a hidden layer or of the GRU memory
MAX_DEPTH = 16  # hidden layers


def _known_keys(model: type[BaseModel], data: Any, where: str) -> Any:
    """``data`` unchanged, or a ValueError naming an unknown key of a nested section and the
    keys ``model`` allows (the generic message would list the top level's)."""
    if isinstance(data, dict):
        unknown = sorted(set(data) - set(model.model_fields))
        if unknown:
            raise ValueError(
                f"{where}: unknown key(s) {unknown} (allowed: {', '.join(model.model_fields)})"
            )
    return data


class WarmStart(BaseModel):
    """Imitation warm start (:mod:`cauldron.train.warm_start`): before PPO, play ``games`` games
    with ``agent`` deciding for the learner (every seat of a cooperative game, the learner's seat
    against the opponent pool of a competitive one), then train the actor by cross-entropy over
    the masked logits on its (observation, mask, action) records for ``epochs`` passes, and the
    critic on the records' discounted returns."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    agent: str = Field(
        min_length=1, description="the demonstrator: any agent spec, e.g. heuristic:greedy"
    )
    games: int = Field(ge=1, le=1_000_000, description="demonstration games to record")
    epochs: int = Field(5, ge=1, le=1000, description="passes over the records")
    batch_size: int = Field(512, ge=1, le=2**20, description="records per gradient step")
    learning_rate: float = Field(1e-3, gt=0, le=1, description="Adam step size of the cloning")
    critic: bool = Field(True, description="also fit the critic to the records' returns")
    bc_coef: float = Field(
        0.0,
        ge=0,
        le=100,
        description="torch trainer: weight of a cloning loss on the records added to PPO's "
        "loss, annealed linearly to 0 over bc_steps learner steps (0: none), so that PPO does "
        "not unlearn the demonstrator at once",
    )
    bc_steps: int = Field(
        1_000_000, ge=1, le=MAX_STEPS, description="learner steps over which bc_coef decays to 0"
    )

    @model_validator(mode="before")
    @classmethod
    def _keys(cls, data: Any) -> Any:
        return _known_keys(cls, data, "warm_start")


class Stage(BaseModel):
    """One curriculum stage (:mod:`cauldron.train.curriculum`): ``options`` merged over the config's
    ``options`` while the learner's step count is below ``until_step``."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    until_step: int | None = Field(
        None,
        ge=1,
        le=MAX_STEPS,
        description="the stage ends at this learner step (the last may omit it)",
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description="environment options of this stage (over `options`)"
    )

    @model_validator(mode="before")
    @classmethod
    def _keys(cls, data: Any) -> Any:
        return _known_keys(cls, data, "curriculum stage")


SELF, SNAPSHOTS = "self", "snapshots"  # partners: the learner itself, its snapshots


class Partner(BaseModel):
    """A member of the partner population (``partners``): who plays a partner seat, how often
    it is drawn, and how often its choice is replaced by a uniformly random legal action."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    agent: str = Field(
        min_length=1,
        description="`self` (the current learner: that seat trains too), `snapshots` (a frozen "
        "earlier learner, see self_play_every) or an agent spec with a batched form: random, "
        "heuristic:<name>, torch:<checkpoint of this game and player count>",
    )
    weight: float = Field(
        1.0, ge=0, le=1e6, description="relative chance of being drawn for a seat"
    )
    epsilon: float = Field(
        0.0,
        ge=0,
        le=1,
        description="chance that each of the member's choices is replaced by a uniformly random "
        "legal action (a noisy partner); 0 for `self`",
    )

    @model_validator(mode="before")
    @classmethod
    def _keys(cls, data: Any) -> Any:
        return _known_keys(cls, data, "partners")


class TrainConfig(BaseModel):
    """A training run: the game, the trainer, its hyperparameters, evaluation and output."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    name: str = Field(
        min_length=1,
        description="run folder name under `out` (default: `<config file stem>-seed<seed>`, or "
        "`run-seed<seed>` without a file), so that runs of other seeds never overwrite it",
    )
    env: str = Field(description="registered environment id")
    num_players: int = Field(2, description="players at the table")
    options: dict[str, Any] = Field(default_factory=dict, description="environment options")
    trainer: Literal["torch", "sb3", "rllib"] = Field(
        "torch", description="PyTorch PPO, SB3 MaskablePPO or RLlib PPO (cauldron.train.rllib)"
    )
    seed: int = Field(
        0,
        ge=0,
        lt=MAX_TRAINING_SEED,
        description="seeds every generator of the run; below 100,000,000, so that the run's "
        "evaluation and demonstration games (seed + 10,000 + update, seed + 20,000 + game) deal "
        "from the dev split (cauldron.eval.splits)",
    )
    eval_split: str = Field(
        splits.TRAINING_SPLIT,
        description="the deals of in-training evaluation and checkpoint selection: dev only (the "
        "test split is kept for reported figures)",
    )
    total_steps: int = Field(
        100_000, ge=1, le=MAX_STEPS, description="learner decisions to train for"
    )
    max_minutes: float = Field(
        0, ge=0, le=10**6, description="also stop after this much training time (0: no limit)"
    )
    num_envs: int = Field(
        8, ge=1, le=65_536, description="games stepped in lockstep (at most 256 unless batched)"
    )
    engine: Literal["reference", "batched"] = Field(
        "reference",
        description="`reference`: the Python games (one process or `workers`); `batched`: the "
        "game's tensor engine (envs.make_batched), torch trainer only",
    )
    device: str = Field("cpu", description="torch device of the batched engine and its network")
    workers: int = Field(
        0, ge=0, le=64, description="processes stepping the games (0: the trainer's own)"
    )
    threads: int = Field(
        1,
        ge=0,
        le=256,
        description=(
            "torch math threads (0: one per core). 1 by default: with more, a run slows many "
            "times over as soon as other processes load the cores (cauldron train-bench)"
        ),
    )
    precision: Literal["float32", "bfloat16"] = Field(
        "float32",
        description="torch trainer: number type of the network's matrix products. `bfloat16` "
        "runs them under autocast (weights, losses and optimizer stay float32): on CPUs "
        "with AMX or AVX-512 BF16 a batched training step is 1.1-1.9x faster "
        "(cauldron.train.bench); on other CPUs the products are 8-11x slower than float32 and "
        "the run warns",
    )
    rollout_steps: int = Field(128, ge=1, le=65_536, description="steps per game between updates")
    learning_rate: float = Field(3e-4, gt=0, le=1)
    lr_decay_steps: int = Field(
        0,
        ge=0,
        description="torch trainer: the learning rate falls linearly from learning_rate to 0 "
        "over the last lr_decay_steps learner steps of total_steps, constant before (0: "
        "constant throughout). A warmup-stable-decay schedule's cooldown: a resumed run may set "
        "it, so a run extended from a checkpoint of its constant phase can end with one",
    )
    gamma: float = Field(0.99, gt=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    clip: float = Field(0.2, gt=0, le=1)
    epochs: int = Field(4, ge=1, le=1000)
    minibatches: int = Field(4, ge=1, description="at most num_envs * rollout_steps, a divisor")
    ent_coef: float = Field(0.01, ge=0, le=10)
    vf_coef: float = Field(0.5, ge=0, le=100)
    max_grad_norm: float = Field(0.5, gt=0, le=10**6)
    hidden: list[Annotated[int, Field(ge=1, le=MAX_WIDTH)]] = Field(
        [128, 128],
        min_length=1,
        max_length=MAX_DEPTH,
        description=f"hidden layer sizes (1 to {MAX_DEPTH} layers of 1 to {MAX_WIDTH})",
    )
    head: Literal["flat", "factored"] = Field(
        "flat",
        description="torch trainer: the actor's output layer. `flat`: one output row per "
        "action; `factored`: the game's own head (cauldron.agents.torch_policy.FACTORED_HEADS: "
        "hocus_pocus_v1 and voodoo_mania_v1), where one small network shared by every card "
        "and space (Hocus Pocus; cauldron.agents.hocus_pocus.head) or by every hand slot "
        "(Voodoo Mania; cauldron.agents.voodoo_mania.head) scores each play from its features, "
        "reading the GRU's memory with recurrent > 0",
    )
    prior: str = Field(
        "",
        description="torch trainer: a batched heuristic (`heuristic:<name>`) whose action is an "
        "input of the policy: prior_weight is added to its logit (residual policy learning; "
        "the trained agent then contains the heuristic)",
    )
    prior_weight: float = Field(
        3.0,
        ge=-1000,
        le=1000,
        description="the prior's logit bonus at the start (learnt from there)",
    )
    centralized_critic: bool = Field(False, description="cooperative games: critic reads state()")
    reward_shaping: str = Field(
        "",
        description="package.module:function added to the learner's reward after every move "
        "(cauldron.train.bridge's hook; reference engine; not used in evaluation)",
    )
    recurrent: int = Field(
        0, ge=0, le=MAX_WIDTH, description="GRU memory size of the actor (0: none; torch)"
    )
    seq_len: int = Field(
        16,
        ge=1,
        description="recurrent: back-propagation through time over sequences of at most this "
        "many consecutive decisions of one env and seat (burn-in included); at most "
        "rollout_steps. 1: each decision trains from its stored memory alone",
    )
    burn_in: int = Field(
        0,
        ge=0,
        description="recurrent: decisions at a sequence's start (the ones just before its own) "
        "that only warm the stored memory with the current weights: no loss, no gradient; "
        "below seq_len",
    )
    belief_coef: float = Field(
        0.0,
        ge=0,
        le=1000,
        description="torch: weight of the auxiliary belief loss (cauldron.train.belief): a head on "
        "the actor's features predicts the other seats' hidden hands, read from state() in "
        "training only; never an input of the policy, not in the checkpoint. 0: none",
    )
    other_play: bool = Field(
        False,
        description="torch, cooperative games: Other-Play (Hu et al., 2020): each game and seat "
        "plays through a random relabeling of the game's symmetries (cauldron.envs.core.symmetry; "
        "the game's RULES.md lists them), drawn anew for every game",
    )
    opponents: list[str] = Field(
        default_factory=list, description="competitive games: opponent agent specs"
    )
    self_play_every: int = Field(
        0, ge=0, le=10**6, description="updates between self-play snapshots"
    )
    opponent_sampling: Literal["uniform", "pfsp"] = Field(
        "uniform",
        description="engine 'batched', competitive games: how each new game draws its opponent "
        "from the pool (opponents and snapshots): uniform, or pfsp (prioritized fictitious "
        "self-play: weight (losses + 1) / (games + 2) squared, the learner's losses to each)",
    )
    partners: list[Partner] | None = Field(
        None,
        description="engine 'batched', cooperative games: the population the learner's partners "
        "are drawn from (cauldron.train.partners), e.g. [{agent: self, weight: 2}, {agent: "
        "heuristic:planner, epsilon: 0.2}, {agent: snapshots}]. In each game the learner plays "
        "one seat (seat 0 first, one seat further on each game of the row, as opponents' "
        "tables do); each other seat draws a member by weight, and trains only if it drew "
        "`self`. None: pure self-play",
    )
    eval_every: int = Field(10, ge=1, le=10**6, description="updates between evaluations")
    eval_games: int = Field(50, ge=1, le=MAX_GAMES, description="games per periodic evaluation")
    final_eval_games: int = Field(
        500, ge=1, le=MAX_GAMES, description="games per pairing at the end"
    )
    num_env_runners: int = Field(
        0, ge=0, le=1024, description="rllib: processes sampling games (0: in the driver)"
    )
    num_learners: int = Field(0, ge=0, le=1024, description="rllib: learner processes (0: driver)")
    ray_address: str | None = Field(
        None,
        pattern=r"^(auto|(ray://)?[A-Za-z0-9_.-]+:[0-9]{1,5})$",
        description="rllib: a running Ray cluster (auto, HOST:PORT, ray://HOST:PORT); none: a "
        "local Ray instance",
    )
    warm_start: WarmStart | None = Field(
        None,
        description="imitation warm start before PPO (torch, sb3): {agent, games, epochs, "
        "batch_size, learning_rate, critic, bc_coef, bc_steps}; see WarmStart",
    )
    curriculum: list[Stage] = Field(
        default_factory=list,
        description="stages of environment options switched at learner-step thresholds (torch, "
        "sb3), e.g. [{until_step: 2000000, options: {sunrise_steps: 1}}, {options: {}}]: each "
        "stage's options are merged over `options` while the step count is below its "
        "until_step (steps increasing; only the last may omit it and then lasts to the end; "
        "after a last stage with until_step, `options` alone apply). The torch trainer switches "
        "at the first update that starts at or past the threshold, SB3 after the rollout that "
        "crosses it. Evaluations always play `options`",
    )
    out: str = Field("runs/train", description="root of the run folders")
    resume: bool = Field(False, description="continue from the run folder's last state")

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: Any) -> Any:
        if isinstance(data, dict) and "name" not in data:
            return {**data, "name": f"run-seed{data.get('seed', 0)}"}
        return data

    @field_validator("eval_split")
    @classmethod
    def _dev_only(cls, name: str) -> str:
        return splits.for_training(name, "in-training evaluation and checkpoint selection")

    @field_validator("name")
    @classmethod
    def _plain_name(cls, name: str) -> str:
        if name in (".", "..") or any(c in name for c in "/\\?") or name != name.strip():
            raise ValueError(
                f"{name!r} must be a plain folder name (no '/', '\\', '?', '.' or '..')"
            )
        return name

    @field_validator("out")
    @classmethod
    def _no_query(cls, out: str) -> str:
        """The final evaluation names the trained agent ``torch:<out>/<name>/final.pt``, and
        an agent spec's options start at ``?``."""
        if "?" in out:
            raise ValueError(f"{out!r} may not contain '?' (it starts an agent spec's options)")
        return out

    @model_validator(mode="after")
    def _consistent(self) -> TrainConfig:
        spec = envs.spec(self.env)
        low, high = spec.players
        if not low <= self.num_players <= high:
            raise ValueError(f"num_players {self.num_players} outside {low}..{high}")
        check_option_names(self.env, self.options)
        envs.make(self.env, num_players=self.num_players, **self.options)
        if spec.cooperative and self.opponents:
            raise ValueError(f"{self.env} is cooperative: opponents must be empty")
        if not spec.cooperative and not self.opponents:
            raise ValueError(
                f"{self.env} is competitive: opponents must name at least one "
                "agent spec (self-play snapshots join them)"
            )
        if self.recurrent and self.trainer != "torch":
            raise ValueError("recurrent needs trainer 'torch'")
        if self.opponent_sampling != "uniform" and (self.engine != "batched" or spec.cooperative):
            raise ValueError(
                "opponent_sampling 'pfsp' needs engine 'batched' and a competitive game "
                "(it weighs the opponents of the batched trainer's pool)"
            )
        if self.self_play_every and self.trainer == "sb3":
            raise ValueError(
                "self_play_every (self-play snapshots) needs trainer 'torch' or 'rllib'"
            )
        if self.centralized_critic and (not spec.cooperative or self.trainer != "torch"):
            raise ValueError("centralized_critic needs a cooperative game and trainer 'torch'")
        if self.belief_coef or self.other_play:
            self._check_belief_and_symmetries()
        if self.head == "factored":
            self._check_head()
        if self.prior:
            self._check_prior()
        self._check_learning_aids()
        given = [f for f in RLLIB_FIELDS if getattr(self, f) != type(self).model_fields[f].default]
        if given and self.trainer != "rllib":
            raise ValueError(f"{', '.join(given)} need trainer 'rllib'")
        if self.trainer == "rllib":
            check_rllib(self)
        for opponent in self.opponents:
            make_agent(opponent, self.env)
        if self.reward_shaping:
            from cauldron.train.bridge import load_shaping

            load_shaping(self.reward_shaping)
            if self.engine != "reference" or self.trainer == "rllib":
                raise ValueError("reward_shaping needs engine 'reference' (the bridge's hook)")
        if self.engine == "batched":
            self._check_batched()
        elif self.num_envs > 256:
            raise ValueError(f"num_envs {self.num_envs} above 256 needs engine 'batched'")
        if self.partners is not None:
            self._check_partners(spec.cooperative)
        if self.workers > self.num_envs:
            raise ValueError(f"workers ({self.workers}) must not exceed num_envs ({self.num_envs})")
        if self.workers and self.trainer != "torch":
            raise ValueError("workers needs trainer 'torch'")
        if self.precision != "float32" and self.trainer != "torch":
            raise ValueError(f"precision {self.precision!r} needs trainer 'torch'")
        if self.lr_decay_steps and self.trainer != "torch":
            raise ValueError("lr_decay_steps needs trainer 'torch'")
        if self.lr_decay_steps > self.total_steps:
            raise ValueError(
                f"lr_decay_steps ({self.lr_decay_steps:,}) must not exceed total_steps "
                f"({self.total_steps:,})"
            )
        if (self.num_envs * self.rollout_steps) % self.minibatches:
            raise ValueError("num_envs * rollout_steps must be divisible by minibatches")
        return self

    @model_validator(mode="after")
    def _sequences(self) -> TrainConfig:
        """``seq_len`` and ``burn_in`` (back-propagation through time) only with a memory, a
        sequence no longer than a rollout, and a burn-in shorter than its sequence."""
        fields = type(self).model_fields
        given = [f for f in ("seq_len", "burn_in") if getattr(self, f) != fields[f].default]
        if not self.recurrent:
            if given:
                verb = "needs" if len(given) == 1 else "need"
                raise ValueError(f"{' and '.join(given)} {verb} recurrent > 0 (a GRU memory)")
            return self
        if self.seq_len > self.rollout_steps:
            default = "" if "seq_len" in given else ", the default"
            raise ValueError(
                f"seq_len ({self.seq_len}{default}) must not exceed rollout_steps "
                f"({self.rollout_steps})"
            )
        if self.burn_in >= self.seq_len:
            raise ValueError(f"burn_in ({self.burn_in}) must be below seq_len ({self.seq_len})")
        return self

    def _check_learning_aids(self) -> None:
        """Warm start and curriculum: the trainers that have them, a known demonstrator, every
        stage's options accepted by the game's own checks, an increasing schedule."""
        aids = [f for f in ("warm_start", "curriculum") if getattr(self, f)]
        if aids and self.trainer == "rllib":
            raise ValueError(f"{', '.join(aids)} need trainer 'torch' or 'sb3'")
        if self.warm_start:
            if self.warm_start.bc_coef and self.trainer != "torch":
                raise ValueError("warm_start.bc_coef needs trainer 'torch'")
            try:
                make_agent(self.warm_start.agent, self.env)
            except ConfigError as err:
                raise ValueError(f"warm_start.agent: {err}") from None
        check_curriculum(self)

    def _check_belief_and_symmetries(self) -> None:
        """``belief_coef`` needs the torch trainer and hidden hands; ``other_play`` the torch
        trainer and a cooperative game with symmetries under these options."""
        for field in ("belief_coef", "other_play"):
            if getattr(self, field) and self.trainer != "torch":
                raise ValueError(f"{field} needs trainer 'torch'")
        try:
            if self.belief_coef:
                from cauldron.train.belief import hand_layout

                hand_layout(self.env, self.num_players, self.options)
            if self.other_play:
                from cauldron.envs.core.symmetry import symmetries

                for options in [self.options, *(stage.options for stage in self.curriculum)]:
                    symmetries(self.env, self.num_players, options)
        except ConfigError as err:
            raise ValueError(str(err)) from None

    @property
    def needs_state(self) -> bool:
        """Whether the trainer reads ``state()``: a centralized critic or a belief target."""
        return self.centralized_critic or self.belief_coef > 0

    def _check_head(self) -> None:
        """A factored head: trainer torch, a game that has one, and none of the options its
        tables assume at their defaults (in ``options`` or a curriculum stage)."""
        from cauldron.agents.torch_policy import factored_head

        if self.trainer != "torch":
            raise ValueError("head 'factored' needs trainer 'torch'")
        try:
            head = factored_head(self.env)
        except ConfigError as err:
            raise ValueError(str(err)) from None
        options = [self.options, *(stage.options for stage in self.curriculum)]
        changed = sorted({k for o in options for k in o if k in head.fixed_options})
        if changed:
            raise ValueError(
                f"head 'factored' assumes the default {', '.join(changed)} "
                f"(options it cannot be used with: {list(head.fixed_options)})"
            )

    def _check_prior(self) -> None:
        """A prior: trainer torch and a heuristic of the game with a batched form."""
        from cauldron.agents.torch_policy import check_prior

        if self.trainer != "torch":
            raise ValueError("prior needs trainer 'torch'")
        check_prior(self.prior, self.env)

    def _check_batched(self) -> None:
        import torch

        from cauldron.agents.batched import make_batched_agent
        from cauldron.envs.core.devices import torch_device

        if self.trainer != "torch":
            raise ValueError("engine 'batched' needs trainer 'torch'")
        if self.env not in envs.batched_ids():
            raise ValueError(
                f"{self.env} has no batched engine; games with one: {envs.batched_ids()}"
            )
        if self.workers:
            raise ValueError("engine 'batched' steps every game in the trainer: workers must be 0")
        device = torch_device(self.device)  # a ConfigError for a device this machine lacks
        for opponent in self.opponents:
            make_batched_agent(opponent, self.env, self.num_players, device, torch.Generator())

    def _check_member(self, member: Partner) -> None:
        """A :class:`ConfigError` unless ``member`` can play: ``self`` without noise,
        ``snapshots`` with ``self_play_every``, or an agent of this game and player count with
        a batched form."""
        if member.agent == SELF:
            if member.epsilon:
                raise ConfigError(
                    "epsilon must be 0 for agent 'self' (the learner's choices train)"
                )
        elif member.agent == SNAPSHOTS:
            if not self.self_play_every:
                raise ConfigError(
                    "agent 'snapshots' needs self_play_every > 0 (updates between them)"
                )
        else:
            import torch

            from cauldron.agents.batched import table_agent
            from cauldron.envs.core.devices import torch_device

            device = torch_device(self.device)
            generator = torch.Generator(device=device)
            table_agent(member.agent, self.env, self.num_players, device, generator)

    def _check_partners(self, cooperative: bool) -> None:
        """A partner population: a cooperative game on engine 'batched', at least one member,
        a positive total weight, no noisy `self`, snapshots only with self_play_every, and
        every other member an agent with a batched form made for this game and player count."""
        if not cooperative or self.engine != "batched":
            raise ValueError(
                "partners needs a cooperative game and engine 'batched' (competitive games "
                "draw opponents instead)"
            )
        if not self.partners:
            raise ValueError("partners: the population is empty; name at least one member")
        if not sum(member.weight for member in self.partners) > 0:
            raise ValueError("partners: every weight is 0; at least one must be positive")
        for index, member in enumerate(self.partners):
            try:
                self._check_member(member)
            except ConfigError as err:
                raise ValueError(f"partners[{index}]: {err}") from None

    def deadline(self) -> float:
        """The ``time.perf_counter()`` at which ``max_minutes`` from now run out (inf if none)."""
        return time.perf_counter() + 60 * self.max_minutes if self.max_minutes else math.inf

    @property
    def folder(self) -> Path:
        return Path(self.out) / self.name


def check_rllib(config: TrainConfig) -> None:
    """What ``trainer: rllib`` needs beyond the shared checks: RLlib installed (in a supported
    Ray), no ``resume``, games that split evenly over the env runners, a reachable
    ``ray_address``. Raises ``ValueError`` (:class:`ConfigError`) naming the field."""
    import_ray(RLLIB)
    try:
        import ray.rllib  # noqa: F401
    except ImportError as err:
        raise ConfigError(
            f"{RLLIB} needs RLlib: pip install -e '.[rllib]' (in its own environment: RLlib pins "
            f"gymnasium) ({err})"
        ) from None
    if config.resume:
        raise ValueError(f"resume is not supported with {RLLIB}: start a fresh run")
    if config.num_envs % max(config.num_env_runners, 1):
        raise ValueError(
            f"num_envs ({config.num_envs}) must be a multiple of num_env_runners "
            f"({config.num_env_runners})"
        )
    batch = config.num_envs * config.rollout_steps
    if batch % (config.minibatches * max(config.num_learners, 1)):
        raise ValueError("num_envs * rollout_steps must be divisible by minibatches * num_learners")
    if config.ray_address:
        check_address(config.ray_address)


def check_curriculum(config: TrainConfig) -> None:
    """A ValueError naming the stage and field unless every stage's options pass the game's own
    option checks and keep the observation and action sizes, the thresholds increase, only the
    last stage omits ``until_step``, and every stage starts before ``total_steps``."""
    stages = config.curriculum
    base = envs.make(config.env, num_players=config.num_players, **config.options)
    shapes = _sizes(base)
    previous = 0
    for index, stage in enumerate(stages):
        where = f"curriculum[{index}]"
        if stage.until_step is None and index < len(stages) - 1:
            raise ValueError(f"{where}.until_step: only the last stage may omit it")
        if index and previous >= config.total_steps:
            raise ValueError(
                f"{where}: never reached, the stage before ends at step {previous:,} and "
                f"total_steps is {config.total_steps:,}"
            )
        if stage.until_step is not None:
            if stage.until_step <= previous:
                raise ValueError(
                    f"{where}.until_step {stage.until_step:,} must be above the previous "
                    f"stage's {previous:,} (thresholds increase)"
                )
            previous = stage.until_step
        check_option_names(config.env, stage.options, f"{where}.options")
        options = {**config.options, **stage.options}
        try:
            env = envs.make(config.env, num_players=config.num_players, **options)
        except ConfigError as err:
            raise ValueError(f"{where}.options: {err}") from None
        if _sizes(env) != shapes:
            raise ValueError(
                f"{where}.options change the observation or action sizes "
                f"({_sizes(env)} instead of {shapes}); a network cannot carry over"
            )


def _sizes(env: Any) -> tuple[int, int]:
    agent = env.possible_agents[0]
    return (
        int(env.observation_space(agent)["observation"].shape[0]),
        int(env.action_space(agent).n),
    )


def load_config(
    path: str | Path, overrides: Sequence[str] = (), seed: int | None = None
) -> TrainConfig:
    """The config in YAML file ``path`` with ``--set`` ``overrides`` applied, for ``seed`` if
    given (one run of a seed sweep). Without a ``name``, the run folder is
    ``<file stem>-seed<seed>``; in a seed sweep a given name gets ``-seed<seed>`` too."""
    path = Path(path)
    data = read_config_file(path) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config must be a mapping of keys to values")
    for pair in overrides:
        apply_override(data, pair)
    if seed is not None:
        data["seed"] = seed
        if "name" in data:
            data["name"] = f"{data['name']}-seed{seed}"
    data.setdefault("name", f"{path.stem}-seed{data.get('seed', 0)}")
    return parse_model(TrainConfig, data, str(path))


def parse_config(data: dict[str, Any], where: str = "config") -> TrainConfig:
    return parse_model(TrainConfig, data, where)
