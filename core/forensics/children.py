"""A session's subagent sessions (Session.children, as the readers give them) and the compaction summariser among them.

Claude Code names the file of the call that wrote a compaction's summary `agent-acompact-*`; its reader marks
that child `child_kind: summariser` and names the note it wrote (`compaction_note`). A child's cost is its own
reported usage priced per request, as `inspect`'s usage roll-up prices it (core.model.session_totals), so the
two screens show one figure. The summariser sends the parent's conversation again and reads the parent's cache:
those tokens are reads, priced as reads, never a write of the parent's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foldscope.core.model.session import Session
from foldscope.core.model.session_totals import Totals, totals_of

SUMMARISER_PREFIX = "agent-acompact"
KINDS = ("subagents", "summariser")  # the two parts of a bill its children make, shown apart


@dataclass(frozen=True)
class Child:
    """One subagent session: its file, whether it is a compaction's summariser, what it reported and when it ran."""

    path: str
    summariser: bool
    totals: Totals  # its requests' reported usage and their price (cost_usd None when a model has no price)
    started: float | None
    ended: float | None
    note: str | None = None  # the compaction note a summariser wrote, where the reader linked it

    @property
    def requests(self) -> int:
        return self.totals.requests

    @property
    def bill_usd(self) -> float | None:
        return self.totals.cost_usd

    @property
    def kind(self) -> str:
        return "summariser" if self.summariser else "subagents"


def is_summariser(child: Session) -> bool:
    """The reader's mark, else Claude Code's file name for a compaction's summary call."""
    kind = child.extras.get("child_kind")
    if isinstance(kind, str):
        return kind == "summariser"
    return Path(child.source or "").name.startswith(SUMMARISER_PREFIX)


def children(session: Session) -> list[Child]:
    """The session's subagents and summarisers as the readers loaded them, each with its own bill."""
    out = []
    for child in session.children:
        times = [r.at for r in child.trace if r.at is not None]
        note = child.extras.get("compaction_note")
        out.append(
            Child(
                child.source,
                is_summariser(child),
                totals_of(child.trace, child.model or session.model),
                min(times) if times else None,
                max(times) if times else None,
                note if isinstance(note, str) else None,
            )
        )
    return out


def children_parts(kids: list[Child]) -> dict[str, dict[str, Any]]:
    """The subagents' and the summarisers' usage and cost, apart: requests, fresh, cache read, cache write, output,
    `tokens` (all they reported) and `cost_usd` (None when one of them is unpriced)."""
    out: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        t = Totals()
        for k in kids:
            if k.kind == kind:
                t += k.totals
        out[kind] = {
            "requests": t.requests,
            "tokens": t.input + t.cache_read + t.cache_write + t.output,
            "fresh": t.input,
            "cache_read": t.cache_read,
            "cache_write": t.cache_write,
            "output": t.output,
            "cost_usd": None if t.cost_usd is None else round(t.cost_usd, 8),
        }
    return out
