"""Subagent files read as a parent's child sessions: one that does not read is left out with a warning on the parent."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from foldscope.core.model.session import ReadError, Session


def readable_children(session: Session, paths: list[Path], read: Callable[..., Session]) -> Iterator[tuple[Path, Session]]:
    """Each path with its child session (read with `read`, its own children not followed); a file that does not read
    is named in a warning on `session` and skipped, so the parent still opens."""
    for path in paths:
        try:
            child = read(path, children=False)
        except ReadError as exc:
            session.warnings.append(f"{session.source}: subagent file left out: {exc}")
            continue
        yield path, child
