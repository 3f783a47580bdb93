"""The model's context window and the agent's own compaction point, each named by where it came from.

The window resolves in one order, the first that answers: a window set in the policy (`--context-window`, a
profile's or the policy editor's `context_window`); the file's own statement (Codex writes `model_context_window`
in its token counts); the agent's rule for the model as written (Claude Code: 200,000, 1,000,000 only for a
model named with [1m]); a window implied by the file's recorded automatic compactions; the window the prices
list for the model; the agent's default. Where the recorded compactions contradict the price list (a window is
never smaller than what was compacted at, and an agent that compacts near its window's end is not running in
one five times larger), the window says so in its note.
"""

from __future__ import annotations

from dataclasses import dataclass

from foldscope.core.model import pricing
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Session

# Claude Code: a 200,000-token window (1,000,000 for a model named with [1m]); it compacts automatically at
# the window less the output it reserves (up to 20,000) and a 13,000-token buffer.
CLAUDE_WINDOW, CLAUDE_WINDOW_1M = 200_000, 1_000_000
CLAUDE_OUTPUT_RESERVE, CLAUDE_BUFFER = 20_000, 13_000
CLAUDE_ALIASES = ("opus", "sonnet", "haiku", "opusplan")  # the names Claude Code takes for its own models
# pi: compacts when the context passes the window less compaction.reserveTokens (16,384 by default).
PI_RESERVE = 16_384
# Codex: compacts at model_auto_compact_token_limit, by default nine tenths of the window.
CODEX_SHARE = 0.9


@dataclass(frozen=True)
class Limit:
    tokens: int
    source: str  # where the figure came from, in words
    kind: str = ""  # the window's rule, in one word: policy, file, agent, compaction, prices or default
    note: str = ""  # where the file's own compactions disagree with the price list (or with this figure)

    @property
    def said(self) -> str:
        """The source, and the note when there is one: what a screen shows beside the figure."""
        return f"{self.source}; {self.note}" if self.note else self.source

    def as_dict(self) -> dict:
        out: dict = {"tokens": self.tokens, "source": self.kind, "why": self.source}
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class AgentLimits:
    window: Limit | None
    compaction: Limit | None


def agent_of(session: Session) -> str:
    """The agent that ran the session: its format, or for a native file exported from another format, that one (the
    manifest's source_format), so an export keeps the agent's window and compaction point."""
    source = (session.manifest or {}).get("source_format") if isinstance(session.manifest, dict) else None
    return source if session.format == "lionagi" and isinstance(source, str) else session.format


def _model(session: Session, policy: Policy | None) -> str | None:
    """The model as the Measure takes it (core.request.measure): the policy's, else the file's."""
    if policy is not None and policy.model:
        return policy.model
    return session.model or next((r.model for r in session.trace if r.model), None)


def _is_claude(model: str) -> bool:
    name = model.lower().removesuffix("[1m]")
    return "claude" in name or name in CLAUDE_ALIASES


def agent_rule(session: Session, model: str | None) -> Limit | None:
    """The agent's window for the model as written: Claude Code runs a Claude model in 200,000 tokens, 1,000,000
    only when the model is named with [1m] (its price-list capacity does not change what Claude Code allows)."""
    if agent_of(session) != "claude_code" or not model or not _is_claude(model):
        return None
    if model.lower().endswith("[1m]"):
        return Limit(CLAUDE_WINDOW_1M, f"Claude Code's rule for {model}: 1,000,000 for a model named with [1m]",
                     "agent")
    return Limit(CLAUDE_WINDOW, f"Claude Code's rule for {model}: 200,000 unless named with [1m]", "agent")


def automatic_compactions(session: Session) -> list[int]:
    """The sizes before the file's automatic compactions, in order (a Claude Code compact_boundary records them)."""
    return [int(e["pre_tokens"]) for e in session.events
            if e.get("kind") == "compaction" and e.get("trigger") == "auto" and isinstance(e.get("pre_tokens"), int)
            and not isinstance(e.get("pre_tokens"), bool) and e["pre_tokens"] > 0]


def _sizes(sizes: list[int]) -> str:
    shown = [f"{n:,}" for n in sizes[:3]]
    more = f" and {len(sizes) - 3} more" if len(sizes) > 3 else ""
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    return f"automatic compaction{'s' if len(sizes) > 1 else ''} at {listed}{more}"


def compaction_bounds(session: Session, sizes: list[int]) -> tuple[int, int] | None:
    """The windows the recorded automatic compactions allow: never smaller than the largest size compacted at,
    never larger than the agent's compaction point put at the smallest. Only Claude Code records which
    compactions were automatic, so only its rule (the window less 33,000) is solved for the window here."""
    if not sizes or agent_of(session) != "claude_code":
        return None
    return max(sizes), max(max(sizes), min(sizes) + CLAUDE_OUTPUT_RESERVE + CLAUDE_BUFFER)


def implied_window(session: Session, sizes: list[int], candidates: tuple[int | None, ...]) -> Limit | None:
    """The window the recorded automatic compactions imply: the first candidate (the prices' window, the agent's
    default) they allow, else the largest window they allow."""
    bounds = compaction_bounds(session, sizes)
    if bounds is None:
        return None
    low, high = bounds
    why = f"the file's {_sizes(sizes)} (Claude Code compacts at the window less 33,000)"
    for tokens in candidates:
        if tokens is not None and low <= tokens <= high:
            return Limit(tokens, f"the {tokens:,}-token window implied by {why}", "compaction")
    return Limit(high, f"the largest window allowed by {why}", "compaction")


def agent_default(session: Session) -> Limit | None:
    if agent_of(session) == "claude_code":
        return Limit(CLAUDE_WINDOW, "Claude Code's default window", "default")
    return None


def disagreement(session: Session, sizes: list[int], window: Limit, listed: int | None, model: str | None) -> str:
    """What the recorded automatic compactions say against the window resolved, and against the price list's
    (Claude Code compacts at the window less 33,000: at 83.5% of 200,000, never at a fifth of a window)."""
    bounds = compaction_bounds(session, sizes)
    if bounds is None:
        return ""
    low, high = bounds

    def against(tokens: int, it: str) -> str:
        said = f"the file's {_sizes(sizes)} {'are' if len(sizes) > 1 else 'is'}"
        return f"{said} larger" if tokens < low else f"{said} {max(sizes) / tokens:.0%} of {it}"

    notes = []
    if window.kind != "policy" and not low <= window.tokens <= high:
        notes.append(f"though {against(window.tokens, 'it')}")
    if listed is not None and listed != window.tokens and not low <= listed <= high:
        notes.append(f"not the {listed:,} the prices list for {model}: {against(listed, 'that')}")
    return "; ".join(notes)


def context_window(session: Session, policy: Policy | None = None) -> Limit | None:
    """The model's context window, resolved in the module's order, with its source named."""
    model = _model(session, policy)
    listed_value = pricing.resolve(model).context_window if model else None
    listed = listed_value if isinstance(listed_value, int) and not isinstance(listed_value, bool) and listed_value > 0 else None
    sizes = automatic_compactions(session)
    if policy is not None and policy.context_window:
        # The policy names where it came from as a whole (a window is never stored in a launch record).
        return Limit(policy.context_window, f"set by context_window in the policy from {policy.source}",
                     "policy")
    stated = session.extras.get("context_window")
    window: Limit | None
    if isinstance(stated, int) and not isinstance(stated, bool) and 0 < stated < 2**63:
        window = Limit(stated, "the file's model_context_window", "file")
    else:
        default = agent_default(session)
        window = (agent_rule(session, model)
                  or implied_window(session, sizes, (listed, default.tokens if default else None))
                  or (Limit(listed, f"the context window the prices list for {model}", "prices") if listed else None)
                  or default)
    if window is None:
        return None
    note = disagreement(session, sizes, window, listed, model)
    return Limit(window.tokens, window.source, window.kind, note) if note else window


def compaction_point(session: Session, window: Limit | None) -> Limit | None:
    """Where the agent compacts by itself: a recorded automatic compaction's size, else the agent's default rule."""
    autos = [int(e["pre_tokens"]) for e in session.events
             if e.get("kind") == "compaction" and e.get("trigger") == "auto" and isinstance(e.get("pre_tokens"), int)]
    if autos:
        return Limit(autos[-1], "the size before the file's last automatic compaction")
    if window is None:
        return None
    if agent_of(session) == "claude_code":
        return Limit(window.tokens - CLAUDE_OUTPUT_RESERVE - CLAUDE_BUFFER,
                     "Claude Code's auto-compact point (the window less 20,000 reserved for output and a 13,000 buffer)")
    if agent_of(session) == "pi":
        return Limit(window.tokens - PI_RESERVE, "pi's compaction point (the window less reserveTokens, 16,384 by default)")
    if agent_of(session) == "codex":
        return Limit(int(window.tokens * CODEX_SHARE),
                     "Codex's auto-compact limit (model_auto_compact_token_limit; nine tenths of the window by default)")
    return None


def agent_limits(session: Session, policy: Policy | None = None) -> AgentLimits:
    """The window (under `policy`'s context_window when it sets one) and the agent's compaction point."""
    window = context_window(session, policy)
    return AgentLimits(window, compaction_point(session, window))
