"""The one-line progress bar a command over a folder of sessions writes on stderr (tune, usage, replay, cache, compactions)."""

from __future__ import annotations

import sys
import time
from typing import Any


class Progress:
    """A one-line bar on stderr: files swept of all, failures, and the time left at the pace so far. Files, not sessions:
    a subagent's file beside its session is read on its own and is known to be one only once read (tune's result's first
    line names the same files and what they were)."""

    def __init__(self, total: int, live: bool) -> None:
        self.total, self.live, self.done, self.failed = total, live, 0, 0
        self.start = time.monotonic()

    def step(self, result: dict[str, Any]) -> None:
        self.done += 1
        self.failed += "error" in result
        if not self.live:
            return
        elapsed = time.monotonic() - self.start
        left = elapsed / self.done * (self.total - self.done)
        width = 30
        filled = round(width * self.done / max(self.total, 1))
        sys.stderr.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} files, {self.failed} failed, about {left:,.0f} s left "
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.live:
            sys.stderr.write("\n")
