"""The policy sweep as the tune lab runs it: the grid its fields name, a folder's session files, the sweep on the
local engine (core.replay.fleet) summarised (core.replay.tune)."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from foldscope.core.readout.words import plural
from foldscope.core.replay import fleet
from foldscope.core.replay.tune import PolicyPoint, grid, grid_cachings, grid_items, grid_numbers, session_paths, summarise

__all__ = ["PolicyPoint", "SweepCancelled", "files_swept", "policy_grid", "policy_words", "session_paths", "sweep_local"]

SweepCancelled = fleet.Cancelled  # the sweep was stopped before every session finished


_NUMBER = re.compile(r"\b(ceiling|bound) (\d{4,})\b")


def policy_words(label: str) -> str:
    """A policy's label as a person reads it, its ceiling and bound with thousands separators ("ceiling 100,000"):
    the label itself (core.replay.tune.PolicyPoint.label) stays the key of tune's CSV and JSON, unchanged."""
    return _NUMBER.sub(lambda m: f"{m[1]} {int(m[2]):,}", label)


def policy_grid(ceilings: str, fold_ats: str, targets: str, bounds: str, caching: str, strategies: Sequence[str]) -> list[PolicyPoint]:
    """Every policy the fields' lists name; PolicyError names the field's key when a value is refused."""
    return grid(
        ceilings=grid_items(ceilings) or [None],
        fold_ats=grid_numbers(fold_ats, float, "context_fold_at", "context_fold_at"),
        targets=grid_numbers(targets, float, "context_fold_target", "context_fold_target"),
        result_maxes=grid_numbers(bounds, int, "tool_result_max_chars", "tool_result_max_chars"),
        cachings=grid_cachings(caching, "prompt caching"),
        strategies=strategies,
    )


def sweep_local(
    paths: Sequence[str], points: Sequence[PolicyPoint], workers: int, stop: threading.Event, report: Callable[[int, int, str], None]
) -> dict[str, Any]:
    """Every policy replayed over every session on local workers, summarised; `report(done, total, file)` after each
    session (it may raise to cancel), `stop` set to stop the workers (SweepCancelled)."""
    results = []
    stream = fleet.run_local(paths, points, workers, cancel=stop)
    with contextlib.closing(stream):  # closing stops the pool: no worker outlives a cancel
        for result in stream:
            results.append(result)
            report(len(results), len(paths), os.path.basename(result["file"]))
    return summarise(results, points)


def files_swept(out: dict[str, Any]) -> str:
    """The files a sweep read, in the unit and total its progress counted (files: a subagent's file beside its session
    is known to be one only once read), then what they were: sessions as `usage` counts them, the subagent files
    counted in their sessions, the failures and the files that were not sessions."""
    apart = out.get("subagent_files") or 0
    files = out["sessions"] + apart + len(out["failed"]) + len(out["skipped"])
    beside = f" and {plural(apart, 'subagent file')} beside their sessions (each replayed as a file of its own)" if apart else ""
    return (
        f"{plural(files, 'file')} swept: {plural(out['sessions'], 'session')}{beside}, {len(out['failed']):,} failed to read, "
        f"{len(out['skipped']):,} not sessions"
    )
