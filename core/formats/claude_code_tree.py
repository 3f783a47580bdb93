"""Claude Code's tree: where each main-chain line stood, and the rewind that takes the view back to a line's parent."""

from __future__ import annotations

import json
from bisect import bisect_right

from foldscope.core.formats.stream import SessionBuilder


class Tree:
    """The tree's state and steps, which the Claude Code reader inherits (core.formats.claude_code's docstring, "Tree").

    Where each main-chain uuid stood, the newest one, and the uuids fed while the open response is open (its split
    lines, held results and progress lines). A uuid's mark is its line; the view as it stood after that line is the
    newest of `views` begun at or before it (the active view is replaced only at a rewind or compaction: one entry
    each, not one a line).
    """

    b: SessionBuilder

    def __init__(self) -> None:
        self.marks: dict[str, int] = {}
        self.view_starts: list[int] = []
        self.views: list[list[str]] = []
        self.tip: str | None = None
        self.turn_uuids: set[str] = set()
        self.repeated = 0

    def _end_response(self) -> None:
        raise NotImplementedError  # the reader's: a rewind first ends the open response

    def _mark(self, line: int, uuid: str) -> None:
        """After a main-chain line: it is the newest, and the view as it stood after it is known."""
        self.marks[uuid] = line
        if not self.views or self.views[-1] is not self.b.view:
            self.view_starts.append(line)
            self.views.append(self.b.view)
        self.tip = uuid
        if self.b.turn_open:
            self.turn_uuids.add(uuid)

    def _repeat(self, line: int, uuid: str, value: dict) -> None:
        self.repeated += 1
        first = self.marks[uuid]
        if self._original(first).get("message") != value.get("message"):
            self.b.warn(line, f"uuid {uuid!r} was already read at line {first} with other content; skipped")

    def _original(self, line: int) -> dict:
        """The parsed value of an earlier line, read again from the file (repeats are rare)."""
        source = self.b.source
        if source is None:
            return {}
        start, end = source.span(line)
        with open(self.b.path, "rb") as handle:
            handle.seek(start)
            value = json.loads(handle.read(end - start))
        return value if isinstance(value, dict) else {}

    def _follow(self, line: int, value: dict) -> None:
        """Before a main-chain line: when its parent is not the newest line, the view goes back to the parent.

        Sibling lines inside one response are not a rewind: parallel tool results each name their own
        tool_use line as parent, and the next response names the last result.
        """
        parent = value.get("parentUuid")
        if parent is None and value.get("subtype") == "compact_boundary":
            parent = value.get("logicalParentUuid")
        if not isinstance(parent, str) or parent == self.tip or parent not in self.marks:
            return
        if self.b.turn_open and parent in self.turn_uuids:
            return
        self._end_response()
        self.b.close_request()
        parent_line = self.marks[parent]
        view = self.views[bisect_right(self.view_starts, parent_line) - 1]
        record = self.b.record
        kept = [m for m in view if (p := record.get(m).provenance) is not None and p.line <= parent_line]
        kept_set = set(kept)
        abandoned = [m for m in self.b.view if m not in kept_set]
        self.b.view = kept
        # `kept` is the view from here on and `first_index` the first message after the rewind: the
        # native writer exports the event, and its reader rebuilds past views from it (lionagi_views).
        self.b.events.append(
            {
                "kind": "branch",
                "source": "claude_code",
                "action": "rewind",
                "at_request": len(self.b.trace),
                "line": line,
                "parent_line": parent_line,
                "abandoned": abandoned,
                "kept": list(kept),
                "first_index": len(record),
            }
        )
        if abandoned:
            self.b.extras.setdefault("abandoned", []).extend(abandoned)
