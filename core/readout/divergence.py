"""Where the next request stops repeating this one, and why: core.request.prefix's divergence, said in words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from foldscope.core.readout.document import Document
from foldscope.core.readout.marks_facts import first_round_for
from foldscope.core.request.prefix import Compiled, Divergence, Place, compile_for_prefix, divergence, place
from foldscope.core.request.trace import session_tools

# core.request.prefix.CAUSES as a person reads them.
CAUSE_WORDS = {
    "none": "the next request repeats it whole",
    "append": "append: the next request repeats every message and adds after them",
    "fold": "fold: a fold, clip or compaction rewrote the view",
    "restore": "restore: a message came back into the view",
    "policy": "policy: the result bound or prompt caching changed",
    "stable": "stable segment: the system prompt or tools changed",
    "rewrite": "rewrite: messages were taken out or changed",
}


def compiled_for(document: Document, view: Sequence[str], policy: Any = None) -> Compiled:
    """A view compiled under the policy in force, as core.request.prefix compares it (marks set aside)."""
    policy = document.policy if policy is None else policy
    session = document.session
    messages = [session.record.get(mid) for mid in view if mid in session.record]
    return compile_for_prefix(
        messages,
        record=session.record,
        policy=policy,
        tools=session_tools(session),
        first_round=first_round_for(document, messages, policy),
    )


def parting(document: Document, this: Sequence[str], following: Sequence[str]) -> tuple[Divergence, int]:
    """(where and why `following` departs from `this`, the bytes of `this` compared)."""
    found, size, _ = parting_place(document, this, following)
    return found, size


def parting_place(document: Document, this: Sequence[str], following: Sequence[str]) -> tuple[Divergence, int, Place]:
    """(where and why `following` departs from `this`, the bytes of `this` compared, the exact place they part)."""
    a, b = compiled_for(document, this), compiled_for(document, following)
    record = document.session.record
    return divergence(a, b, record), len(a.data), place(a, b, record)


def where_words(message: int | None, index: int | None, char: int | None) -> str:
    """The place two requests part, as both the request panel and the Cost panel say it (one wording, one place)."""
    if message is None:
        return "in the stable segment (system and tools)"
    where = f"messages[{message}]"
    if index is not None:
        where += f" (from #{index})"
    if char:
        where += f", at character {char:,} of its compiled JSON"
    return where


def place_words(found: Divergence, at: Place | None) -> str:
    """The place of a divergence in words: the exact place where the bytes part when known, else its message."""
    if at is None:
        return where_words(found.message, found.index, None)
    return where_words(at.message, at.index if at.index is not None else found.index, at.char)


def describe(found: Divergence, size: int, at: Place | None = None) -> str:
    """The divergence as the request panel says it: how much is repeated, where it parts, and the cause."""
    repeated = round(found.share * size)
    if found.cause == "none":
        return f"{CAUSE_WORDS['none']} ({size:,} bytes)"
    where = place_words(found, at if found.cause != "append" else None)
    verb = "adds from" if found.cause == "append" else "parts at" if found.message is not None else "parts"
    return f"repeats {repeated:,} of {size:,} bytes ({found.share:.1%}), {verb} {where}; cause: {CAUSE_WORDS.get(found.cause, found.cause)}"
