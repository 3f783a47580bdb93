"""Counting in child processes: the tokenizer's forked helper (helper), counting ahead in a spawned child (ahead), both
serving the child's loop (child), and one file's strategies in forked workers (core.replay.parallel), all under one
switch: FOLDSCOPE_NO_HELPER set keeps every count in the process that asked for it."""

from __future__ import annotations

import os

NO_CHILDREN = "FOLDSCOPE_NO_HELPER"  # the one switch: set (to anything), no child process counts or replays


def children_allowed() -> bool:
    """Whether a child process may count or replay for this one (NO_CHILDREN unset)."""
    return not os.environ.get(NO_CHILDREN)
