"""What a training run tells: a progress bar with the live return, a CSV file and TensorBoard."""

from __future__ import annotations

import csv
import math
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm import tqdm

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

HEADER = ("step", "key", "value")


def read_metrics(csv_path: Path) -> list[tuple[int, str, float]]:
    """The ``(step, key, value)`` rows of a ``metrics.csv`` (none if there is no file; a file
    from before the header row was written reads the same)."""
    if not csv_path.is_file():
        return []
    with csv_path.open(newline="") as file:
        return [(int(s), k, float(v)) for s, k, v in csv.reader(file) if (s, k, v) != HEADER]


class RunLog:
    """Scalars go to ``<folder>/metrics.csv`` and TensorBoard (``<folder>/tb``); the progress
    bar counts learner steps and shows the latest mean return and evaluation win rate.

    ``metrics.csv`` has a header row and one row per scalar: ``step,key,value``."""

    def __init__(self, folder: Path, quiet: bool = False, plot: bool = True) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.csv_path = folder / "metrics.csv"
        self.quiet, self.plot = quiet, plot
        self.writer: SummaryWriter | None = None
        self.bar: tqdm | None = None
        self._done = 0
        self._clock: tuple[float, int] | None = None

    def start(self, total: int, done: int = 0, deadline: float = math.inf) -> None:
        """Open the logs for a run that has ``done`` of ``total`` steps behind it: a run from
        step 0 starts new logs; a resumed one keeps the rows up to ``done`` (the saved state) and
        drops any written after it by a run that was stopped before its next save. A run with a
        clock (``deadline``, a ``time.perf_counter()``) shows its elapsed and remaining time
        and the steps so far, not a step total it will not reach."""
        from torch.utils.tensorboard import SummaryWriter

        if done:
            keep = [row for row in read_metrics(self.csv_path) if row[0] <= done]
        else:
            keep = []
            shutil.rmtree(self.folder / "tb", ignore_errors=True)
        with self.csv_path.open("w", newline="") as file:
            csv.writer(file).writerows([HEADER, *keep])
        self.writer = SummaryWriter(str(self.folder / "tb"), purge_step=done + 1 if done else None)
        self._done = done
        if math.isfinite(deadline):
            seconds = max(1, round(deadline - time.perf_counter()))
            self._clock = (time.perf_counter(), seconds)
            self.bar = tqdm(
                total=seconds,
                disable=self.quiet,
                desc="training",
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed} elapsed, {remaining} left"
                "{postfix}",
            )
        else:
            self.bar = tqdm(
                total=total, initial=done, unit="step", disable=self.quiet, desc="training"
            )

    def scalars(self, step: int, values: dict[str, float]) -> None:
        if self.writer is None:
            raise RuntimeError("RunLog.start must come before RunLog.scalars")
        for key, value in values.items():
            self.writer.add_scalar(key, value, step)
        with self.csv_path.open("a", newline="") as file:
            writer = csv.writer(file)
            for key, value in values.items():
                writer.writerow([step, key, value])
        if self.bar is not None:
            self._advance(step)
            shown = {
                k.split("/")[-1]: f"{v:.3f}"
                for k, v in values.items()
                if k in ("train/mean_return", "eval/win_rate")
            }
            if self._clock is not None:
                shown = {"steps": f"{self._done:,}", **shown}
            if shown:
                self.bar.set_postfix(shown)

    def _advance(self, step: int) -> None:
        """Move the bar to ``step`` (or, on a clock, to the seconds elapsed)."""
        self._done = max(self._done, step)
        if self._clock is None:
            self.bar.update(max(0, step - self.bar.n))
            return
        started, seconds = self._clock
        self.bar.update(max(0, min(seconds, round(time.perf_counter() - started)) - self.bar.n))

    def message(self, text: str) -> None:
        (self.bar.write if self.bar else print)(text)

    def finish(self) -> None:
        """Close the bar and (unless ``plot`` is off) write ``learning_curve.png`` from the whole
        ``metrics.csv``."""
        if self.bar is not None:
            self.bar.close()
        if self.writer is not None:
            self.writer.close()
        if self.plot:
            plot_learning_curve(self.csv_path, self.csv_path.with_name("learning_curve.png"))


def plot_learning_curve(csv_path: Path, png: Path) -> None:
    """Training return and evaluation win rate against learner steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, list[tuple[int, float]]] = {}
    for step, key, value in read_metrics(csv_path):
        series.setdefault(key, []).append((step, value))
    fig, ax = plt.subplots(figsize=(7, 4))
    for key, label in (
        ("train/mean_return", "mean return (last 100 episodes)"),
        ("eval/win_rate", "evaluation win rate"),
    ):
        if key in series:
            steps, values = zip(*sorted(series[key]), strict=True)
            ax.plot(steps, values, label=label, marker="o" if key.startswith("eval") else None)
    ax.set_xlabel("learner steps")
    ax.set_title(f"learning curve: {csv_path.parent.name}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)
