"""The status bar's one line: the session's format, message counts and the active view's size."""

from __future__ import annotations

from app.document import Document


def status_text(doc: Document) -> str:
    session = doc.session
    kinds = doc.kind_counts()
    by_kind = ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    parts = [
        f"Format: {session.format}",
        f"{doc.record_size:,} messages in the full record ({by_kind})",
        f"active view {doc.view_size:,} messages, {doc.view_tokens():,} tokens",
    ]
    if session.trace:
        parts.append(f"{len(session.trace):,} requests")
    from core.count import estimate

    est = estimate(doc.now_size, session.scale)
    rules = doc.rules
    if rules is not None and rules.ceiling:
        parts.append(f"estimate {est:,} of the {rules.ceiling:,}-token ceiling ({est / rules.ceiling:.0%})")
    else:
        parts.append(f"estimate {est:,} tokens (no ceiling recorded)")
    return "  ·  ".join(parts)
