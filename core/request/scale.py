"""The scale (ADR-0130 Amendment 1's D3): calibrated from reported input, kept with the session, never lowered."""

from __future__ import annotations

import math

from foldscope.core.model.session import Session

SCALE_FLOOR = 4_000  # a request counted under this many tokens never moves the scale (Amendment 1's D3)


def stored_scale(session: Session) -> float:
    """The scale kept with the session: branch metadata foldscope.scale, else session.scale; never under 1."""
    kept = session.branch_metadata.get("foldscope", {})
    value = kept.get("scale") if isinstance(kept, dict) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return max(1.0, session.scale, float(value))
    return max(1.0, session.scale, 1.0)


def keep_scale(session: Session, scale: float) -> float:
    """Raise the session's scale to `scale` if higher (it never falls) and keep it in branch metadata."""
    kept = max(stored_scale(session), scale)
    session.scale = kept
    session.branch_metadata.setdefault("foldscope", {})["scale"] = kept
    return kept


def calibrated(scale: float, count: int, reported: int | None) -> float:
    """The scale after one completed request: reported / counted if higher, from 4,000 counted tokens on."""
    if reported is None or count < SCALE_FLOOR:
        return scale
    return max(scale, reported / count)
