"""What a session's format says of its figures, for every screen: approximate usage marked, requests it does not hold said.

A format whose usage is approximate (FormatSpec.usage_precision: Aider prints "3.2k sent", and its own count where the
provider returned none) has every reported figure, and every cost and prediction made from them, marked so: the
CLI's --json carries `usage_precision` and `usage_note`, its text a line saying it and `~` before a reported figure,
the GUI the same line and marks. A format that does not hold its requests (FormatSpec.no_requests) says so in one
line where a feature needs them: a request's composition, a replay's exactness. Sessions of the other formats get
neither: their outputs are as they were.
"""

from __future__ import annotations

from typing import Any

from foldscope.core.formats.registry import format_named, sending_format
from foldscope.core.model.session import Session

APPROXIMATE = "~"  # put before a reported figure of an approximate session, on every screen
NOTE_START = "usage approximate:"  # how usage_note's line begins (the GUI's warnings bar shows it unasked)


def _spec(of: Session | str | None):
    """The format a session's figures come from: the sending agent's (an Aider history exported as a Branch keeps
    its rounded usage, and its marks), or the format named."""
    return format_named(sending_format(of) if isinstance(of, Session) else of)


def approximate(of: Session | str | None) -> bool:
    """The session's (or format's) usage figures are approximate (the agent's rounding or estimate), not the provider's counts."""
    spec = _spec(of)
    return spec is not None and spec.usage_precision != "exact"


def near(session: Session) -> str:
    """The mark before a reported figure of this session, and one made from it: `~` where the usage is approximate
    (an agent's rounding) or foldscope's estimate (Copilot CLI's totals shared out: every screen marks it so, as the
    README says), else nothing."""
    from foldscope.core.model.session import estimated_usage

    return APPROXIMATE if approximate(session) or estimated_usage(session) is not None else ""


def usage_note(of: Session | str | None) -> str | None:
    """One line saying a session's (or format's) usage is approximate, or None when it is exact."""
    spec = _spec(of)
    if spec is None or spec.usage_precision == "exact":
        return None
    return (
        f"{NOTE_START} {spec.title} records rounded figures (3.2k), its own estimate where the provider "
        "returned none; every reported figure, and the costs and predictions made from them, is approximate"
    )


# What each feature that needs a request's contents does without them.
WITHOUT_REQUESTS = {
    "composition": "its parts split only the conversation the file holds; the unseen head stands for the rest",
    "replay": "the strategies replay the conversation the file holds, not the requests, so no replay is exact",
}


def no_requests(of: Session | str | None, feature: str) -> str | None:
    """One line saying `feature` (a request's composition, a replay) needs what this session's format does not hold, or None."""
    spec = _spec(of)
    if spec is None or spec.no_requests is None:
        return None
    return f"{feature}: {spec.no_requests}: {WITHOUT_REQUESTS[feature]}"


def marks(session: Session, feature: str | None = None) -> dict[str, Any]:
    """The keys a command's --json adds for such a session (none for an exact one holding its requests):
    `usage_precision` and `usage_note`, and `no_requests` where the command's `feature` needs the requests."""
    out: dict[str, Any] = {}
    note = usage_note(session)
    if note is not None:
        out["usage_precision"] = "approximate"
        out["usage_note"] = note
    said = no_requests(session, feature) if feature else None
    if said is not None:
        out["no_requests"] = said
    return out


def lines(result: dict[str, Any]) -> list[str]:
    """The lines a command's text prints for those keys, each one line."""
    return [result[k] for k in ("no_requests", "usage_note") if result.get(k)]


def figure(value: int | None, result: dict[str, Any], spec: str = ",") -> str:
    """A reported figure as text: `~3,200` in an approximate session's output, or one whose usage is foldscope's
    estimate (`usage_estimated`: Copilot CLI's totals shared out, which `requests` marks so), `3,200` otherwise."""
    if value is None:
        return "-"
    near = result.get("usage_precision") == "approximate" or bool(result.get("usage_estimated"))
    return (APPROXIMATE if near else "") + format(value, spec)
