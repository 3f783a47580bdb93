"""Counting in child processes: the tokenizer's forked helper (helper), counting ahead in a child spawned or forked (ahead),
both serving the child's loop (child), a small input's later half in a forked one (later_half), chosen by the Counter's
backend (backend), a long file's start counted while the rest is read (during_read, forked at the read's cuts as the
report's checks are: read_children), and one file's strategies in forked workers (core.replay.parallel) and `inspect
--db`'s store (core.cli.store_child, forked on two pipes as a counting child is: forked_on_pipes), all under one switch:
FOLDSCOPE_COUNTING=local keeps every count (and every replay and store) in the process that asked for it; unset, or
`child`, lets a child count, replay or store where it repays its start."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any

SWITCH = "FOLDSCOPE_COUNTING"  # the one switch: `local`, no child process counts, replays or stores; else (`child`) one may
LOCAL, CHILD = "local", "child"


def counting_mode() -> str:
    """The switch's setting: LOCAL when FOLDSCOPE_COUNTING says `local` (any case), else CHILD, the default."""
    return LOCAL if os.environ.get(SWITCH, "").strip().lower() == LOCAL else CHILD


def children_allowed() -> bool:
    """Whether a child process may count or replay for this one (the switch is not LOCAL)."""
    return counting_mode() == CHILD


def one_thread() -> bool:
    """Whether this process runs one thread, as far as can be known, so that a fork is safe (a lock another thread
    holds at the fork stays held in the child for ever): threading's count misses the threads it did not start, so a
    process where a Qt application runs (the GUI: its own thread, its worker pool, Qt's) is never taken for one. Qt
    is asked only if something else loaded it (core never imports Qt)."""
    if threading.active_count() != 1:
        return False
    qt = sys.modules.get("PySide6.QtCore")
    return qt is None or qt.QCoreApplication.instance() is None


def forked_on_pipes(run: Callable[[int, int], Any]) -> tuple[int, int, int] | None:
    """A process forked from this one on two pipes, running `run(down, up)` (the ends it reads from and answers on)
    and exiting then, never returning into the caller's code nor running this process's exit handlers (os._exit: 0
    when `run` returned, else 1); here its pid and this process's ends (what it reads, where its answers come). None
    when no process can be had. Only where a fork is safe (no other thread runs). A counting child (child.fork) and
    the store's child (core.cli.store_child) are forked so: here, where the store's fork imports nothing more."""
    down_r, down_w = os.pipe()
    up_r, up_w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        for fd in (down_r, down_w, up_r, up_w):
            os.close(fd)
        return None
    if pid == 0:
        status = 1
        try:
            os.close(down_w)
            os.close(up_r)
            run(down_r, up_w)
            status = 0
        finally:
            os._exit(status)
    os.close(down_r)
    os.close(up_w)
    return pid, down_w, up_r
