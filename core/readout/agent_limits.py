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

from foldscope.core.formats.registry import format_named
from foldscope.core.formats.spec import FormatSpec
from foldscope.core.model import pricing
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Session

RECORDED_COMPACTION = "the size before the file's last automatic compaction"  # a compaction point the file recorded


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
    return source if isinstance(source, str) else session.format


def _declared(session: Session) -> FormatSpec | None:
    """The agent's format declaration: its window and compaction rules (core.formats.spec)."""
    return format_named(agent_of(session))


def _model(session: Session, policy: Policy | None) -> str | None:
    """The model as the Measure takes it (core.request.measure): the policy's, else the file's."""
    if policy is not None and policy.model:
        return policy.model
    return session.model or next((r.model for r in session.trace if r.model), None)


def agent_rule(session: Session, model: str | None) -> Limit | None:
    """The agent's window for the model as written, as its format declares it (Claude Code runs a Claude model in
    200,000 tokens, 1,000,000 only when the model is named with [1m], whatever the price list's capacity)."""
    spec = _declared(session)
    rule = spec.window(model) if spec is not None and model else None
    return Limit(*rule, "agent") if rule is not None else None


def automatic_compactions(session: Session) -> list[int]:
    """The sizes before the file's automatic compactions, in order (a Claude Code compact_boundary records them)."""
    return [
        int(e["pre_tokens"])
        for e in session.events
        if e.get("kind") == "compaction"
        and e.get("trigger") == "auto"
        and isinstance(e.get("pre_tokens"), int)
        and not isinstance(e.get("pre_tokens"), bool)
        and e["pre_tokens"] > 0
    ]


def _sizes(sizes: list[int]) -> str:
    shown = [f"{n:,}" for n in sizes[:3]]
    more = f" and {len(sizes) - 3} more" if len(sizes) > 3 else ""
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    return f"automatic compaction{'s' if len(sizes) > 1 else ''} at {listed}{more}"


def compaction_bounds(session: Session, sizes: list[int]) -> tuple[int, int] | None:
    """The windows the recorded automatic compactions allow: never smaller than the largest size compacted at,
    never larger than the agent's compaction point put at the smallest. Only Claude Code records which
    compactions were automatic, so only its rule (the window less 33,000, as its format declares it) is solved
    for the window here."""
    spec = _declared(session)
    rule = spec.compaction(max(sizes)) if sizes and spec is not None else None
    if rule is None:
        return None
    reserve = max(sizes) - rule[0]  # the agent compacts at the window less this (Claude Code: 33,000)
    return max(sizes), max(max(sizes), min(sizes) + reserve)


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
    """The agent's default window, as its format declares it (its window rule for no model named)."""
    spec = _declared(session)
    rule = spec.window(None) if spec is not None else None
    return Limit(*rule, "default") if rule is not None else None


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
        return Limit(policy.context_window, f"set by context_window in the policy from {policy.source}", "policy")
    stated = session.extras.get("context_window")
    window: Limit | None
    if isinstance(stated, int) and not isinstance(stated, bool) and 0 < stated < 2**63:
        window = Limit(stated, "the file's model_context_window", "file")
    else:
        default = agent_default(session)
        window = (
            agent_rule(session, model)
            or implied_window(session, sizes, (listed, default.tokens if default else None))
            or (Limit(listed, f"the context window the prices list for {model}", "prices") if listed else None)
            or default
        )
    if window is None:
        return None
    note = disagreement(session, sizes, window, listed, model)
    return Limit(window.tokens, window.source, window.kind, note) if note else window


def compaction_point(session: Session, window: Limit | None) -> Limit | None:
    """Where the agent compacts by itself: a recorded automatic compaction's size, else the agent's default rule."""
    autos = [
        int(e["pre_tokens"])
        for e in session.events
        if e.get("kind") == "compaction" and e.get("trigger") == "auto" and isinstance(e.get("pre_tokens"), int)
    ]
    if autos:
        return Limit(autos[-1], RECORDED_COMPACTION)
    if window is None:
        return None
    spec = _declared(session)  # the agent's documented rule, as its format declares it
    rule = spec.compaction(window.tokens) if spec is not None else None
    return Limit(*rule) if rule is not None else None


def agent_limits(session: Session, policy: Policy | None = None) -> AgentLimits:
    """The window (under `policy`'s context_window when it sets one) and the agent's compaction point."""
    window = context_window(session, policy)
    return AgentLimits(window, compaction_point(session, window))
