"""Each recorded request's bar as the trace's count measured it: the report's every-request section composes its bars
from what its counting pass heard (Measure.calibrate's on_measured), not by measuring every request again (issue 48)."""

from __future__ import annotations

from array import array

from foldscope.core.readout.composition import MessageFacts, Summed, summed_categories
from foldscope.core.request.measure import Composition as Parts
from foldscope.core.request.measure import Measure
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
        self._heads: list[tuple[int, int, int, int]] = []  # system, tools, framing, characters of thinking
        self._names: list[tuple[str, ...]] = []
        self._figures: list[array] = []  # each category's tokens and messages, in the order of its names

    def hear(self, m: Measurement) -> None:
        """The next request's measurement, read before the counter measures on."""
        parts = self.measure.parts_of(m, head=0)
        totals, thinking = summed_categories(parts, self.facts)
        names = tuple(totals)
        if self._names and self._names[-1] == names:
            names = self._names[-1]
        self._heads.append((parts.system, parts.tools, parts.framing, thinking))
        self._names.append(names)
        self._figures.append(array("q", [n for total in totals.values() for n in total]))

    def heard_all(self) -> None:
        """The count is over: the last view the categories went on from is let go (the bars hold their figures)."""
        self.facts = MessageFacts(remember=False)

    def __len__(self) -> int:
        return len(self._heads)

    def heard(self, k: int) -> tuple[Parts, Summed]:
        """Request k's parts (its own unseen head, no messages) and its categories, as request_composition takes them."""
        system, tools, framing, thinking = self._heads[k]
        figures = self._figures[k]
        totals = {name: [figures[2 * i], figures[2 * i + 1]] for i, name in enumerate(self._names[k])}
        return Parts(system, tools, self.measure.request(k).unseen_head, (), framing), (totals, thinking)
