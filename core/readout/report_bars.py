"""Each recorded request's bar as the trace's count measured it: the report's every-request section composes its bars
from what its counting pass heard (Measure.calibrate's on_measured), not by measuring every request again (issue 48)."""

from __future__ import annotations

from array import array
from itertools import chain
from typing import Any

from foldscope.core.model.session import Message
from foldscope.core.readout.composition import HEAD, MessageFacts, Summed
from foldscope.core.request.measure import Composition as Parts
from foldscope.core.request.measure import Measure
from foldscope.core.request.measurement import Measurement


class RequestBars:
    """What each request's bar needs, heard one request at a time: its stable segment, framing and thinking, and its
    categories summed as composition.summed_figures sums Measure.parts_of(m, head=0). Held small (a run of requests
    shares its category names; the figures in arrays): a 50k session has tens of thousands of requests.

    Heard on the count's critical path, so each request costs what changed: a request's view holds nearly all of the
    one before (the counter's `kept` leading parts are the same objects, so the same blocks and the same tokens), so
    only the blocks it did not keep are read, the ones that left taken out of their categories and the new ones added.
    Summed by block, not by message: a category's tokens are its blocks' and its messages those with a block in the
    view; and its place is where it first appears in the view, since a category that keeps a message keeps its first
    block (the kept blocks lead the view) and one left with none is dropped before the new blocks join."""

    def __init__(self, measure: Measure) -> None:
        self.measure = measure
        self.facts = MessageFacts(remember=False)  # a message's facts are kept while it is in the view (_joined)
        self._serial: int | None = None  # the measurement heard last (its counter serial), None before any
        self._marked: dict[int, Any] = {}  # its marks by block
        self._owners: list[Message] = []  # each block's message
        self._bodies: list[int] = []  # each block's own tokens
        self._total = 0  # the blocks' own tokens
        self._blocks_of: dict[Message, int] = {}  # how many blocks each message has (a Message hashes by identity)
        self._joined: dict[Message, tuple[list[int], int]] = {}  # each message's category cell and characters of thinking
        self._cats: dict[str, list[int]] = {}  # each category's [tokens, messages], in order of first appearance
        self._thinking = 0
        self._heads: list[tuple[int, int, int, int]] = []  # system, tools, framing, characters of thinking
        self._names: list[tuple[str, ...]] = []
        self._figures: list[array] = []  # each category's tokens and messages, in the order of its names

    def kept(self, m: Measurement) -> int:
        """How many leading blocks of `m` are the last heard measurement's, with the same marks."""
        if self._serial is None or m.since != self._serial or m.kept < 1:
            return 0
        kept = min(m.kept - 1, len(self._owners))  # `kept` counts the head part, then the blocks
        marked, before = m.laid.marked, self._marked
        if (marked or before) and {i: v for i, v in marked.items() if i < kept} != {i: v for i, v in before.items() if i < kept}:
            return 0
        return kept

    def hear(self, m: Measurement) -> None:
        """The next request's measurement, read before the counter measures on."""
        kept = self.kept(m)
        owners, bodies = self.measure.blocks_of(m, kept)
        self._serial, self._marked = m.serial, dict(m.laid.marked)
        # The counter lays its view's last blocks out again (a mark moves to the end), mostly the same block with the
        # same tokens: those stay, not taken out and their message's category worked out again.
        same, before, counted = 0, self._owners, self._bodies
        for owner, body in zip(owners, bodies):
            at = kept + same
            if at >= len(before) or before[at] is not owner or counted[at] != body:
                break
            same += 1
        if same:
            kept, owners, bodies = kept + same, owners[same:], bodies[same:]
        if kept < len(self._owners):
            self._left(kept)
        self._join(owners, bodies)
        system, tools = self.measure.head_of(m)
        cats = self._cats
        names = (HEAD, *cats)
        if self._names and self._names[-1] == names:
            names = self._names[-1]
        figures = array("q", [system + tools, 0, *chain.from_iterable(cats.values())])
        self._heads.append((system, tools, m.count - tools - system - self._total, self._thinking))
        self._names.append(names)
        self._figures.append(figures)

    def _left(self, kept: int) -> None:
        """The blocks after the first `kept` leave the view: out of their categories, a category left with no message
        dropped."""
        counts, joined = self._blocks_of, self._joined
        for owner, body in zip(self._owners[kept:], self._bodies[kept:]):
            cell, chars = joined[owner]
            cell[0] -= body
            self._total -= body
            n = counts[owner] - 1
            if n:
                counts[owner] = n
            else:
                del counts[owner], joined[owner]
                cell[1] -= 1
                self._thinking -= chars
        del self._owners[kept:], self._bodies[kept:]
        self._cats = {name: cell for name, cell in self._cats.items() if cell[1]}

    def _join(self, owners: list[Message], bodies: list[int]) -> None:
        """New blocks at the view's end: into their message's category (a category new to the view goes last)."""
        counts, joined, cats, of = self._blocks_of, self._joined, self._cats, self.facts.of
        for owner, body in zip(owners, bodies):
            n = counts.get(owner)
            if n is None:
                counts[owner] = 1
                _, _, name, chars = of(owner)
                cell = cats.get(name)
                if cell is None:
                    cell = cats[name] = [0, 0]
                cell[1] += 1
                joined[owner] = (cell, chars)
                self._thinking += chars
            else:
                counts[owner] = n + 1
                cell = joined[owner][0]
            cell[0] += body
            self._total += body
        self._owners += owners
        self._bodies += bodies

    def __len__(self) -> int:
        return len(self._heads)

    def heard_all(self) -> None:
        """The count is over: the last view the categories went on from is let go (the bars hold their figures)."""
        self._owners, self._bodies, self._blocks_of, self._joined, self._cats = [], [], {}, {}, {}
        self._serial, self._marked, self._total, self._thinking = None, {}, 0, 0

    def heard(self, k: int) -> tuple[Parts, Summed]:
        """Request k's parts (its own unseen head, no messages) and its categories, as request_composition takes them."""
        system, tools, framing, thinking = self._heads[k]
        figures = self._figures[k]
        totals = {name: [figures[2 * i], figures[2 * i + 1]] for i, name in enumerate(self._names[k])}
        return Parts(system, tools, self.measure.request(k).unseen_head, (), framing), (totals, thinking)
