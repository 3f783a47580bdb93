"""Helpers for tests of forked children: whether one has been reaped, whether one still runs."""

from __future__ import annotations

import os


def gone(pid: int) -> bool:
    """Whether `pid` is no child of this process any more (reaped)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def alive(pid: int) -> bool:
    """Whether process `pid` runs (not ended, not a zombie), any process's child: read from /proc (Linux)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False
