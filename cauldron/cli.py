"""The ``cauldron`` command: one subcommand per tool, each the module it names run as a script.

    cauldron train configs/train/quickstart.yaml
    cauldron eval configs/eval/hexenflug.yaml --split test
    cauldron <command> --help

``python -m cauldron <command>`` is the same; ``python -m cauldron.<module>`` runs a module
directly.
"""

from __future__ import annotations

import runpy
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    "train": ("cauldron.train", "train an agent from a YAML config, then evaluate it"),
    "results": ("cauldron.train.results", "a table across a config's training seeds"),
    "figures": ("cauldron.train.readme_figures", "the README's generated tables"),
    "ship": ("cauldron.train.ship", "copy a run's final policy into checkpoints/"),
    "diagnostics": (
        "cauldron.train.diagnostics",
        "what a trained policy does, decision by decision",
    ),
    "train-bench": ("cauldron.train.bench", "training throughput against a peer"),
    "eval": (
        "cauldron.eval",
        "evaluate agents from a YAML config (or a checkpoint): reports, tables, plots",
    ),
    "eval-batched": (
        "cauldron.eval.batched",
        "many games between two agents on the batched engine",
    ),
    "zsc": ("cauldron.eval.zsc", "self-play, cross-play and ad-hoc play (the protocol)"),
    "methods": ("cauldron.eval.zsc.methods", "the training-methods table"),
    "bench": ("cauldron.eval.bench", "environment throughput against peers"),
    "demo": ("cauldron.eval.demo", "watch heuristics play one game"),
    "play": ("cauldron.eval.play", "play a game in the terminal"),
    "serve": ("cauldron.eval.serve", "play a game in the browser (a local server)"),
    "replay": ("cauldron.eval.replay", "replay a recorded game"),
    "viewer": ("cauldron.eval.viewer", "a recorded game as a web page"),
    "fuzz-batched": ("cauldron.eval.fuzz_batched", "hostile calls against the batched engines"),
    "fuzz-server": ("cauldron.eval.fuzz_server", "hostile requests against the play server"),
    "rules-tables": ("cauldron.envs.docs", "rewrite the generated tables of every RULES.md"),
    "voodoo-disagreement": (
        "cauldron.eval.voodoo_mania.disagreement",
        "Voodoo Mania: where two agents choose differently",
    ),
    "voodoo-information": (
        "cauldron.eval.voodoo_mania.information",
        "Voodoo Mania: what a perfect read of the opponent is worth",
    ),
    "voodoo-ticks": (
        "cauldron.eval.voodoo_mania.tick_stats",
        "Voodoo Mania: game lengths in ticks",
    ),
}


def usage() -> str:
    """The command's help: every subcommand with its one line."""
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {summary}" for name, (_, summary) in COMMANDS.items()]
    return "\n".join(
        ["usage: cauldron <command> [args ...]   (cauldron <command> --help)", "", "commands:"]
        + lines
    )


def main(argv: list[str] | None = None) -> int:
    """Run ``argv``'s subcommand with the remaining arguments; ``--help`` or nothing lists the
    subcommands, and an unknown one is refused with the known ones (exit 2)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(
            f"cauldron: unknown command {name!r}; the commands are: {', '.join(COMMANDS)}",
            file=sys.stderr,
        )
        return 2
    saved = sys.argv
    sys.argv = [f"cauldron {name}", *rest]
    try:
        runpy.run_module(COMMANDS[name][0], run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        code = stop.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    finally:
        sys.argv = saved
    return 0
