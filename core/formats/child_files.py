"""Subagent files read as a parent's child sessions: one that does not read is left out with a warning on the parent."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from foldscope.core.model.session import ReadError, Session

Where = TypeVar("Where")  # a child's file, or its id in a database of several (OpenCode's)


def readable_children(session: Session, places: Iterable[Where], read: Callable[[Where], Session]) -> Iterator[tuple[Where, Session]]:
    """Each place with its child session (read with `read`, which follows no children of its own); one that does not
    read is named in a warning on `session` and skipped, so the parent still opens."""
    for place in places:
        try:
            child = read(place)
        except ReadError as exc:
            session.warnings.append(f"{session.source}: subagent file left out: {exc}")
            continue
        yield place, child
