"""Counting in child processes: the tokenizer's forked helper (helper), counting ahead in a child spawned or forked (ahead),
both serving the child's loop (child), a small input's later half in a forked one (later_half), chosen by the Counter's
backend (backend), a long file's start counted while the rest is read (during_read), and one file's strategies in
forked workers (core.replay.parallel) and `inspect --db`'s store (core.cli.store_child), all under one switch:
FOLDSCOPE_COUNTING=local keeps every count (and every replay and store) in the process that asked for it; unset, or
`child`, lets a child count, replay or store where it repays its start."""

from __future__ import annotations

import os
import sys
import threading

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
