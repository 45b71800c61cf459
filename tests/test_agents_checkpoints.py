"""Checkpoints that must not load: weights that are not finite, SB3 zips that inflate too far."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
import torch

from cauldron import envs
from cauldron.agents import checkpoints, make_agent
from tests.test_agents import tiny_sb3_model

HORSEMAN = "headless_horseman_v1"
BAD_VALUES = [float("nan"), float("inf"), float("-inf")]


def torch_checkpoint(path: Path, bad: float | None = None) -> Path:
    """A small policy checkpoint for Hexenflug at ``path``, its first weight set to ``bad``."""
    from cauldron.agents.torch_policy import PolicyNet, save_checkpoint

    env = envs.make("hexenflug_v1")
    obs = env.observation_space("player_0")["observation"].shape[0]
    net = PolicyNet(obs, env.action_space("player_0").n, [32])
    if bad is not None:
        with torch.no_grad():
            next(net.parameters()).view(-1)[0] = bad
    save_checkpoint(net, "hexenflug_v1", path)
    return path


def rewrite_member(path: Path, name: str, write) -> None:
    """Rewrite the zip at ``path`` with member ``name`` replaced by what ``write(file)`` writes
    (streamed, so a large member never sits in memory); the other members kept."""
    with zipfile.ZipFile(path) as old:
        kept = {info.filename: old.read(info) for info in old.infolist() if info.filename != name}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as new:
        for member, data in kept.items():
            new.writestr(member, data)
        with new.open(name, "w", force_zip64=True) as file:
            write(file)


def zeros(size: int):
    def write(file) -> None:
        block = bytes(2**16)
        for _ in range(size // len(block)):
            file.write(block)

    return write


@pytest.mark.parametrize("bad", BAD_VALUES)
def test_a_torch_checkpoint_with_non_finite_weights_is_refused(tmp_path, bad):
    path = torch_checkpoint(tmp_path / "bad.pt", bad)
    with pytest.raises(envs.ConfigError, match=r"bad\.pt.*tensor '.+' holds NaN or infinite"):
        make_agent(f"torch:{path}", "hexenflug_v1")


def test_a_torch_checkpoint_with_finite_weights_loads(tmp_path):
    path = torch_checkpoint(tmp_path / "good.pt")
    assert make_agent(f"torch:{path}", "hexenflug_v1").name == f"torch:{path}"


@pytest.mark.parametrize("bad", BAD_VALUES)
def test_an_sb3_zip_with_non_finite_weights_is_refused(tmp_path, bad):
    path = tiny_sb3_model(HORSEMAN, tmp_path)
    with zipfile.ZipFile(path) as archive:
        state = torch.load(io.BytesIO(archive.read("policy.pth")), weights_only=True)
    name = next(iter(state))
    state[name].view(-1)[-1] = bad
    rewrite_member(path, "policy.pth", lambda file: torch.save(state, file))
    with pytest.raises(envs.ConfigError, match=rf"model\.zip.*policy\.pth.*'{name}' holds NaN"):
        make_agent(f"sb3:{path}", HORSEMAN)


def never_loaded(*args, **kwargs):
    raise AssertionError("the weights of a refused zip were read")


def test_an_sb3_zip_declaring_more_than_the_cap_is_refused_before_inflating(tmp_path, monkeypatch):
    path = tiny_sb3_model(HORSEMAN, tmp_path)
    rewrite_member(path, "policy.pth", zeros(2**21))
    assert path.stat().st_size < 2**16
    monkeypatch.setattr(checkpoints, "MAX_SB3_BYTES", 2**20)
    monkeypatch.setattr(zipfile.ZipFile, "open", never_loaded)
    refused = r"model\.zip' inflates to 2,\d{3},\d{3} bytes; .* at most 1,048,576"
    with pytest.raises(envs.ConfigError, match=refused):
        make_agent(f"sb3:{path}", HORSEMAN)


def test_an_sb3_zip_bomb_below_the_cap_is_refused_by_its_ratio(tmp_path, monkeypatch):
    path = tiny_sb3_model(HORSEMAN, tmp_path)
    rewrite_member(path, "policy.pth", zeros(2**22))
    monkeypatch.setattr(zipfile.ZipFile, "open", never_loaded)
    with pytest.raises(envs.ConfigError, match=r"model\.zip' inflates .*more than 100-fold"):
        make_agent(f"sb3:{path}", HORSEMAN)


def test_reading_policy_pth_stops_at_the_cap_whatever_the_zip_declares(tmp_path, monkeypatch):
    path = tiny_sb3_model(HORSEMAN, tmp_path)
    monkeypatch.setattr(checkpoints, "_check_sizes", lambda members, file: None)
    monkeypatch.setattr(checkpoints, "MAX_SB3_BYTES", 1000)
    with pytest.raises(envs.ConfigError, match=r"policy\.pth inflates beyond 1,000 bytes"):
        checkpoints.read_sb3_policy(path)
