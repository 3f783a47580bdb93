"""Engines for a sweep: the same tasks (one session under a set of policies) on a local process pool or on Dask.

Each engine yields a task's result as it finishes, so the driver holds the small per-policy rows and never
the sessions: memory is bounded by the workers, not by the fleet. `cancel` (a threading.Event) stops an
engine between results; stopping terminates every worker it started, so nothing keeps running after it.
"""

from __future__ import annotations

import multiprocessing
import signal
import socket
import threading
from collections.abc import Callable, Generator, Sequence
from multiprocessing.connection import wait
from typing import Any

from foldscope.core.replay.tune import PolicyPoint, tune_session

ENGINES = ("local", "dask")
SCHEDULER_TIMEOUT_S = 10  # a remote scheduler that does not answer in this time is said to be unreachable
Task = Callable[[str, Sequence[PolicyPoint]], dict[str, Any]]


class Cancelled(Exception):
    """The sweep was stopped before every task finished."""


class EngineError(Exception):
    """An engine cannot start (no loopback for a LocalCluster, a scheduler that does not answer): one line."""


def run_local(
    paths: Sequence[str],
    points: Sequence[PolicyPoint],
    workers: int | None = None,
    cancel: threading.Event | None = None,
    task: Task = tune_session,
) -> Generator[dict[str, Any], None, None]:
    """The tasks on `workers` processes (spawned, so a GUI's threads are never forked), each holding one session
    at a time, so that a worker that dies (killed, out of memory) fails the session it held, by name, and a
    new worker takes the rest: the sweep always ends. `task` is a module-level function (a test's stand-in)."""
    workers = max(1, min(workers or multiprocessing.cpu_count() or 1, len(paths) or 1))
    if workers == 1:  # one worker: no process to start, the same function in this process
        for path in paths:
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            yield task(path, list(points))
        return
    pool = _Workers(workers, list(points), task)
    try:
        yield from pool.results(paths, cancel)
    finally:
        pool.stop()  # on cancel, Ctrl+C or an error: no worker outlives the sweep


class _Workers:
    """Worker processes fed one path at a time over a pipe; the parent knows which path each one holds."""

    def __init__(self, size: int, points: list[PolicyPoint], task: Task) -> None:
        self.size, self.points, self.task = size, points, task
        self.context = multiprocessing.get_context("spawn")
        self.idle: list[tuple[Any, Any]] = []  # (process, connection)
        self.busy: dict[Any, tuple[Any, str]] = {}  # connection -> (process, path)

    def _start(self) -> tuple[Any, Any]:
        ours, theirs = self.context.Pipe()
        process = self.context.Process(target=_serve, args=(theirs, self.task, self.points), daemon=True, name="foldscope tune worker")
        process.start()
        theirs.close()
        return process, ours

    def results(self, paths: Sequence[str], cancel: threading.Event | None) -> Generator[dict[str, Any], None, None]:
        waiting = list(reversed(paths))
        while waiting or self.busy:
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            while waiting and len(self.busy) < self.size:
                process, connection = self.idle.pop() if self.idle else self._start()
                path = waiting.pop()
                try:
                    connection.send(path)
                except OSError:  # it died idle: a new one takes the path
                    self._end(process, connection)
                    waiting.append(path)
                    continue
                self.busy[connection] = (process, path)
            sentinels = {process.sentinel: connection for connection, (process, _) in self.busy.items()}
            ready = wait([*self.busy, *sentinels], timeout=0.25)  # wakes to see a cancel
            for handle in ready:
                connection = sentinels.get(handle, handle)
                if connection not in self.busy:
                    continue  # its answer and its end were both ready: taken once
                process, path = self.busy.pop(connection)
                try:
                    result = connection.recv()
                except (EOFError, OSError):
                    process.join(timeout=5)
                    self._end(process, connection)
                    yield {
                        "file": path,
                        "error": f"{path}: the worker replaying it stopped ({_how(process)}); the rest of the sweep went on",
                    }
                    continue
                self.idle.append((process, connection))
                yield result

    def _end(self, process: Any, connection: Any) -> None:
        connection.close()
        if process.is_alive():
            process.terminate()
        process.join(timeout=5)

    def stop(self) -> None:
        for process, connection in self.idle:
            self._end(process, connection)
        for connection, (process, _) in self.busy.items():
            self._end(process, connection)
        self.idle, self.busy = [], {}


def _serve(connection: Any, task: Task, points: list[PolicyPoint]) -> None:
    """A worker's loop: a path in, its result out, until the pipe closes."""
    while True:
        try:
            path = connection.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        connection.send(task(path, points))


def _how(process: Any) -> str:
    code = process.exitcode
    if code is None:
        return "it stopped answering"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def run_dask(
    paths: Sequence[str],
    points: Sequence[PolicyPoint],
    workers: int | None = None,
    scheduler: str | None = None,
    cancel: threading.Event | None = None,
    task: Task = tune_session,
) -> Generator[dict[str, Any], None, None]:
    """The tasks on a Dask cluster: `scheduler`'s address, else a LocalCluster of `workers` processes here.

    Workers must be able to read the session paths (a shared folder, or fsspec URLs such as s3://)."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError as exc:
        raise EngineError("the dask engine needs the optional extra: pip install 'foldscope[dask]'") from exc
    cluster = None
    if scheduler is None:
        problem = loopback_problem()
        if problem:  # Dask would spend 30 s timing out, then print a traceback
            raise EngineError(
                f"the dask engine runs its cluster on the loopback network (127.0.0.1), which cannot be "
                f"reached here ({problem}); use --engine local"
            )
        try:
            # Loopback only, no dashboard: the scheduler's HTTP endpoint on a free port of 127.0.0.1.
            cluster = LocalCluster(
                n_workers=max(1, workers or 2),
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=50,
                scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            )
            client = Client(cluster)
        except Exception as exc:
            if cluster is not None:
                cluster.close()
            raise EngineError(f"the dask engine's local cluster did not start: {_first_line(exc)}") from None
    else:
        try:
            client = Client(scheduler, timeout=SCHEDULER_TIMEOUT_S)
        except Exception as exc:
            raise EngineError(f"--scheduler {scheduler}: no Dask scheduler answered ({_first_line(exc)})") from None
    futures = []
    try:
        futures = client.map(task, list(paths), points=list(points), pure=False)
        for future in as_completed(futures):
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            yield future.result()
    finally:
        if futures:
            client.cancel(futures)
        client.close()
        if cluster is not None:
            cluster.close()


def loopback_problem() -> str | None:
    """Why a server on 127.0.0.1 cannot be reached from here (the loopback is down), or None when it can."""
    try:
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            with socket.create_connection(server.getsockname(), timeout=2):
                pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _first_line(exc: BaseException) -> str:
    return (str(exc) or type(exc).__name__).splitlines()[0]


def run_engine(
    engine: str,
    paths: Sequence[str],
    points: Sequence[PolicyPoint],
    workers: int | None = None,
    scheduler: str | None = None,
    cancel: threading.Event | None = None,
    task: Task = tune_session,
) -> Generator[dict[str, Any], None, None]:
    """`task`: one session under the points (tune_session, or it with the agent's limits bound: a picklable partial)."""
    if engine == "local":
        return run_local(paths, points, workers, cancel, task)
    if engine == "dask":
        return run_dask(paths, points, workers, scheduler, cancel, task)
    raise ValueError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
