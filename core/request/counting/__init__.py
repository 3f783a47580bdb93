"""Counting in child processes: the tokenizer's forked helper (helper), counting ahead in a spawned child (ahead),
both serving the child's loop (child), chosen by the Counter's backend (backend), and one file's strategies in forked
workers (core.replay.parallel), all under one switch: FOLDSCOPE_COUNTING=local keeps every count (and every replay)
in the process that asked for it; unset, or `child`, lets a child count or replay where it repays its start."""

from __future__ import annotations

import os

SWITCH = "FOLDSCOPE_COUNTING"  # the one switch: `local`, no child process counts or replays; else (`child`) one may
LOCAL, CHILD = "local", "child"


def counting_mode() -> str:
    """The switch's setting: LOCAL when FOLDSCOPE_COUNTING says `local` (any case), else CHILD, the default."""
    return LOCAL if os.environ.get(SWITCH, "").strip().lower() == LOCAL else CHILD


def children_allowed() -> bool:
    """Whether a child process may count or replay for this one (the switch is not LOCAL)."""
    return counting_mode() == CHILD
