"""The result bound's projection (ADR-0130 Amendment 3): a tool result's bodies cut to at most N characters, marker included.

One projection from the original serves the compiler, the clip stage and summaries. A body is
core.fold.clip's: a text output, or one top-level mapping value (other than `success` and
`error`) that is text or has JSON text; its recovery offsets are the original's read_result text.

For a body of L source characters under bound N:
  - L <= N (and no smaller allowance): the body is unchanged, in its own type and rendering;
  - otherwise it keeps k source characters: a head of floor(3k/4), one complete marker (the
    omitted count, the omitted interval in read_result offsets, the first call with a limit of at
    most min(N, 16000) and how to continue), the tail of the rest, and `[JSON preview] ` before
    a non-text value. k is the greatest count whose complete body fits N, found by measuring
    each candidate (marker widths change with k, so length is not assumed monotone), at or
    below a copy's allowance. A body that cannot keep one head and one tail character with its
    marker inside N is refused (ProjectionRefused), never delivered over N.
The result depends only on the original, its full-record index, the allowance and N.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from foldscope.core.model.session import Message
from foldscope.core.request.bodies import HEAD_SHARE, PREVIEW_LABEL, READ_LIMIT, Body, bodies_of, kept_of, marker

PROJECTION_VERSION = 1  # recorded with a protected first round's frozen bound (Amendment 4)
MIN_KEPT = 2  # one head and one tail character: a shortened body always shows both


class ProjectionRefused(ValueError):
    """A body whose head, tail and complete marker cannot fit the bound."""

    def __init__(self, key: str | None, length: int, bound: int) -> None:
        self.key, self.length, self.bound = key, length, bound
        what = "the output" if key is None else f"the value of {key!r}"
        super().__init__(
            f"{what} ({length:,} characters) cannot fit a head, a tail and its recovery marker in the result bound of {bound:,} characters"
        )


def read_limit(bound: int | None) -> int:
    """The most one read_result call returns under a bound: min(N, 16000); 16000 without one."""
    return READ_LIMIT if bound is None else min(bound, READ_LIMIT)


def applied_limit(limit: int, bound: int | None) -> int:
    """The limit read_result applies and reports: min(requested limit, N, 16000)."""
    return min(limit, read_limit(bound))


def split(kept: int) -> tuple[int, int]:
    """Head and tail of `kept` source characters: floor(3k/4) and the rest."""
    head = (HEAD_SHARE * kept) // (HEAD_SHARE + 1)
    return head, kept - head


def interval(body: Body, kept: int) -> tuple[int, int]:
    """The omitted interval [start, end) in the original's read_result offsets."""
    head, tail = split(kept)
    return body.offset + head, body.offset + len(body.text) - tail


def shortened(body: Body, index: int, kept: int, bound: int) -> str:
    """The complete shortened body keeping `kept` source characters: label, head, marker, tail."""
    head, tail = split(kept)
    start, end = interval(body, kept)
    text = body.text
    shown = text[:head] + marker(index, start, end, read_limit(bound)) + text[len(text) - tail :]
    return PREVIEW_LABEL + shown if body.preview else shown


def _length(length: int, offset: int, preview: bool, index: int, kept: int, bound: int) -> int:
    # The complete body's length is its label, its kept characters and the marker as built for them.
    head, tail = split(kept)
    start, end = offset + head, offset + length - tail
    return (len(PREVIEW_LABEL) if preview else 0) + kept + len(marker(index, start, end, read_limit(bound)))


@lru_cache(maxsize=65_536)
def _greatest(length: int, offset: int, preview: bool, index: int, bound: int, ceiling: int) -> int | None:
    label = len(PREVIEW_LABEL) if preview else 0
    narrowest = len(marker(index, 0, 1, read_limit(bound)))  # every number at its fewest digits
    top = min(ceiling, length - 1, bound - label - narrowest)
    for kept in range(top, MIN_KEPT - 1, -1):  # the first that fits, from the top, is the greatest
        if _length(length, offset, preview, index, kept, bound) <= bound:
            return kept
    return None


def greatest_shortened(body: Body, index: int, bound: int, ceiling: int | None = None) -> int | None:
    """The greatest shortened count (below the body's length, at or below `ceiling`) whose complete body fits."""
    top = len(body.text) - 1 if ceiling is None else ceiling
    return _greatest(len(body.text), body.offset, body.preview, index, bound, top)


def retained_max(body: Body, index: int, bound: int) -> int | None:
    """k_N: the body's length when it fits whole, else the greatest fitting shortened count; None when none fits."""
    if len(body.text) <= bound:
        return len(body.text)
    return greatest_shortened(body, index, bound)


def effective_count(body: Body, index: int, bound: int, allowance: int | None = None) -> int:
    """The retained source count the request shows: whole when the allowance admits it and it fits, else the
    greatest fitting shortened count at or below the allowance. Raises ProjectionRefused when none fits."""
    length = len(body.text)
    if (allowance is None or allowance >= length) and length <= bound:
        return length
    ceiling = length - 1 if allowance is None else min(allowance, length - 1)
    kept = greatest_shortened(body, index, bound, ceiling)
    if kept is None:
        raise ProjectionRefused(body.key, length, bound)
    return kept


def project_body(body: Body, index: int, bound: int, allowance: int | None = None) -> tuple[str | None, int]:
    """(the shortened body, or None when it stays whole; the retained source count)."""
    kept = effective_count(body, index, bound, allowance)
    if kept >= len(body.text):
        return None, kept
    shown = shortened(body, index, kept, bound)
    assert len(shown) <= bound, "a projection never exceeds the bound"
    return shown, kept


def project_output(
    original: Message, index: int, bound: int, allowances: Mapping[str | None, int] | None = None
) -> tuple[Any, dict[str | None, int]]:
    """The original's output as a bounded request carries it, and each shortened body's retained count.

    `allowances` are a clipped copy's kept counts by body key (core.fold.clip.kept_of); a body
    not named has its whole length as allowance. Keys, their order and uncut values are kept.
    """
    allowances = allowances or {}
    output = original.content.get("output")
    kept: dict[str | None, int] = {}
    shown: dict[str | None, str] = {}
    for body in bodies_of(original):
        text, count = project_body(body, index, bound, allowances.get(body.key))
        if text is not None:
            shown[body.key], kept[body.key] = text, count
    if not shown:
        return output, kept
    if isinstance(output, Mapping):
        return {key: shown.get(str(key), value) for key, value in output.items()}, kept
    return shown[None], kept


def project_message(message: Message, original: Message, index: int, bound: int) -> tuple[Any, dict[str | None, int]]:
    """A result in the view (an original, or a clipped copy standing for `original`) projected from the original."""
    allowances = kept_of(message) if message is not original else None
    return project_output(original, index, bound, allowances)


def fits_whole(message: Message, bound: int) -> bool:
    """Every body of a message's own output is within the bound (for a copy whose original is not at hand)."""
    return all(len(body.text) <= bound for body in bodies_of(message))
