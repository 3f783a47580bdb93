"""Engines for a sweep: the same tasks (one session under a set of policies) on a local process pool or on Dask.

Each engine yields a task's result as it finishes, so the driver holds the small per-policy rows and never
the sessions: memory is bounded by the workers, not by the fleet. `cancel` (a threading.Event) stops an
engine between results; stopping terminates every worker it started, so nothing keeps running after it.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Generator, Sequence
from functools import partial
from typing import Any

from foldscope.core.replay.tune import PolicyPoint, tune_session

ENGINES = ("local", "dask")


class Cancelled(Exception):
    """The sweep was stopped before every task finished."""


def run_local(paths: Sequence[str], points: Sequence[PolicyPoint], workers: int | None = None,
              cancel: threading.Event | None = None) -> Generator[dict[str, Any], None, None]:
    """The tasks on a pool of `workers` processes (spawned, so a GUI's threads are never forked)."""
    task = partial(tune_session, points=list(points))
    workers = max(1, min(workers or multiprocessing.cpu_count() or 1, len(paths) or 1))
    if workers == 1:  # one worker: no pool to start, the same function in this process
        for path in paths:
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            yield task(path)
        return
    pool = multiprocessing.get_context("spawn").Pool(workers)
    try:
        for result in pool.imap_unordered(task, paths):
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            yield result
        pool.close()
    finally:
        pool.terminate()  # on cancel, Ctrl+C or an error: no worker outlives the sweep
        pool.join()


def run_dask(paths: Sequence[str], points: Sequence[PolicyPoint], workers: int | None = None,
             scheduler: str | None = None, cancel: threading.Event | None = None) -> Generator[dict[str, Any], None, None]:
    """The tasks on a Dask cluster: `scheduler`'s address, else a LocalCluster of `workers` processes here.

    Workers must be able to read the session paths (a shared folder, or fsspec URLs such as s3://)."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError as exc:
        raise RuntimeError("the dask engine needs the optional extra: pip install 'foldscope[dask]'") from exc
    cluster = None
    if scheduler is None:
        # Loopback only, no dashboard: the scheduler's HTTP endpoint on a free port of 127.0.0.1.
        cluster = LocalCluster(n_workers=max(1, workers or 2), threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None, silence_logs=50,
                               scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"})
        client = Client(cluster)
    else:
        client = Client(scheduler)
    futures = []
    try:
        futures = client.map(tune_session, list(paths), points=list(points), pure=False)
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


def run_engine(engine: str, paths: Sequence[str], points: Sequence[PolicyPoint], workers: int | None = None,
               scheduler: str | None = None, cancel: threading.Event | None = None) -> Generator[dict[str, Any], None, None]:
    if engine == "local":
        return run_local(paths, points, workers, cancel)
    if engine == "dask":
        return run_dask(paths, points, workers, scheduler, cancel)
    raise ValueError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
