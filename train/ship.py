"""Ship a finished run: its final checkpoint into ``checkpoints/`` and an evaluation config that
replays its final evaluation into ``configs/eval/trained/``.

    python -m train.ship runs/train/headless_horseman_torch-seed0 [--name headless_horseman_torch]

The README's training rows are shipped this way, so a reader reproduces a row's evaluation
without retraining: ``python -m eval configs/eval/trained/<name>.yaml`` plays the checkpoint beside
random play and every heuristic, on the same seeds (from 0) and options as the run's final
evaluation. A PyTorch run ships ``final.pt`` as ``<name>.pt`` (a ``torch:`` agent); an SB3 run
ships ``<name>.zip`` holding only the policy's weights (what the ``sb3:`` agent reads; the
optimizer's state is left behind) and its ``.cauldron.json`` sidecar.
"""

from __future__ import annotations

import argparse
import shutil
import zipfile
from pathlib import Path

import yaml

from agents import HEURISTICS
from agents.checkpoints import SB3_META
from envs.core.errors import ConfigError, run_command
from eval.config import parse_config

CHECKPOINTS = Path("checkpoints")
CONFIGS = Path("configs/eval/trained")


def ship(run: Path, name: str, root: Path = Path(".")) -> tuple[Path, Path]:
    """Copy ``run/final.pt`` to ``checkpoints/<name>.pt`` and write
    ``configs/eval/trained/<name>.yaml`` (both under ``root``); the two paths."""
    saved = run / "config.yaml"
    final = next((run / f for f in ("final.pt", "final.zip") if (run / f).is_file()), None)
    if final is None or not saved.is_file():
        raise ConfigError(
            f"{str(run)!r} is not a finished torch or sb3 run (no final.pt or final.zip, "
            "or no config.yaml)"
        )
    config = yaml.safe_load(saved.read_text())
    kind = "torch" if final.suffix == ".pt" else "sb3"
    checkpoint = CHECKPOINTS / f"{name}{final.suffix}"
    agents = [f"{kind}:{checkpoint}", "random"]
    agents += [f"heuristic:{h}" for h in HEURISTICS.get(config["env"], {})]
    evaluation = {
        "env": config["env"],
        "players": [config["num_players"]],
        "agents": agents,
        "labels": {agents[0]: name},
        "games": config["final_eval_games"],
        "seed": 0,
        "workers": 2,
        "options": config["options"],
        "out": "runs/eval",
        "name": name,
    }
    source = f"{kind}:{final}"  # checked with the run's own file before anything is written
    parse_config({**evaluation, "agents": [source, *agents[1:]], "labels": {source: name}})
    (root / CHECKPOINTS).mkdir(parents=True, exist_ok=True)
    (root / CONFIGS).mkdir(parents=True, exist_ok=True)
    if kind == "torch":
        shutil.copyfile(final, root / checkpoint)
    else:
        copy_sb3_policy(final, root / checkpoint)
    header = (
        f"# The final evaluation of {run.name} "
        f"({config['env']}, {config['num_players']} players),\n"
        f"# replayed from the shipped checkpoint: python -m eval {CONFIGS / name}.yaml\n"
    )
    target = root / CONFIGS / f"{name}.yaml"
    target.write_text(header + yaml.safe_dump(evaluation, sort_keys=False))
    return root / checkpoint, target


def copy_sb3_policy(source: Path, target: Path) -> None:
    """Write ``target`` as a zip holding only ``source``'s ``policy.pth``, and copy its sidecar."""
    with zipfile.ZipFile(source) as archive:
        policy = archive.read("policy.pth")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("policy.pth", policy)
    shutil.copyfile(
        source.with_name(source.name + SB3_META), target.with_name(target.name + SB3_META)
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m train.ship", description=__doc__.splitlines()[0]
    )
    parser.add_argument("run", type=Path, help="a finished run folder (runs/train/<name>)")
    parser.add_argument("--name", help="file stem (default: the run's config stem, no seed)")
    args = parser.parse_args(argv)
    name = args.name or args.run.name.rsplit("-seed", 1)[0]
    for path in ship(args.run, name):
        print(path)


if __name__ == "__main__":
    run_command(main)
