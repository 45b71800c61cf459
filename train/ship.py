"""Ship a finished run: its final checkpoint into ``checkpoints/``.

    cauldron ship runs/train/headless_horseman_torch-seed0 [--name headless_horseman_torch]

The README's training rows are shipped this way, so a reader reproduces a row's evaluation
without retraining: ``cauldron eval checkpoints/<name>.pt`` (or ``.zip``) plays the checkpoint
beside random play and every heuristic, on the same seeds (from 0) and options as the run's final
evaluation, its config derived from what the checkpoint records (:mod:`cauldron.eval.trained`).
A run whose final evaluation played other than :data:`cauldron.eval.trained.GAMES` games per
pairing also gets ``configs/eval/trained/<name>.yaml``, its checkpoint as ``base:`` and its
``games``. A PyTorch run ships ``final.pt`` as ``<name>.pt`` (a ``torch:`` agent), less its
critic where that is centralized (it reads ``state()``, which no seat sees at play time;
:func:`cauldron.agents.torch_policy.policy_only`); an SB3 run ships ``<name>.zip``, a model
that ``MaskablePPO.load`` reads (the optimizer's state reset; the ``sb3:`` agent reads only its
``policy.pth``), and its ``.cauldron.json`` sidecar.
"""

from __future__ import annotations

import argparse
import json
import os
import zipfile
from pathlib import Path

import gymnasium
import numpy as np
import yaml
from gymnasium import spaces

from cauldron.agents.checkpoints import SB3_META
from cauldron.envs.core.errors import ConfigError, run_command
from cauldron.envs.core.folders import atomic_file
from cauldron.eval import trained
from cauldron.eval.config import parse_config
from cauldron.train.config import TrainConfig
from cauldron.train.config import parse_config as parse_config_train

CHECKPOINTS = Path("checkpoints")
OVERRIDES = Path("configs/eval/trained")


def ship(run: Path, name: str, root: Path = Path(".")) -> list[Path]:
    """Ship ``run``'s ``final.pt`` (or ``final.zip``) as ``checkpoints/<name>.pt`` (``.zip``)
    under ``root``, and write ``configs/eval/trained/<name>.yaml`` there if the run's final
    evaluation played other than :data:`cauldron.eval.trained.GAMES` games; the paths written,
    the checkpoint first."""
    saved = run / "config.yaml"
    final = next((run / f for f in ("final.pt", "final.zip") if (run / f).is_file()), None)
    if final is None or not saved.is_file():
        raise ConfigError(
            f"{str(run)!r} is not a finished torch or sb3 run (no final.pt or final.zip, "
            "or no config.yaml)"
        )
    config = yaml.safe_load(saved.read_text())
    games = config["final_eval_games"]
    parse_config({**trained.eval_config(final), "games": games})  # before anything is written
    checkpoint = CHECKPOINTS / f"{name}{final.suffix}"
    (root / checkpoint).parent.mkdir(parents=True, exist_ok=True)
    if final.suffix == ".pt":
        from cauldron.agents.torch_policy import policy_only

        policy_only(final, root / checkpoint)
    else:
        ship_sb3(final, root / checkpoint, parse_config_train(config, str(saved)))
    if games == trained.GAMES:
        return [root / checkpoint]
    override = root / OVERRIDES / f"{name}.yaml"
    override.parent.mkdir(parents=True, exist_ok=True)
    base = Path(os.path.relpath(checkpoint, (OVERRIDES / name).parent))
    override.write_text(
        f"# The final evaluation of {checkpoint}, which played {games} games per pairing:\n"
        f"# cauldron eval {OVERRIDES / name}.yaml\n"
        + yaml.safe_dump({"base": base.as_posix(), "games": games}, sort_keys=False)
    )
    return [root / checkpoint, override]


class _Spaces(gymnasium.Env):
    """An env that only declares the spaces a shipped SB3 model was trained on (nothing plays
    in it: it lets MaskablePPO be built to save the model)."""

    def __init__(self, obs_size: int, num_actions: int) -> None:
        self.observation_space = spaces.Box(0.0, 1.0, (obs_size,), np.float32)
        self.action_space = spaces.Discrete(num_actions)


def ship_sb3(source: Path, target: Path, config: TrainConfig) -> None:
    """Write ``target`` as a zip that ``MaskablePPO.load`` reads: ``source``'s policy weights in
    a fresh model of ``config`` (its optimizer state reset, which keeps the file small), and
    copy ``source``'s sidecar. The ``sb3:`` agent reads only its ``policy.pth``."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from cauldron.agents.torch_policy import load_weights
    from cauldron.train.sb3 import build_model

    meta = json.loads(source.with_name(source.name + SB3_META).read_text())
    with zipfile.ZipFile(source) as archive:
        weights = load_weights(archive.read("policy.pth"), f"{str(source)!r} policy.pth")
    sizes = meta["obs_size"], meta["num_actions"]
    model = build_model(
        config, DummyVecEnv([lambda: _Spaces(*sizes)] * config.num_envs), config.seed
    )
    model.policy.load_state_dict(weights)
    with atomic_file(target, "wb") as file:
        model.save(file)
    sidecar = target.with_name(target.name + SB3_META)
    with atomic_file(sidecar) as file:
        file.write(json.dumps(meta))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="cauldron ship", description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a finished run folder (runs/train/<name>)")
    parser.add_argument(
        "--name",
        help="file stem under checkpoints/, may name a folder: methods/<stem> (default: the "
        "run's config stem, no seed)",
    )
    args = parser.parse_args(argv)
    name = args.name or args.run.name.rsplit("-seed", 1)[0]
    for path in ship(args.run, name):
        print(path)


if __name__ == "__main__":
    run_command(main)
