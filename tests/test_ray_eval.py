"""Evaluation on Ray (cauldron.eval.executors): config errors, fail-fast addresses (nothing there,
or something that is not Ray), and, with a local Ray instance of 2 CPUs started here, its address
passing the probe, results equal to the local executor's, a failed task's own error, and
cancelled work after an interrupted run (cancelled again where Ray retried it)."""

from __future__ import annotations

import re
import socket
import sys
import time

import pytest

from cauldron.envs.core.errors import ConfigError
from cauldron.eval import executors, harness
from cauldron.eval.config import parse_config
from tests.test_reliability_eval import http_server, local_server, silent_server

BASE = {
    "env": "hexenflug_v1",
    "players": [2],
    "agents": ["random", "heuristic:greedy"],
    "games": 60,
    "workers": 2,
}


def free_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def results_without_config(summary: dict) -> dict:
    """The summary minus what names the executor (config and provenance)."""
    return {k: v for k, v in summary.items() if k not in ("config", "provenance")}


# ------------------------------------------------------------------ without a Ray instance


def test_unknown_executor_is_rejected_naming_the_field():
    with pytest.raises(ConfigError, match=r"executor: Input should be 'local' or 'ray'"):
        parse_config({**BASE, "executor": "dask"})


@pytest.mark.parametrize("address", ["localhost", "http://head:6379", "head:port", "a b:1"])
def test_malformed_ray_address_is_rejected(address):
    with pytest.raises(ConfigError, match="ray_address"):
        parse_config({**BASE, "executor": "ray", "ray_address": address})


def test_ray_address_without_the_ray_executor_is_rejected():
    with pytest.raises(ConfigError, match="ray_address needs executor 'ray'"):
        parse_config({**BASE, "ray_address": "auto"})


def test_missing_ray_is_a_config_error_with_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(ConfigError, match=r"executor 'ray' needs Ray.*pip install"):
        parse_config({**BASE, "executor": "ray"})


@pytest.mark.parametrize("version", ["2.9.3", "2.42.1", "3.0.0"])
def test_unsupported_ray_version_is_rejected(monkeypatch, version):
    ray = pytest.importorskip("ray", reason="Ray is optional: pip install -e '.[ray]'")
    monkeypatch.setattr(ray, "__version__", version)
    with pytest.raises(ConfigError, match=rf"Ray {version} is not supported; use Ray >=2.43,<3.0"):
        parse_config({**BASE, "executor": "ray"})


def test_unreachable_address_fails_fast():
    address = f"127.0.0.1:{free_port()}"
    began = time.perf_counter()
    with pytest.raises(ConfigError, match=rf"ray_address '{address}': no Ray cluster answers"):
        executors.check_address(address)
    assert time.perf_counter() - began < executors.CONNECT_SECONDS


@pytest.mark.parametrize("answer", [http_server, silent_server], ids=["http", "silent"])
def test_an_evaluation_where_ray_does_not_answer_fails_within_seconds(monkeypatch, answer):
    """An HTTP server (as on Ray's dashboard port, 8265) or a silent port at ray_address: the
    run stops with a ConfigError naming the address and what was expected, instead of
    waiting forever at 0 games in ray.init."""
    pytest.importorskip("ray", reason="Ray is optional: pip install -e '.[ray]'")
    monkeypatch.setattr(executors, "CONNECT_SECONDS", 2.0)
    with local_server(answer) as address:
        config = parse_config({**BASE, "executor": "ray", "ray_address": address})
        began = time.perf_counter()
        with pytest.raises(ConfigError, match=rf"ray_address '{address}': .*expected a Ray"):
            harness.play_all(config, progress=False)
        assert time.perf_counter() - began < 20


# ------------------------------------------------------------------ with a local Ray instance


@pytest.fixture(scope="module")
def ray_instance():
    ray = pytest.importorskip("ray", reason="Ray is optional: pip install -e '.[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_a_running_clusters_address_passes_the_probe(ray_instance):
    """The probe (HTTP/2 preface, SETTINGS back) accepts Ray's own GCS."""
    address = ray_instance.get_runtime_context().gcs_address
    executors.check_address(address)
    with executors.ray_session(address, None, "executor 'ray'") as ray:
        assert ray is ray_instance  # the session already open, used as it is


def test_ray_evaluation_equals_its_local_twin(ray_instance):
    local = parse_config(BASE)
    remote = parse_config({**BASE, "executor": "ray"})
    a = harness.summarize(local, harness.play_all(local, progress=False))
    b = harness.summarize(remote, harness.play_all(remote, progress=False))
    assert results_without_config(a) == results_without_config(b)
    assert b["config"]["executor"] == "ray"


def test_cooperative_ray_evaluation_equals_its_local_twin(ray_instance):
    data = {**BASE, "env": "headless_horseman_v1", "players": [2, 3], "agents": ["random"]}
    local, remote = parse_config(data), parse_config({**data, "executor": "ray"})
    a = harness.summarize(local, harness.play_all(local, progress=False))
    b = harness.summarize(remote, harness.play_all(remote, progress=False))
    assert results_without_config(a) == results_without_config(b)


def failing_agent():
    """An agent object (shipped to the Ray workers by value) whose ``act`` raises."""

    class Broken:
        def reset(self, seed=None):
            pass

        def act(self, observation, action_mask):
            raise RuntimeError("the broken agent gives up")

    return Broken()


def test_a_failed_task_raises_its_own_error_and_message(ray_instance):
    data = {**BASE, "agents": ["random", "broken"], "games": 10}  # one chunk: one first error
    errors = []
    for executor in ("local", "ray"):
        config = parse_config(
            {**data, "executor": executor, "workers": 1 if executor == "local" else 2},
            context={"objects": {"broken"}},
        )
        with pytest.raises(Exception) as caught:
            harness.play_all(config, {"broken": failing_agent()}, progress=False)
        errors.append((type(caught.value), str(caught.value)))
    assert errors[0] == errors[1]
    assert "agent 'broken' raised in act: RuntimeError: the broken agent gives up" in errors[1][1]
    assert re.search(r"\(seat player_[01], game seed 0\)$", errors[1][1])


def slow_job(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_an_abandoned_run_cancels_the_cluster_work(ray_instance):
    run = executors.ray_map(ray_instance, workers=2)
    outputs = run(slow_job, [0.0, 600.0, 600.0, 600.0])
    assert next(outputs) == 0.0  # one finished, two 600 s tasks now hold both CPUs
    outputs.close()  # what an interrupted loop (Ctrl-C) does to the generator
    deadline = time.perf_counter() + 60
    while ray_instance.available_resources().get("CPU", 0) < 2:
        assert time.perf_counter() < deadline, "cancelled tasks still hold the CPUs"
        time.sleep(0.2)


class RetryingRay:
    """Ray's ``cancel`` and ``wait`` where a retry outlives the first cancellation of each task
    (the race of ray-project/ray#54260): a task is done after its second cancellation."""

    def __init__(self) -> None:
        self.cancels: dict[str, int] = {}

    def cancel(self, ref: str, force: bool) -> None:
        assert force
        self.cancels[ref] = self.cancels.get(ref, 0) + 1

    def wait(self, refs: list[str], num_returns: int, timeout: float):
        done = [ref for ref in refs if self.cancels.get(ref, 0) >= 2]
        return done, [ref for ref in refs if ref not in done]


def test_a_task_a_retry_brings_back_is_cancelled_again():
    ray = RetryingRay()
    executors._cancel(ray, ["a", "b"], seconds=10)
    assert ray.cancels == {"a": 2, "b": 2}
