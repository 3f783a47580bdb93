"""The children a long read forks at cuts of its file, armed, forked and the measure's counting child forked with them.

Two kinds share this: the record's start counted for a replay (core.request.counting.during_read) and the
compactions' literal checks for a report (core.forensics.literals_during_read). The line reader
(core.formats.stream_lines.split_at) calls `_fork` at the cut it was armed with: a subclass forks its own child there
(`_fork_child`: True in that child, whose read ends at the cut as if the file ended), then, in the parent, the measure's
counting child is forked with the encoder built (counting_child) and the next cut is armed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from foldscope.core.model.session import FullRecord
from foldscope.core.request.counting import one_thread


class ReadChildren:
    """One read's children, a child at each of `fractions` of the file at `path`: `arm` before the read, `disarm` after
    one that never reached a line reader, `failed` where it failed after a fork (a child exits there)."""

    def __init__(self, path: Any, fractions: Sequence[float]) -> None:
        size = os.path.getsize(path)
        self._cuts = [int(size * fraction) for fraction in fractions]
        self._mine: Any = None  # in a child, itself (set by _fork_child)

    def arm(self) -> None:
        """Have the read fork at the next cut (core.formats.stream_lines.split_at)."""
        from foldscope.core.formats import stream_lines

        if self._cuts:
            stream_lines.split_at = (self._cuts.pop(0), self._fork)

    def disarm(self) -> None:
        """A read that never reached a line reader (another format) leaves no fork waiting for the next one."""
        from foldscope.core.formats import stream_lines

        if stream_lines.split_at is not None and stream_lines.split_at[1] == self._fork:
            stream_lines.split_at = None

    def failed(self) -> None:
        """The read failed after a fork: in the child, exit with no answer (the parent reads and says it); here, nothing."""
        if self._mine is not None:
            os._exit(1)

    def _fork(self, builder: Any) -> bool:
        """At a cut: True in the child (its read ends there), False in the parent (it reads on, to the next cut)."""
        record = getattr(builder, "record", None)
        if not one_thread() or not isinstance(record, FullRecord):
            return False
        if self._fork_child(record):
            return True
        counting_child()  # at the first cut (at a later one, nothing more)
        self.arm()
        return False

    def _fork_child(self, record: FullRecord) -> bool:
        """Fork this kind's child holding `record` as read so far: True in it, False here (or where none was forked)."""
        raise NotImplementedError


def counting_child() -> None:
    """In the parent at a cut: the encoder the measure builds anyway built now, and the measure's counting child forked
    with it if the read's hint made one due (core.request.counting.backend.fork_spare): a child spawned as the read
    starts spends about 0.7 s of the second core starting an interpreter and building its own, the core the read's
    children work on. It reads its pipe, so it ends when this process does."""
    from foldscope.core.request import tokens
    from foldscope.core.request.counting import backend

    tokens.local_encoding()
    backend.fork_spare()
