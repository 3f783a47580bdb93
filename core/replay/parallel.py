"""Jobs run at once in forked child processes, for a one-shot command: what the parent built is shared copy-on-write.

The replay lab (core.replay.lab.replay_runs) uses it for one file's strategies: the parent builds and calibrates the
one measure, then forks, so each child starts from that measure without measuring again, runs its strategies, and
sends their runs back pickled through a pipe. The first group of jobs runs in the parent itself (one child fewer
to fork and to read back). Only a process that runs one command and exits may fork: never the GUI, whose Qt
threads make a fork unsafe. A child that fails (an exception, a signal, an unreadable answer) is said in one line
and its jobs run again in the parent, so a result is always whole; docs/replay.md, "One file's strategies at once".
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
from collections.abc import Callable, Sequence
from typing import Any

from foldscope.core.request.counting import children_allowed, one_thread


def can_fork() -> bool:
    """Whether this process may fork its jobs: fork exists, the switch allows it (not FOLDSCOPE_COUNTING=local), and no
    other thread runs (counting.one_thread: never where a Qt application runs, whose threads threading cannot see)."""
    return hasattr(os, "fork") and children_allowed() and one_thread()


def split(weights: Sequence[float], processes: int) -> list[list[int]]:
    """The jobs (by index) in at most `processes` groups: the heaviest first, each into the group with the least
    weight so far; each group keeps its jobs in their given order, and the heaviest group comes first."""
    groups: list[list[int]] = [[] for _ in range(max(1, processes))]
    loads = [0.0] * len(groups)
    for i in sorted(range(len(weights)), key=lambda i: (-weights[i], i)):
        g = min(range(len(groups)), key=lambda g: (loads[g], g))
        groups[g].append(i)
        loads[g] += weights[i]
    order = sorted((g for g in range(len(groups)) if groups[g]), key=lambda g: -loads[g])
    return [sorted(groups[g]) for g in order]


def run_forked(
    jobs: Sequence[Callable[[], Any]],
    groups: Sequence[Sequence[int]],
    said: Callable[[str], None] | None = None,
    done: Callable[[int], None] | None = None,
    names: Sequence[str] | None = None,
    in_child: Callable[[], None] | None = None,
) -> list[Any]:
    """Every job's result in the jobs' order: the first group's jobs run here, each other group's in a forked child.

    `in_child()` runs first in each child (to let go of what only the parent may use). `done(i)` is called here
    once job i's result is in hand (a child's, when that child's answer is read). A child that fails is said by
    `said` in one line naming its jobs (`names`), and its jobs run here instead."""
    results: list[Any] = [None] * len(jobs)
    label = (lambda group: ", ".join(names[i] for i in group)) if names else (lambda group: f"jobs {list(group)}")
    children: list[_Child] = []
    here = list(groups[0]) if groups else []
    failed: list[tuple[Sequence[int], str]] = []
    # Frozen, the objects built so far are never walked by a child's collector, which would write to each one's
    # header and so copy every page it lies on; the parent takes them back once every child is forked.
    gc.freeze()
    try:
        for group in groups[1:]:
            try:
                children.append(_Child(jobs, group, in_child))
            except OSError as exc:  # no process to be had (EAGAIN, ENOMEM): that group runs here
                failed.append((group, f"could not start a process ({exc.strerror or exc})"))
    finally:
        gc.unfreeze()
    try:
        for i in here:
            results[i] = jobs[i]()
            if done is not None:
                done(i)
        for child in children:
            answer = child.collect()
            if isinstance(answer, str):
                failed.append((child.group, answer))
                continue
            for i, result in zip(child.group, answer):
                results[i] = result
                if done is not None:
                    done(i)
        for group, why in failed:
            if said is not None:
                said(f"the process running {label(group)} failed ({why}); running it in this one")
            for i in group:
                results[i] = jobs[i]()
                if done is not None:
                    done(i)
    finally:
        for child in children:  # on an error or Ctrl+C here: no child outlives the call
            child.stop()
    return results


class _Child:
    """A forked child running `group` of the jobs and writing their results, pickled, to its pipe; the parent's end."""

    def __init__(self, jobs: Sequence[Callable[[], Any]], group: Sequence[int], in_child: Callable[[], None] | None = None) -> None:
        self.group = list(group)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns into the caller's code
            os.close(read)
            _serve(jobs, self.group, write, in_child)
        os.close(write)
        self.pid: int | None = pid
        self.read: int | None = read

    def collect(self) -> list[Any] | str:
        """The child's results, or why there are none (one phrase), once it has exited."""
        assert self.read is not None and self.pid is not None
        with os.fdopen(self.read, "rb") as pipe:
            self.read = None
            data = pipe.read()  # to the end: the child has written all and exited, or died
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        code = os.waitstatus_to_exitcode(status)
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        try:
            kind, value = pickle.loads(data)  # our own child's answer
        except Exception:
            return f"exited with status {code} and no readable answer"
        if kind != "ok":
            return str(value)
        return value

    def stop(self) -> None:
        if self.read is not None:
            os.close(self.read)
            self.read = None
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.pid = None


def _serve(jobs: Sequence[Callable[[], Any]], group: Sequence[int], write: int, in_child: Callable[[], None] | None) -> None:
    """The child: run the group's jobs, write ("ok", results) or ("failed", why) to the pipe, and exit at once
    (os._exit: never the parent's exit handlers, never its buffered output written twice)."""
    status = 1
    try:
        try:
            if in_child is not None:
                in_child()
            answer: tuple[str, Any] = ("ok", [jobs[i]() for i in group])
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # said by the parent in one line, then run there
            first = str(exc).splitlines()[0] if str(exc) else ""
            data = pickle.dumps(("failed", f"{type(exc).__name__}: {first}" if first else type(exc).__name__))
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)
        status = 0
    finally:
        os._exit(status)
