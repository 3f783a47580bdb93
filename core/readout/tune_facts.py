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
from foldscope.core.replay.tune import (
    PolicyPoint,
    compact_points,
    grid,
    grid_cachings,
    grid_items,
    grid_numbers,
    session_paths,
    summarise,
    tune_session,
)

__all__ = [
    "PolicyPoint",
    "SweepCancelled",
    "agent_window",
    "files_swept",
    "policy_grid",
    "policy_words",
    "session_paths",
    "settings_lines",
    "sweep_local",
]

SweepCancelled = fleet.Cancelled  # the sweep was stopped before every session finished


_NUMBER = re.compile(r"\b(ceiling|bound) (\d{4,})\b")


def policy_words(label: str) -> str:
    """A policy's label as a person reads it, its ceiling and bound with thousands separators ("ceiling 100,000"):
    the label itself (core.replay.tune.PolicyPoint.label) stays the key of tune's CSV and JSON, unchanged."""
    return _NUMBER.sub(lambda m: f"{m[1]} {int(m[2]):,}", label)


def policy_grid(
    ceilings: str, fold_ats: str, targets: str, bounds: str, caching: str, strategies: Sequence[str], compact_at: str = ""
) -> list[PolicyPoint]:
    """Every policy the fields' lists name, and the agent's own compaction at each fraction `compact_at` lists (as
    `tune --compact-at`: alone when no strategy is chosen); PolicyError names the field's key when a value is refused."""
    result_maxes = grid_numbers(bounds, int, "tool_result_max_chars", "tool_result_max_chars")
    cachings = grid_cachings(caching, "prompt caching")
    fractions = [f for f in grid_numbers(compact_at, float, "agent's compaction", "compact-at") if f is not None]
    compact = compact_points(fractions, result_maxes, cachings)
    if not strategies:
        return compact
    return compact + grid(
        ceilings=grid_items(ceilings) or [None],
        fold_ats=grid_numbers(fold_ats, float, "context_fold_at", "context_fold_at"),
        targets=grid_numbers(targets, float, "context_fold_target", "context_fold_target"),
        result_maxes=result_maxes,
        cachings=cachings,
        strategies=strategies,
    )


def agent_window(session) -> tuple[str, int | None]:
    """The agent that ran a session and its window, by core.readout.agent_limits's rules (the ones every screen
    shows): where the agent's own compaction knob is set, for a sweep of the agent's compaction."""
    from foldscope.core.readout.agent_limits import agent_of, context_window

    window = context_window(session)
    return agent_of(session), None if window is None else window.tokens


def sweep_task(points: Sequence[PolicyPoint]) -> Callable[..., dict[str, Any]]:
    """The task each session runs: with the agent and its window where a point sets the agent's own compaction."""
    from functools import partial

    return partial(tune_session, limits=agent_window) if any(p.compact_at is not None for p in points) else tune_session


def sweep_local(
    paths: Sequence[str], points: Sequence[PolicyPoint], workers: int, stop: threading.Event, report: Callable[[int, int, str], None]
) -> dict[str, Any]:
    """Every policy replayed over every session on local workers, summarised; `report(done, total, file)` after each
    session (it may raise to cancel), `stop` set to stop the workers (SweepCancelled)."""
    results = []
    stream = fleet.run_local(paths, points, workers, cancel=stop, task=sweep_task(points))
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


def settings_lines(settings: Sequence[dict[str, Any]]) -> list[str]:
    """The recommendation as the settings to write (a recommendation's `settings`): each agent's key, file and value
    at a window its sessions ran in, or a profile's YAML; `foldscope tune` prints them, and the tune lab shows them."""
    lines: list[str] = []
    for setting in settings:
        if "yaml" in setting:
            at = f" (a {setting['window']:,}-token window)" if setting.get("window") else ""
            lines.append(f"{setting['title']}{at}: {setting['where']}:")
            lines += [f"  {line}" for line in setting["yaml"].splitlines()]
            continue
        lines.append(
            f"{setting['title']} (a {setting['window']:,}-token window; compacts at {setting['compacts_at']:,}): "
            f"{setting['key']} = {setting['value']} in {setting['where']}: {setting['line']}"
        )
        if setting.get("note"):
            lines.append(f"  {setting['note']}")
    return lines
