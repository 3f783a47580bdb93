"""The status bar's line: the session's format, message counts, the active view's size and the estimate."""

from __future__ import annotations

from foldscope.core.readout.document import Document
from foldscope.core.readout.words import counted


def status_text(doc: Document) -> str:
    session = doc.session
    parts = [
        f"Format: {session.format}",
        f"full record {counted(doc.record_size, 'message')}",
        f"active view {counted(len(session.view), 'message')}",
    ]
    if session.trace:
        parts.append(counted(len(session.trace), "request"))
    if not doc.counted:
        parts.append("counting tokens and measuring the requests: sizes are in characters until then")
        return "  ·  ".join(parts)
    est = doc.now_size
    rules = doc.rules
    if doc.now_predicted:
        parts.append(f"next request: predicted {doc.now_predicted:,} tokens")
        if doc.context_window:
            free = doc.context_window - doc.now_predicted
            parts.append(f"free {free:,} of the {doc.context_window:,}-token context window")
    if rules is not None and rules.ceiling:
        parts.append(f"estimate {est:,} of the {rules.ceiling:,}-token ceiling ({est / rules.ceiling:.0%})")
    else:
        parts.append(f"estimate {est:,} tokens (no ceiling)")
    if doc.unseen_head:
        parts.append(f"includes an unseen head of {doc.unseen_head:,} tokens")
    return "  ·  ".join(parts)


def status_tooltip(doc: Document) -> str:
    """The details behind the line: messages by kind and where the ceiling came from."""
    kinds = doc.kind_counts()
    by_kind = ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    if not doc.counted:
        return f"Full record by kind: {by_kind}\nThe tokens are being counted; the window map is sized by characters until then"
    lines = [f"Full record by kind: {by_kind}", f"Scale {doc.scale:.3f}"]
    if doc.now_predicted:
        lines.append("Predicted: the best forecast of what the provider will report for the next request, from the "
                     "newest report of its stretch plus what changed since; the estimate is the ADR's (count × scale), "
                     "which the ceiling and the fold decide on")
    if doc.rules is not None:
        lines.append(f"Ceiling: {doc.rules.source}")
    if doc.unseen_head:
        lines.append(f"Unseen head: {doc.unseen_head:,} tokens every request carried that this {doc.session.format} file does"
                     " not hold (its system prompt and tools), the smallest gap between reported input and the count")
    policy = doc.policy
    if policy is not None:
        lines.append(f"Policy in force: {policy.source}; prompt caching {'on' if policy.caching else 'off'}")
    return "\n".join(lines)
