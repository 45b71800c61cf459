"""What a training run tells: a progress bar with the live return, a CSV file and TensorBoard."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from tqdm import tqdm


class RunLog:
    """Scalars go to ``<folder>/metrics.csv`` and TensorBoard (``<folder>/tb``); the progress
    bar counts learner steps and shows the latest mean return and evaluation win rate."""

    def __init__(
        self, folder: Path, quiet: bool = False, plot: bool = True, resume: bool = False
    ) -> None:
        """A fresh run (``resume`` off) starts new logs in place of any left in ``folder``."""
        from torch.utils.tensorboard import SummaryWriter

        folder.mkdir(parents=True, exist_ok=True)
        if not resume:
            (folder / "metrics.csv").unlink(missing_ok=True)
            shutil.rmtree(folder / "tb", ignore_errors=True)
        self.writer = SummaryWriter(str(folder / "tb"))
        self.csv_path = folder / "metrics.csv"
        self.quiet, self.plot = quiet, plot
        self.bar: tqdm | None = None
        self.rows: list[dict[str, float]] = []
        self._done = 0

    def start(self, total: int, done: int = 0) -> None:
        self.bar = tqdm(total=total, initial=done, unit="step", disable=self.quiet, desc="training")
        self._done = done

    def scalars(self, step: int, values: dict[str, float]) -> None:
        for key, value in values.items():
            self.writer.add_scalar(key, value, step)
        row = {"step": step, **values}
        self.rows.append(row)
        with self.csv_path.open("a", newline="") as file:
            writer = csv.writer(file)
            for key, value in values.items():
                writer.writerow([step, key, value])
        if self.bar is not None:
            self.bar.update(max(0, step - self._done))
            self._done = max(self._done, step)
            shown = {
                k.split("/")[-1]: f"{v:.3f}"
                for k, v in values.items()
                if k in ("train/mean_return", "eval/win_rate")
            }
            if shown:
                self.bar.set_postfix(shown)

    def message(self, text: str) -> None:
        (self.bar.write if self.bar else print)(text)

    def finish(self) -> None:
        """Close the bar and (unless ``plot`` is off) write ``learning_curve.png`` from the whole
        ``metrics.csv``."""
        if self.bar is not None:
            self.bar.close()
        self.writer.flush()
        if self.plot:
            plot_learning_curve(self.csv_path, self.csv_path.with_name("learning_curve.png"))


def plot_learning_curve(csv_path: Path, png: Path) -> None:
    """Training return and evaluation win rate against learner steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, list[tuple[int, float]]] = {}
    with csv_path.open() as file:
        for step, key, value in csv.reader(file):
            series.setdefault(key, []).append((int(step), float(value)))
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
