"""A session's subagent sessions (Claude Code's `subagents/agent-*.jsonl`) and the compaction summariser among them.

The reader lists the child files in extras["children"] (core.formats.claude_code.find_children); a reader
that fills `Session.children` with loaded sessions is read the same way. Claude Code names the file of the
call that wrote a compaction's summary `agent-acompact-*`: that call's usage is the summariser's cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from foldscope.core.forensics.money import Pricer
from foldscope.core.model.session import ReadError, Session

SUMMARISER_PREFIX = "agent-acompact"


@dataclass(frozen=True)
class Child:
    """One subagent session: its file, whether it is a compaction's summariser, its bill and when it ran."""

    path: str
    summariser: bool
    requests: int
    bill_usd: float | None  # None when a request's model has no price
    started: float | None
    ended: float | None


def is_summariser(path: str) -> bool:
    return Path(path).name.startswith(SUMMARISER_PREFIX)


def bill(session: Session) -> float | None:
    """The session's reported usage priced per request; None when any request's model is unpriced."""
    pricer = Pricer(session.model)
    total = 0.0
    for r in session.trace:
        u = r.usage
        if u is None:
            continue
        prices = pricer(r.model)
        if prices is None:
            return None
        total += prices.cost(u.input, u.cache_read, u.cache_write - u.cache_write_1h, u.cache_write_1h, u.output)
    return total


def child_sessions(session: Session) -> list[tuple[str, Session]]:
    """The loaded subagent sessions with their files; a child that does not read is left out (its warning kept)."""
    loaded = getattr(session, "children", None)
    if isinstance(loaded, list) and all(isinstance(c, Session) for c in loaded) and loaded:
        return [(c.source, c) for c in loaded]
    from foldscope.core.formats import load_session

    out = []
    for path in session.extras.get("children", []) or []:
        try:
            out.append((str(path), load_session(path)))
        except ReadError as exc:
            session.warnings.append(f"subagent file left out: {exc}")
    return out


def children(session: Session) -> list[Child]:
    out = []
    for path, child in child_sessions(session):
        times = [r.at for r in child.trace if r.at is not None]
        out.append(Child(path, is_summariser(path), len(child.trace), bill(child),
                         min(times) if times else None, max(times) if times else None))
    return out
