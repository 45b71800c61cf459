"""``lr_decay_steps``: the learning rate's linear cooldown over the last steps of a run, set on a
fresh run or on a resume that extends a run from its constant phase."""

from __future__ import annotations

import pytest

from cauldron.envs.core.errors import ConfigError
from cauldron.train import __main__ as train_cli
from cauldron.train.config import parse_config
from cauldron.train.ppo import learning_rate_at
from cauldron.train.runlog import read_metrics
from tests.test_train import tiny


def test_the_rate_is_constant_then_falls_linearly_towards_zero(tmp_path):
    config = parse_config(
        tiny("headless_horseman_v1", "torch", tmp_path, total_steps=1000, lr_decay_steps=400)
    )
    rate = config.learning_rate
    assert [learning_rate_at(config, step) for step in (0, 599, 600)] == [rate, rate, rate]
    assert learning_rate_at(config, 800) == pytest.approx(rate / 2)
    assert learning_rate_at(config, 999) == pytest.approx(rate / 400)
    without = config.model_copy(update={"lr_decay_steps": 0})
    assert {learning_rate_at(without, step) for step in (0, 500, 999)} == {rate}


@pytest.mark.parametrize(
    "extra, words",
    [
        ({"lr_decay_steps": 257}, "lr_decay_steps (257) must not exceed total_steps (256)"),
        ({"lr_decay_steps": -1}, "lr_decay_steps"),
        ({"lr_decay_steps": 128, "trainer": "sb3"}, "lr_decay_steps needs trainer 'torch'"),
    ],
)
def test_a_bad_decay_is_refused_naming_the_field(tmp_path, extra, words):
    data = tiny("headless_horseman_v1", "torch", tmp_path) | extra
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        parse_config(data)


def test_a_resume_may_add_the_cooldown_and_the_update_steps_follow_it(tmp_path):
    path = tmp_path / "run.yaml"
    data = tiny("headless_horseman_v1", "torch", tmp_path, eval_every=100)
    path.write_text("\n".join(f"{k}: {v!r}" for k, v in data.items() if k != "opponents"))
    train_cli.main([str(path), "--quiet"])  # 2 updates of 128 steps at the constant rate
    extend = ["--set", "resume=true", "--set", "total_steps=768", "--set", "lr_decay_steps=512"]
    train_cli.main([str(path), "--quiet", *extend])
    folder = tmp_path / "headless_horseman_v1-torch"
    rates = {
        step: value
        for step, key, value in read_metrics(folder / "metrics.csv")
        if key == "train/learning_rate"
    }
    rate = 3e-4
    # the update ending at step s started at s - 128; 512 steps of cooldown start at step 256
    expected = {128: rate, 256: rate, 384: rate, 512: rate * 384 / 512}
    expected |= {640: rate * 256 / 512, 768: rate * 128 / 512}
    assert sorted(rates) == sorted(expected)
    for step, value in expected.items():
        assert rates[step] == pytest.approx(value), step
