"""A counted request's parts and measurement: a message's share of the count, the three largest, the kept total."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

from foldscope.core.model import shared_start as _shared
from foldscope.core.model.session import Message

if TYPE_CHECKING:
    import msgspec

    from foldscope.core.request.count_step import Laid
else:
    from foldscope.core.model.canonical import msgspec  # imported its way (core.model.canonical._msgspec)


class Part(msgspec.Struct, frozen=True, gc=False):  # made in C, as core.request.plan.BlockSpec: one a counted block
    """A message's share of a counted request: its block and the punctuation after it."""

    message: Message | None  # None for the tools and system head when there is no system message
    kind: str
    tokens: int


def new_part(message: Message | None, kind: str, tokens: int) -> Part:
    """Part(message, kind, tokens): one a counted block, a million on a file of tiny prompts."""
    return Part(message, kind, tokens)


@dataclass(frozen=True, slots=True, init=False)  # __init__ below: two a request of a trace (the counter's, the trace's)
class Measurement:
    """A request's count and each part of it (the head first, then one per block).

    `since` is the serial of the measurement this one was laid out from (-1: planned whole) and `kept` how many
    leading parts are the same objects as that one's; `serial` names this one; `laid` is the counter's
    state behind it (core.request.count_step.Laid), for the prefix share.
    """

    count: int  # the exact o200k_base count of the compiled view (no unseen head)
    parts: Sequence[Part]  # a tuple, or the head and the layout's Shared parts (core.model.shared_start.Headed)
    serial: int = -1
    since: int = -1
    kept: int = 0
    laid: Any = field(default=None, repr=False, compare=False)

    def __init__(self, count: int, parts: Sequence[Part], serial: int = -1, since: int = -1, kept: int = 0, laid: Any = None) -> None:
        # Each field set through its slot's own descriptor, as the frozen dataclass's __init__ sets it through
        # object.__setattr__, a third of its cost (a global and an attribute looked up a field).
        _set_count(self, count)
        _set_parts(self, parts)
        _set_serial(self, serial)
        _set_since(self, since)
        _set_kept(self, kept)
        _set_laid(self, laid)

    def largest(self, n: int = 3) -> list[Part]:
        """The n (at most 3) largest parts, ties in order, as sorted(parts, key=-tokens)[:n] gives; from the
        kept blocks' standing top three and the re-counted parts when the counter laid the view out."""
        laid = self.laid
        if laid is None or n > 3:
            return sorted(self.parts, key=lambda p: -p.tokens)[:n]
        head = self.parts[0]
        cand = kept_top(laid) + [(-head.tokens, 0, head)]
        cand += [(-p.tokens, i + 1, p) for i, p in enumerate(laid.parts.since(laid.kept), laid.kept)]
        return [p for _, _, p in _top_three(cand, n)]


_set_count, _set_parts, _set_serial, _set_since, _set_kept, _set_laid = (
    vars(Measurement)[name].__set__ for name in ("count", "parts", "serial", "since", "kept", "laid")
)


def _top_three(cand: Iterable[tuple], n: int = 3) -> list:
    """The n smallest (-tokens, index, part) candidates: the largest parts, ties in order. Each candidate's index is
    its own, so tuples compare on (-tokens, index) alone and never reach the part: sorted in C, no key to call."""
    return sorted(cand)[:n]


def kept_top(laid: Laid) -> list:
    """The three largest of `laid`'s kept parts as (-tokens, index, part), worked out the first time they are asked
    for and kept, so the next layout can carry them forward (carried_top)."""
    if laid.top is None:
        laid.top = _top_three((-p.tokens, i + 1, p) for i, p in enumerate(laid.parts[: laid.kept]))
    return laid.top


def carried_top(base: Laid, kept: int) -> list | None:
    """The three largest of the first `kept` parts of a layout made from `base`, from base's standing three and the
    parts it had not kept, so Measurement.largest costs what changed; None (work them out when asked) when base's
    were never asked for, or fewer parts are kept than base kept (the standing three may lie past them)."""
    if base.top is None or kept < base.kept:
        return None
    start = base.kept
    return _top_three(base.top + [(-p.tokens, i + 1, p) for i, p in enumerate(islice(base.parts.since(start), kept - start), start)])


def kept_total(laid: Laid) -> int:
    """The tokens of laid's first `kept` blocks with their glue: the whole chunks' total (Laid.cum), then the kept
    parts of the chunk the kept ones end in (fewer than a chunk's, summed in C)."""
    if laid.kept_tokens is not None:
        return laid.kept_tokens
    kept = laid.kept
    c = kept >> _shared.SHIFT
    whole = laid.cum[c - 1] if c else 0
    # laid.parts may run past the kept ones until the counter fills them (core.request.count_step.Laid.parts)
    return whole + sum(p.tokens for p in islice(laid.parts.since(c << _shared.SHIFT), kept & _shared.MASK))
