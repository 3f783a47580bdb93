"""The cache marks of a shown request, as the compiler places them (core Plan.marks), for the map and request panel."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from foldscope.core.model.caching import caching_of, map_words
from foldscope.core.model.session import Message
from foldscope.core.readout.document import Document
from foldscope.core.request.compile import make_plan
from foldscope.core.request.first_round import decide_first_round, included_round
from foldscope.core.request.marks import MarkPosition
from foldscope.core.request.trace import session_tools

ANCHORS = {
    "stable": "end of the stable segment (system and tools)",
    "tail": "the moving tail",
    "first_round": "end of the protected first round",
    "note": "end of the newest note",
    "lookback": "where the previous request ended",
}
LIFETIMES = {"1h": "one hour", "5m": "five minutes"}


@dataclass(frozen=True)
class Mark:
    """A cache mark to draw: the record index of the view message it ends with (None: the stable segment)."""

    index: int | None
    lifetime: str
    anchor: str


LIFETIME_WORDS = {"1h": "lives one hour", "5m": "lives five minutes"}


def mark_text(mark: Mark) -> str:
    """A mark as its hover text says it: lifetime first, then why the compiler put it there."""
    return f"{mark.lifetime} ({LIFETIME_WORDS.get(mark.lifetime, mark.lifetime)}), {mark.anchor.replace('_', ' ')}"


def first_round_for(document: Document, messages: Sequence[Message], policy: Any):
    """The included protected first round this view compiles with: the stored decision, else decided here
    without writing the session (as core.request.trace measures a request)."""
    if policy is None or not policy.caching:
        return None
    decision = decide_first_round(document.session, policy, document.counter, view=messages, store=False)
    return included_round(decision)


def mark_positions(document: Document, view: Sequence[str], policy: Any = None) -> tuple[MarkPosition, ...]:
    """Where the compiler puts this view's marks under `policy` (default: the document's policy in force)."""
    policy = document.policy if policy is None else policy
    if policy is None or not policy.caching:
        return ()
    session = document.session
    messages = [session.record.get(mid) for mid in view if mid in session.record]
    plan = make_plan(
        messages,
        record=session.record,
        policy=policy,
        tools=session_tools(session),
        first_round=first_round_for(document, messages, policy),
    )
    return plan.marks


def describe(position: MarkPosition) -> str:
    """One line a person reads: lifetime, why it is there and where it sits in the payload."""
    if position.where == "messages":
        place = f"messages[{position.item}], content block {position.block}"
        if position.index is not None:
            place += f" (ends with #{position.index})"
    else:
        place = f"the last {position.where} block"
    lifetime, anchor = LIFETIMES.get(position.lifetime, position.lifetime), ANCHORS.get(position.anchor, position.anchor)
    return f"{lifetime} ({position.lifetime}) · {anchor} · at {place}"


def cache_marks(document: Document, view: Sequence[str], policy: Any = None) -> tuple[tuple[Mark, ...], str]:
    """(marks to draw, why there are none): the compiler's mark positions for this view under the policy in force."""
    policy = document.policy if policy is None else policy
    if policy is None:
        return (), " (no policy in force: no marks are placed)"
    if not policy.caching:  # off, or left unset: as recorded, in the words the lab, the status bar and replay say
        return (), f" ({map_words(caching_of(policy, document.session))})"
    try:
        positions = mark_positions(document, view, policy)
    except Exception as exc:  # noqa: BLE001 - a view the compiler refuses draws no marks and says why
        return (), f" (cannot compile this view: {type(exc).__name__})"
    marks = tuple(Mark(p.index if p.where == "messages" else None, p.lifetime, p.anchor) for p in positions)
    return marks, "" if marks else " (the request is empty)"
