"""Each recorded request's bar as the trace's count measured it: the report's every-request section composes its bars
from what its counting pass heard (Measure.calibrate's on_measured), not by measuring every request again (issue 48)."""

from __future__ import annotations

from array import array
from itertools import accumulate
from typing import Any

from foldscope.core.model.session import Message
from foldscope.core.readout.composition import MessageFacts, Summed, summed_figures
from foldscope.core.request.measure import Composition as Parts
from foldscope.core.request.measure import Measure, by_message
from foldscope.core.request.measurement import Measurement


class RequestBars:
    """What each request's bar needs, heard one request at a time: its stable segment, framing and thinking, and its
    categories summed. Held small (a run of requests shares its category names; the figures in arrays): a 50k
    session has tens of thousands of requests."""

    def __init__(self, measure: Measure) -> None:
        self.measure = measure
        # Each request's categories go on from the one before (composition), so only what changed is worked out: the
        # facts of every message are not kept (a 50k session's were 11 MB at the count's peak).
        self.facts = MessageFacts(remember=False)
        self.blocks = HeardBlocks(measure)
        self._heads: list[tuple[int, int, int, int]] = []  # system, tools, framing, characters of thinking
        self._names: list[tuple[str, ...]] = []
        self._figures: list[array] = []  # each category's tokens and messages, in the order of its names

    def hear(self, m: Measurement) -> None:
        """The next request's measurement, read before the counter measures on."""
        parts = self.blocks.parts(m)
        names, figures, thinking = summed_figures(parts, self.facts)
        if self._names and self._names[-1] == names:
            names = self._names[-1]
        self._heads.append((parts.system, parts.tools, parts.framing, thinking))
        self._names.append(names)
        self._figures.append(array("q", figures))

    def heard_all(self) -> None:
        """The count is over: the last view the categories went on from is let go (the bars hold their figures)."""
        self.facts = MessageFacts(remember=False)
        self.blocks = HeardBlocks(self.measure)

    def __len__(self) -> int:
        return len(self._heads)

    def heard(self, k: int) -> tuple[Parts, Summed]:
        """Request k's parts (its own unseen head, no messages) and its categories, as request_composition takes them."""
        system, tools, framing, thinking = self._heads[k]
        figures = self._figures[k]
        totals = {name: [figures[2 * i], figures[2 * i + 1]] for i, name in enumerate(self._names[k])}
        return Parts(system, tools, self.measure.request(k).unseen_head, (), framing), (totals, thinking)


class HeardBlocks:
    """Measure.parts_of(m, head=0) of each measurement heard in turn, reading only the blocks a measurement did not keep
    from the one heard before it: a request's view holds nearly all of the one before (the counter's `kept` leading
    parts are the same objects, so the same blocks and the same tokens), and reading every block of every view again
    (a memo lookup, its message, its tokens summed) was most of what hearing a 50k session's requests cost."""

    def __init__(self, measure: Measure) -> None:
        self.measure = measure
        self._serial: int | None = None  # the measurement heard last (its counter serial), None before any
        self._marked: dict[int, Any] = {}  # its marks by block
        self._owners: list[Message] = []  # each block's message
        self._pairs: list[tuple[Message, int]] = []  # each block's message and own tokens
        self._sums: list[int] = [0]  # the blocks' own tokens summed: _sums[i] over the first i blocks
        self._blocks_of: dict[Message, int] = {}  # how many blocks each message has

    def kept(self, m: Measurement) -> int:
        """How many leading blocks of `m` are the last heard measurement's, with the same marks."""
        if self._serial is None or m.since != self._serial or m.kept < 1:
            return 0
        kept = min(m.kept - 1, len(self._owners))  # `kept` counts the head part, then the blocks
        marked, before = m.laid.marked, self._marked
        if (marked or before) and {i: v for i, v in marked.items() if i < kept} != {i: v for i, v in before.items() if i < kept}:
            return 0
        return kept

    def parts(self, m: Measurement) -> Parts:
        """`m`'s parts with no unseen head, as Measure.parts_of(m, head=0) gives them."""
        kept = self.kept(m)
        owners, bodies = self.measure.blocks_of(m, kept)
        counts = self._blocks_of  # by the message itself: a Message hashes and compares by identity (eq=False)
        for owner in self._owners[kept:]:
            n = counts[owner] - 1
            if n:
                counts[owner] = n
            else:
                del counts[owner]
        for owner in owners:
            counts[owner] = counts.get(owner, 0) + 1
        del self._owners[kept:], self._pairs[kept:], self._sums[kept + 1 :]
        self._owners += owners
        self._pairs += zip(owners, bodies)
        self._sums += accumulate(bodies, initial=self._sums[kept])
        del self._sums[kept + 1]  # accumulate's initial value again
        self._serial, self._marked = m.serial, dict(m.laid.marked)
        if len(counts) == len(self._owners):  # one block a message: no sums
            listed: tuple[tuple[Message, int], ...] = tuple(self._pairs)
        else:
            listed = by_message(self._owners, [n for _, n in self._pairs])
        system, tools = self.measure.head_of(m)
        return Parts(system, tools, 0, listed, m.count - tools - system - self._sums[-1])
