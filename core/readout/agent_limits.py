"""The model's context window and the agent's own compaction point, where the file or the agent's documented default says.

Each figure carries where it came from, so a screen names it: the file's own statement first (Codex writes
`model_context_window` in its token counts; a Claude Code compact_boundary records the tokens before an
automatic compaction), then the window the prices list for the model (as core.readout.trace_facts's
context_window reads it, so the two never differ), then the agent's documented default.
"""

from __future__ import annotations

from dataclasses import dataclass

from foldscope.core.model import pricing
from foldscope.core.model.session import Session

# Claude Code: a 200,000-token window (1,000,000 for a model named with [1m]); it compacts automatically at
# the window less the output it reserves (up to 20,000) and a 13,000-token buffer.
CLAUDE_WINDOW, CLAUDE_WINDOW_1M = 200_000, 1_000_000
CLAUDE_OUTPUT_RESERVE, CLAUDE_BUFFER = 20_000, 13_000
# pi: compacts when the context passes the window less compaction.reserveTokens (16,384 by default).
PI_RESERVE = 16_384
# Codex: compacts at model_auto_compact_token_limit, by default nine tenths of the window.
CODEX_SHARE = 0.9


@dataclass(frozen=True)
class Limit:
    tokens: int
    source: str


@dataclass(frozen=True)
class AgentLimits:
    window: Limit | None
    compaction: Limit | None


def context_window(session: Session) -> Limit | None:
    """The model's context window: the file's own figure, the pricing table's capacity, else the agent's default."""
    stated = session.extras.get("context_window")
    if isinstance(stated, int) and not isinstance(stated, bool) and stated > 0:
        return Limit(stated, "the file's model_context_window")
    listed = pricing.resolve(session.model).context_window if session.model else None
    if isinstance(listed, int) and listed > 0:
        return Limit(listed, f"the context window the prices list for {session.model}")
    if session.format == "claude_code":
        if session.model and "[1m]" in session.model:
            return Limit(CLAUDE_WINDOW_1M, "Claude Code's 1M window for a [1m] model")
        return Limit(CLAUDE_WINDOW, "Claude Code's default window")
    return None


def compaction_point(session: Session, window: Limit | None) -> Limit | None:
    """Where the agent compacts by itself: a recorded automatic compaction's size, else the agent's default rule."""
    autos = [int(e["pre_tokens"]) for e in session.events
             if e.get("kind") == "compaction" and e.get("trigger") == "auto" and isinstance(e.get("pre_tokens"), int)]
    if autos:
        return Limit(autos[-1], "the size before the file's last automatic compaction")
    if window is None:
        return None
    if session.format == "claude_code":
        return Limit(window.tokens - CLAUDE_OUTPUT_RESERVE - CLAUDE_BUFFER,
                     "Claude Code's auto-compact point (the window less 20,000 reserved for output and a 13,000 buffer)")
    if session.format == "pi":
        return Limit(window.tokens - PI_RESERVE, "pi's compaction point (the window less reserveTokens, 16,384 by default)")
    if session.format == "codex":
        return Limit(int(window.tokens * CODEX_SHARE),
                     "Codex's auto-compact limit (model_auto_compact_token_limit; nine tenths of the window by default)")
    return None


def agent_limits(session: Session) -> AgentLimits:
    window = context_window(session)
    return AgentLimits(window, compaction_point(session, window))
