"""The evaluation config (YAML), validated before any game is played.

env: hocus_pocus_v1          # a registered id
players: [2, 4]              # player counts, within the game's range
agents: [random, heuristic:greedy, torch:runs/x/final.pt, "python:my_pkg.agents:Bold?depth=2"]
labels: {torch:runs/x/final.pt: ppo}   # optional display names (default: shortened specs)
games: 500                   # seeded games per pairing and player count
split: dev                   # the deals: dev (tuning, from seed 0) or test (reported figures,
                             # from seed 2,000,000,000); see cauldron.eval.splits
seed: 0                      # the first seed (default: the split's first); every pairing plays
                             # the same seeds, all inside the split
workers: 2                   # worker processes (Ray: tasks in flight); results do not depend on it
executor: local              # local (processes here) or ray (Ray tasks; pip install -e ".[ray]")
ray_address: auto            # executor ray: a running cluster (auto, HOST:PORT, ray://HOST:PORT);
                             # leave it out for a local Ray instance of `workers` CPUs
crossplay: all               # cooperative games: all (every seat composition of every two
                             # agents), focal (one agent with N-1 partners of one kind), none
options: {}                  # environment options
save_games: 0                # games per lineup saved as records with a viewer page (games.jsonl,
                             # games.html): the best and the worst by score, then the first seeds
record_thoughts: false       # saved games also keep, per decision of a torch:/rllib:/sb3: agent,
                             # its top actions' probabilities and its value (needs save_games)
out: runs/eval               # the run folder is out/<name>
name: hocus_pocus            # defaults to the config file's stem
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.envs.core.errors import ConfigError
from cauldron.eval import splits, trained
from cauldron.eval.executors import import_ray

M = TypeVar("M", bound=BaseModel)
MAX_GAMES = 1_000_000
SEED_LIMIT = 2**31
MAX_YAML_SIZE = 1_000_000
"""Characters a YAML document may hold with every alias (``*name``) read out in full: far above
any config, far below a "billion laughs" (a few hundred bytes of nested aliases that expand to
gigabytes and hang whatever reads or prints the value)."""
MAX_PROBLEM = 300  # characters of one validation problem in an error message


class EvalConfig(BaseModel):
    """What to evaluate; see the module docstring for the YAML form."""

    model_config = ConfigDict(extra="forbid", strict=True)

    env: str = Field(description="registered environment id")
    players: list[int] = Field(min_length=1, description="player counts")
    agents: list[str] = Field(min_length=1, description="agent specs")
    games: int = Field(200, ge=1, le=MAX_GAMES, description="games per lineup and player count")
    split: str = Field(
        splits.DEFAULT_SPLIT, description="the deals: dev (tuning) or test (reported figures)"
    )
    seed: int | None = Field(
        None, ge=0, lt=SEED_LIMIT, description="first seed (default: the split's first seed)"
    )
    workers: int = Field(2, ge=1, le=64, description="worker processes (Ray: tasks in flight)")
    executor: Literal["local", "ray"] = Field(
        "local", description="local processes or Ray tasks (see cauldron.eval.executors)"
    )
    ray_address: str | None = Field(
        None,
        pattern=r"^(auto|(ray://)?[A-Za-z0-9_.-]+:[0-9]{1,5})$",
        description="executor ray: the cluster's address (auto, HOST:PORT or ray://HOST:PORT); "
        "none: a local Ray instance",
    )
    crossplay: Literal["all", "focal", "none"] = Field(
        "all",
        description="cooperative games: every seat composition of every two agents (all), one "
        "agent with N-1 partners of one kind (focal), or none",
    )
    labels: dict[str, str] = Field(
        default_factory=dict, description="display names of agents (default: shortened specs)"
    )
    options: dict[str, Any] = Field(default_factory=dict, description="environment options")
    save_games: int = Field(
        0,
        ge=0,
        le=1000,
        description="games per lineup saved as records with a viewer page (best and worst by "
        "score, then the first seeds)",
    )
    save_page: bool = Field(
        True,
        description="write the saved games' viewer page (games.html) beside their records; "
        "drawing it takes about 2 ms per view and step (cauldron viewer draws it later)",
    )
    record_thoughts: bool = Field(
        False,
        description="saved games keep what policy agents thought at each decision (their top "
        "actions' probabilities and value); needs save_games",
    )
    out: str = Field("runs/eval", description="root of the run folders")
    name: str = Field(
        "eval",
        pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$",
        description="run folder name inside out: letters, digits, _ . - (no path)",
    )

    @field_validator("env")
    @classmethod
    def _known_env(cls, env: str) -> str:
        envs.spec(env)
        return env

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> EvalConfig:
        """Cross-field checks; every agent spec is made once, except the names given as agent
        objects (validation context ``{"objects": names}``, see :func:`cauldron.eval.evaluate`)."""
        low, high = envs.spec(self.env).players
        bad = [n for n in self.players if not low <= n <= high]
        if bad:
            raise ValueError(f"players {bad} outside {low}..{high} for {self.env}")
        if len(set(self.players)) != len(self.players):
            raise ValueError(f"players must be distinct counts, got {self.players}")
        if ".." in self.name:
            raise ValueError(f"name {self.name!r} may not contain '..'")
        self.seed = splits.first_seed(self.split, self.seed, self.games)
        if self.seed + self.games > SEED_LIMIT:
            raise ValueError(
                f"seed + games must be at most {SEED_LIMIT} (2**31: agents seed their "
                f"generators from the game seed), got {self.seed + self.games}"
            )
        if len(set(self.agents)) != len(self.agents):
            raise ValueError("agents must be distinct specs")
        if not envs.spec(self.env).cooperative and len(self.agents) < 2:
            raise ValueError("a competitive game needs at least two agents to compare")
        stray = sorted(set(self.labels) - set(self.agents))
        if stray:
            raise ValueError(f"labels {stray} name no agent; agents: {self.agents}")
        if len(set(self.labels.values())) != len(self.labels):
            raise ValueError("labels must be distinct display names")
        if self.record_thoughts and not self.save_games:
            raise ValueError("record_thoughts needs save_games (at least 1): only saved games keep")
        if self.ray_address is not None and self.executor != "ray":
            raise ValueError("ray_address needs executor 'ray'")
        if self.executor == "ray":
            import_ray("executor 'ray'")
        check_option_names(self.env, self.options)
        envs.make(self.env, num_players=self.players[0], **self.options)
        objects = (info.context or {}).get("objects", ())
        for spec in self.agents:
            if spec not in objects:
                make_agent(spec, self.env)
        return self


class YamlLoader(yaml.SafeLoader):
    """Plain data only (a SafeLoader), with numbers read as people write them: ``3e-4`` and
    ``1.5e3`` are floats (as in YAML 1.2), not the strings PyYAML's YAML 1.1 rules make of them.
    A document that expands beyond :data:`MAX_YAML_SIZE` with its aliases read out, or whose
    alias sits inside its own anchor, is refused before anything reads it."""

    def get_single_node(self) -> yaml.Node | None:
        node = super().get_single_node()
        if node is not None:
            _check_expanded_size(node)
        return node


YamlLoader.yaml_implicit_resolvers = {
    first: list(resolvers) for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _check_expanded_size(root: yaml.Node) -> None:
    """Refuse a composed document whose size with aliases read out (a node counts 1, a scalar
    its length too) exceeds :data:`MAX_YAML_SIZE`, or that contains itself. Each distinct node
    is measured once (an alias shares its anchor's node), so the check is linear in the text."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # nodes whose children are being measured: their ancestors
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, measured = stack.pop()
        key = id(node)
        if measured:
            open_nodes.discard(key)
            own = len(node.value) if isinstance(node, yaml.ScalarNode) else 0
            sizes[key] = 1 + own + sum(sizes[id(child)] for child in _children(node))
            if sizes[key] > MAX_YAML_SIZE:
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"expands beyond {MAX_YAML_SIZE:,} characters with its aliases (*name) "
                    "read out",
                    node.start_mark,
                )
        elif key in open_nodes:
            raise yaml.composer.ComposerError(
                None, None, "an alias inside its own anchor (a recursive value)", node.start_mark
            )
        elif key not in sizes:
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))


def read_yaml(text: str, where: str) -> Any:
    """``text`` read with :class:`YamlLoader`; a syntax error, an oversized or recursive
    document or one nested too deeply is a one-line :class:`ConfigError` naming ``where`` and
    the line."""
    try:
        return yaml.load(text, Loader=YamlLoader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"{where}: not valid YAML{line} ({problem})") from None
    except RecursionError:
        raise ConfigError(f"{where}: not valid YAML (nested too deeply)") from None


def apply_override(data: dict[str, Any], pair: str) -> None:
    """Apply ``--set KEY=VALUE`` to a config mapping: VALUE is read as YAML (``64``, ``3e-4``,
    ``[256, 256]``); ``options.NAME=VALUE`` sets one environment option and keeps the others."""
    key, sep, text = pair.partition("=")
    if not sep or not key:
        raise ConfigError(f"--set takes KEY=VALUE, got {pair!r}")
    field, dot, option = key.partition(".")
    value = read_yaml(text, f"--set {key}")
    if not dot:
        data[key] = value
    elif field == "options" and option and "." not in option:
        options = data.setdefault("options", {})
        if not isinstance(options, dict):
            raise ConfigError(f"--set {key}: options in the file is not a mapping")
        options[option] = value
    else:
        raise ConfigError(f"--set {key}: only options takes a dotted key (options.NAME=VALUE)")


def check_option_names(env_id: str, options: dict[Any, Any], where: str = "options") -> None:
    """A :class:`ConfigError` naming ``where`` unless every key of ``options`` is one of
    ``env_id``'s game options (the player count, render mode, batch size or device are not)."""
    allowed = sorted(f.name for f in dataclasses.fields(envs.options_class(env_id)))
    unknown = sorted(str(key) for key in options if key not in allowed)
    if unknown:
        raise ConfigError(
            f"{where}: unknown option(s) {', '.join(map(repr, unknown))} for {env_id} (the "
            "player count, render mode, batch size and device are not game options); its "
            f"options: {', '.join(allowed)}"
        )


def read_yaml_file(path: Path) -> Any:
    """The YAML file ``path`` read with :func:`read_yaml`; a missing or unreadable file, or one
    that is not UTF-8 text, is a one-line :class:`ConfigError`."""
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} not found")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"{path}: not a YAML config: not UTF-8 text (byte {err.object[err.start]:#04x} at "
            f"offset {err.start})"
        ) from None
    except OSError as err:
        raise ConfigError(f"cannot read {str(path)!r}: {err.strerror}") from None
    return read_yaml(text, str(path))


BASE_KEY = "base"


def read_config_file(path: Path, chain: tuple[Path, ...] = (), checkpoints: bool = False) -> Any:
    """A config file with its ``base:`` resolved: ``base: <file>`` (relative to the file's
    folder) names a config this one derives from; the base is read the same way (it may have a
    base of its own), then this file's keys override it, mappings key by key (``options: {x:
    1}`` adds or changes one option and keeps the base's others), anything else whole; the
    base's ``name`` is not inherited (a derived config's runs get folders of their own). With
    ``checkpoints`` (evaluation configs), the file or a base may be a checkpoint (``.pt``,
    ``.zip``) whose config :func:`cauldron.eval.trained.eval_config` derives. A missing base or
    a cycle is a one-line :class:`ConfigError` naming the chain of files."""
    path = Path(path)
    if checkpoints and trained.is_checkpoint(path):
        return trained.eval_config(path)
    chain = (*chain, path)
    data = read_yaml_file(path)
    if not isinstance(data, dict) or BASE_KEY not in data:
        return data
    named = data.pop(BASE_KEY)
    if not isinstance(named, str) or not named:
        raise ConfigError(f"{path}: base must name a config file, got {named!r}")
    base = Path(os.path.normpath(path.parent / named))
    files = " -> ".join(map(str, (*chain, base)))
    if base.resolve() in {p.resolve() for p in chain}:
        raise ConfigError(f"{path}: the bases form a cycle: {files}")
    if not base.is_file():
        raise ConfigError(f"{path}: base {named!r} not found (bases: {files})")
    parent = read_config_file(base, chain, checkpoints)
    if not isinstance(parent, dict):
        raise ConfigError(f"{base}: a base config must be a mapping (bases: {files})")
    parent.pop("name", None)
    return merged(parent, data)


def merged(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``override``'s keys: mappings merged key by key, anything else replaced."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def shorten(text: str, limit: int = MAX_PROBLEM) -> str:
    """``text``, cut to ``limit`` characters (saying how long it was) if longer."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def parse_model(
    model: type[M], data: dict[str, Any], where: str = "config", context: dict | None = None
) -> M:
    """Validate ``data`` (with the validators' ``context``); any problem raises
    :class:`ConfigError` naming each field (each problem cut to :data:`MAX_PROBLEM`
    characters)."""
    try:
        return model.model_validate(data, context=context)
    except ValidationError as err:
        problems = []
        for e in err.errors():
            field = ".".join(str(x) for x in e["loc"]) or "config"
            if e["type"] == "extra_forbidden":
                allowed = ", ".join(model.model_fields)
                problems.append(f"unknown key {field!r} (allowed: {allowed})")
            else:
                problems.append(shorten(f"{field}: {e['msg']}"))
        raise ConfigError(f"{where}: " + "; ".join(problems)) from None


def load_config(path: str | Path) -> EvalConfig:
    """The evaluation config in YAML file ``path``, or derived from the checkpoint ``path``
    (:mod:`cauldron.eval.trained`); ``name`` defaults to the file's stem."""
    path = Path(path)
    data = read_config_file(path, checkpoints=True) or {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: neither a config (a YAML mapping of keys to values) nor a checkpoint "
            f"({', '.join(trained.KINDS)})"
        )
    data.setdefault("name", path.stem)
    return parse_model(EvalConfig, data, str(path))


def parse_config(
    data: dict[str, Any], where: str = "config", context: dict | None = None
) -> EvalConfig:
    return parse_model(EvalConfig, data, where, context)
