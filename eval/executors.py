"""Where the evaluation's chunks of games run: ``executor: local`` or ``executor: ray``.

:func:`executor` gives a function that maps the harness's chunk function over its jobs and
yields each chunk's output as it finishes (the harness sorts games by seed, so the order does
not change any result):

* ``local``, ``workers: 1``: in this process, in order.
* ``local``, ``workers: N``: a pool of N spawned processes; an error or ``Ctrl-C`` stops them
  at once (they ignore ``Ctrl-C`` themselves and print nothing).
* ``ray``: one Ray task per chunk (1 CPU each), at most ``workers`` in flight, on a local Ray
  instance of ``workers`` CPUs (``ray_address`` empty) or on the cluster at ``ray_address``
  (``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``). A task lost with its worker or node runs
  again; a task that raises stops the run with the task's own exception (its type and message);
  ``Ctrl-C`` cancels every task still queued or running on the cluster. Every node needs this
  package and the files the agent specs name (checkpoints) at the same paths.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from cauldron.envs.core.errors import ConfigError

# Ray releases this code runs on: RLlib's new API stack with ``build_algo`` (2.43) up to the
# next major release. Tested with 2.60.
RAY_VERSIONS = ((2, 43), (3, 0))
RAY_INSTALL = "pip install -e '.[ray]' (or '.[rllib]' for the RLlib trainer)"
CONNECT_SECONDS = 5.0
CANCEL_SECONDS = 30.0  # how long an abandoned run waits for its cancelled tasks to end
# What a client sends first on an HTTP/2 connection (RFC 9113, 3.4): the preface, then its
# SETTINGS frame (here empty: a 9-byte header of length 0, type 4, no flags, stream 0); a server
# answers with its own SETTINGS frame.
SETTINGS = 4
FRAME_HEADER = 9
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, SETTINGS, 0, 0, 0, 0, 0])

Map = Callable[[Callable[[Any], Any], Iterable[Any]], Iterator[Any]]


def import_ray(field: str) -> Any:
    """The ``ray`` module, if it is installed in a supported version; otherwise a
    :class:`ConfigError` naming the config ``field`` that asked for it."""
    try:
        import ray
    except ImportError:
        raise ConfigError(f"{field} needs Ray, which is not installed: {RAY_INSTALL}") from None
    low, high = RAY_VERSIONS
    try:
        version = tuple(int(part) for part in ray.__version__.split(".")[:2])
    except ValueError:
        version = (0, 0)
    if not low <= version < high:
        raise ConfigError(
            f"{field}: Ray {ray.__version__} is not supported; use Ray "
            f">={low[0]}.{low[1]},<{high[0]}.{high[1]}"
        )
    return ray


def check_address(address: str) -> None:
    """Fail within :data:`CONNECT_SECONDS` unless Ray answers at ``HOST:PORT`` or
    ``ray://HOST:PORT`` (``auto`` is left to Ray, which fails at once when it finds no cluster).
    Ray's GCS and its client server speak gRPC, that is HTTP/2: the probe sends the HTTP/2
    connection preface and needs a SETTINGS frame back, so an HTTP server (Ray's dashboard), a
    silent port or any other service is refused here instead of leaving ``ray.init`` waiting
    forever. With ``RAY_USE_TLS`` set, only the connection is checked (the GCS speaks TLS)."""
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    expected = (
        "expected a Ray cluster: the GCS address that 'ray start --head' prints (HOST:6379), "
        "or ray://HOST:10001 for Ray Client"
    )
    deadline = time.monotonic() + CONNECT_SECONDS
    try:
        connection = socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS)
    except (OSError, ValueError) as err:
        raise ConfigError(
            f"ray_address {address!r}: no Ray cluster answers there ({err}); start one with "
            "'ray start --head' and give the address it prints, or leave ray_address empty for "
            "a local Ray instance"
        ) from None
    with connection:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return
        try:
            connection.sendall(HTTP2_PREFACE)
            reply = _receive(connection, FRAME_HEADER, deadline)
        except TimeoutError:
            raise ConfigError(
                f"ray_address {address!r}: something listens there but sent no answer within "
                f"{CONNECT_SECONDS:g} s; {expected}"
            ) from None
        except OSError:  # reset by the peer
            reply = b""
    if len(reply) == FRAME_HEADER and reply[3] == SETTINGS:
        return
    if reply:
        found = (
            f"the server there answers {reply!r}, not as Ray does (gRPC over HTTP/2); an HTTP "
            "server such as Ray's dashboard (port 8265) is not a cluster's address"
        )
    else:
        found = "the server there closed the connection without an answer"
    raise ConfigError(f"ray_address {address!r}: {found}; {expected}")


def _receive(connection: socket.socket, size: int, deadline: float) -> bytes:
    """Up to ``size`` bytes, fewer if the peer closes; :class:`TimeoutError` at ``deadline``."""
    data = b""
    while len(data) < size:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        connection.settimeout(left)
        chunk = connection.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


@contextlib.contextmanager
def ray_session(address: str | None, num_cpus: int | None, field: str) -> Iterator[Any]:
    """Ray, connected: to ``address`` (a running cluster), or to a fresh local instance of
    ``num_cpus`` CPUs, shut down at the end. A session already open in this process is used
    as it is and left open."""
    ray = import_ray(field)
    if address:
        check_address(address)
    if ray.is_initialized():
        yield ray
        return
    try:
        ray.init(
            address=address or "local",  # "local": a new instance even beside a running one
            num_cpus=None if address else num_cpus,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    except ConnectionError as err:
        raise ConfigError(
            f"ray_address {address!r}: cannot connect ({err}); a cluster with token "
            "authentication (Ray's default) needs RAY_AUTH_MODE=token and its token here "
            "(~/.ray/auth_token or RAY_AUTH_TOKEN)"
        ) from None
    try:
        yield ray
    finally:
        ray.shutdown()


def ray_map(ray: Any, workers: int) -> Map:
    """A map over Ray tasks with at most ``workers`` in flight, yielding outputs as they finish."""

    def run(function: Callable[[Any], Any], jobs: Iterable[Any]) -> Iterator[Any]:
        # a task lost with its worker or node runs again (seeded games: the same results); a
        # task that raises is not retried
        task = ray.remote(num_cpus=1, max_retries=3, retry_exceptions=False)(function)
        queue = iter(jobs)
        pending = [task.remote(job) for job in _take(queue, workers)]
        try:
            while pending:
                [done], pending = ray.wait(pending, num_returns=1)
                try:
                    output = ray.get(done)
                except ray.exceptions.RayTaskError as err:
                    raise _cause(err) from None
                pending += [task.remote(job) for job in _take(queue, 1)]
                yield output
        finally:  # an error, Ctrl-C or an abandoned generator: stop the cluster's work
            _cancel(ray, pending)

    return run


def _cancel(ray: Any, refs: list[Any], seconds: float = CANCEL_SECONDS) -> None:
    """Force-cancel the tasks of ``refs`` and wait until they are done, cancelling again any
    that a retry started anew (Ray can retry a task whose worker the cancellation killed:
    ray-project/ray#54260); gives up after ``seconds``."""
    deadline = time.monotonic() + seconds
    while refs and time.monotonic() < deadline:
        for ref in refs:
            ray.cancel(ref, force=True)
        _, refs = ray.wait(refs, num_returns=len(refs), timeout=1.0)


def _take(queue: Iterator[Any], count: int) -> list[Any]:
    return [job for _, job in zip(range(count), queue, strict=False)]


def _cause(err: Exception) -> BaseException:
    """The exception a task raised (same type and message as in a local run), or Ray's own
    error when the task died without one (a killed worker)."""
    cause = getattr(err, "cause", None)
    return cause if isinstance(cause, BaseException) else err


def one_thread() -> None:
    """A worker process does its math on one thread (as Ray's workers do): with torch's default
    of one per core, workers that play torch agents crowd each other, many times slower on a
    loaded machine."""
    os.environ["OMP_NUM_THREADS"] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


@contextlib.contextmanager
def executor(kind: str, workers: int, ray_address: str | None = None) -> Iterator[Map]:
    """A map function for ``kind`` (``local`` or ``ray``) with ``workers`` processes or tasks
    in flight; see the module docstring."""
    if kind == "ray":
        with ray_session(ray_address, workers, "executor 'ray'") as ray:
            yield ray_map(ray, workers)
    elif workers == 1:
        yield map
    else:
        # spawn, not fork: a forked child of a process that has used torch can deadlock
        spawn = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(workers, mp_context=spawn, initializer=one_thread)
        try:
            yield pool_map(pool)
        except BaseException:  # an error or Ctrl-C: stop the workers now
            processes = list(pool._processes.values())  # no public way before Python 3.14
            pool.shutdown(wait=False)
            for process in processes:
                process.terminate()  # the pool then fails the queued chunks, none runs
            raise
        pool.shutdown()


@contextlib.contextmanager
def ctrl_c_ignored() -> Iterator[None]:
    """Ignore Ctrl-C while the block runs (in the main thread; elsewhere Python sets no
    handlers): the processes started meanwhile inherit that for their whole life, so Ctrl-C,
    which a terminal sends to every process of its group, reaches only the main process, which
    stops the workers (:func:`executor`), and no worker prints a traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def pool_map(pool: ProcessPoolExecutor) -> Map:
    """A map over ``pool`` yielding outputs as they finish. It cancels nothing when stopped
    early (unlike ``pool.map``): a cancelled chunk of a pool whose workers are then stopped
    makes Python 3.11's pool print an InvalidStateError."""

    def run(function: Callable[[Any], Any], jobs: Iterable[Any]) -> Iterator[Any]:
        with ctrl_c_ignored():  # the workers start now (on the first submits)
            futures = [pool.submit(function, job) for job in jobs]
        for future in as_completed(futures):
            yield future.result()

    return run
