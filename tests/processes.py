"""Helpers for tests of forked children: whether one has been reaped."""

from __future__ import annotations

import os


def gone(pid: int) -> bool:
    """Whether `pid` is no child of this process any more (reaped)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False
