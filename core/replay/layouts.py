"""The replay's view of the one Measure: each compiled request laid out as cache blocks (Layouts), and its marks."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from itertools import chain, compress, count, islice
from operator import is_not
from typing import Any, NamedTuple

from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Message
from foldscope.core.model.shared_start import Shared, since
from foldscope.core.replay.cache_model import Layout, Mark
from foldscope.core.replay.strategies import Arrival, arrivals, recorded_views
from foldscope.core.request.count import Counter, Measurement, estimate
from foldscope.core.request.estimators import ADR, check_estimator
from foldscope.core.request.first_round import included_ids, included_round
from foldscope.core.request.marks import SEARCH, replay_marks, replay_places
from foldscope.core.request.measure import Measure
from foldscope.core.request.tokens import count_text
from foldscope.core.request.trace import TraceReport, holds_no_head, unseen_head

MESSAGE_OVERHEAD = 8  # the JSON framing a text block costs beyond its text
LOOKBACK = 20  # blocks a provider looks back from a mark for a hit (ADR-0127)


HIDDEN_HEAD = ("hidden-head",)  # the key of the block that stands for what the file does not hold


def with_hidden_head(keys: Sequence[Any], ends: Sequence[int], head_end: int) -> tuple[tuple, tuple]:
    """A request's blocks behind one hidden head block ending at `head_end` tokens: the system prompt and
    tools every request carried that the file does not hold (core.request.trace.unseen_head). Its key is a tuple,
    so the stable mark goes on it. Replay and the cache check (core.replay.cache_check) both lay requests out so."""
    if head_end < 1:
        return tuple(keys), tuple(ends)
    return (HIDDEN_HEAD, *keys), (head_end, *ends)


class _Laid(NamedTuple):
    """The last layout: its measurement's serial and parts, its keys and ends (hidden head included, as the Layout
    holds them), the counted tokens to each part's end, where its notes and protected members are (part indices),
    whether a hidden head leads it, and its head part's key. The three lists are the Layouts' own, cut and grown in
    place by the next layout."""

    serial: int
    keys: Shared[Any]
    ends: Shared[int]
    notes: list[int]
    members: list[int]
    totals: list[int]
    parts: Sequence[Any]
    shift: int
    head_key: Any


def kept_parts(serial: int, parts: Sequence[Any], head_key: Any, m: Measurement, key: Callable[[Measurement, int, Any], Any]) -> int:
    """How many leading parts of measurement `m` are those of the one laid out before (`serial`, its `parts` and its
    head's key): the counter's own `kept` when it laid `m` out from that one, else found by identity (the counter
    may have stepped from another view in between, as the band's estimate of the view before its commit). A part
    that is the same object has the same message and tokens, so its block's key and end are the same; the head's part
    may be made afresh (the counter keeps it only from a view of the same head and system at the same rate), so it is
    kept when its key and tokens are."""
    if m.since == serial and m.since >= 0:
        return m.kept
    if not parts or not m.parts:
        return 0
    head, old_head = m.parts[0], parts[0]
    if head.tokens != old_head.tokens or key(m, 0, head) != head_key:
        return 0
    n = min(len(parts), len(m.parts))
    # a C-level walk over both from the second part: what changed costs the walk, not a Python step per part
    return next(compress(count(1), map(is_not, islice(parts, 1, n), islice(m.parts, 1, n))), n)


def recorded_head(measure: Measure, report: TraceReport | None = None) -> int:
    """The unseen head for a session whose usage was reported: the one kept with it, else measured as
    core.request.trace does (the smallest gap between reported input and the recorded view's count).
    With the measure's own trace `report`, the counts it already made are read from it (recorded_counts)."""
    session = measure.session
    if not holds_no_head(session) or not any(r.usage for r in session.trace):
        return 0
    if session.unseen_head:
        return session.unseen_head
    if report is not None:
        counted = recorded_counts(measure, report)
    else:
        counted = [measure.count(view) for view in recorded_views(session)]
    return unseen_head(session, counted, session.trace)


def recorded_counts(measure: Measure, report: TraceReport) -> list[int]:
    """Each recorded request's count as measure.count gives it, read from the measure's trace where that request
    compiled with the first round the measure compiles every view with (the trace's decision, or none while
    caching is off): only a request before the decision, which the trace compiled without it, is counted again."""
    want = included_round(report.decision) if measure.policy.caching else None
    return [row.own_count if row.first_round == want else measure.count(measure.request_messages(k)) for k, row in enumerate(report.rows)]


class Layouts:
    """The replay's view of the one Measure (core.request.measure): each compiled request cut into one cache
    block per message, for the cache model.

    A block's key is its message id (the tools and system head is one block keyed by the system ids),
    its tokens are the message's part of the count; every figure is counted times the scale. `head`
    is the unseen head (None: measured when the session reported usage, see recorded_head): it joins
    every estimate and leads every layout as one hidden block. A view that extends the one measured
    before costs about its new blocks: the counter re-plans from its last turn, and the layout keeps
    the keys and ends of the parts the counter kept.
    """

    def __init__(self, measure: Measure, head: int | None = None, scale: float | None = None, estimator: str = ADR) -> None:
        self.measure = measure
        self.estimator = check_estimator(estimator)  # what the adr fold decides on (core.request.estimators)
        self.record = measure.session.record
        report = None
        if scale is None:
            # The scale the session's trace calibrates: the one `requests`, `fold` and the GUI measure with. The
            # replay reads its counts, scales and estimates, never its predicted inputs (the `predicted` estimator
            # reads the measure's whole trace itself): the predictions' pass is left out.
            report = measure.calibrate(prefix=False, predict=False)
        self.scale = measure.scale if scale is None else scale
        self.protected = included_ids(measure.session)
        self._laid: _Laid | None = None  # the last layout
        self._estimated: tuple[Sequence[Message], Measurement] | None = None  # the view estimate() measured last
        self._alone: dict[str, float] = {}
        self.head = recorded_head(measure, report) if head is None else head
        # Where the compaction strategy compacts, when an agent's own knob puts it (tune --compact-at); None: at the
        # policy's line of the ceiling.
        self.compact_point: int | None = None
        self._arrivals: tuple[Any, list[Arrival]] | None = None  # (the session, its arrivals), made once

    def arrivals(self, session: Any) -> list[Arrival]:
        """What each recorded request adds to every strategy's input (core.replay.strategies.arrivals), made once for
        every strategy run on these layouts; the lab makes it before it forks, so no child makes it again."""
        if self._arrivals is None or self._arrivals[0] is not session:
            self._arrivals = (session, arrivals(session))
        return self._arrivals[1]

    @property
    def ceiling(self) -> int | None:
        return self.measure.ceiling

    @property
    def policy(self) -> Policy:
        return self.measure.policy

    @property
    def counter(self) -> Counter:
        return self.measure.counter

    def measurement(self, view: Sequence[Message]) -> Measurement:
        return self.measure.measurement(view)

    def _key(self, m: Measurement, i: int, part) -> Any:
        if i == 0:
            system = m.laid.system if m.laid is not None else tuple(p.message for p in m.parts[:1] if p.message)
            return ("head", tuple(x.id for x in system if x.kind == "system"))
        return part.message.id

    def blocks(self, view: Sequence[Message]) -> list[tuple[Any, int]]:
        """(key, counted tokens) per block of the compiled request, in order (the hidden head not among them)."""
        m = self.measurement(view)
        return [(self._key(m, i, part), part.tokens) for i, part in enumerate(m.parts)]

    def estimate(self, view: Sequence[Message], over: Measure | None = None) -> int:
        """A view's estimate at the replay's scale and unseen head; `over` as for layout()."""
        if not view:
            return 0
        if over is None:
            # Measure.estimate's sum, from the measurement kept for the layout that mostly follows (band and
            # compaction estimate each view before they send it): laid reads it without asking the Measure again.
            m = self.measurement(view)
            # Kept only for a Shared, which never changes: a list grown in place after its estimate is another view.
            self._estimated = (view, m) if isinstance(view, Shared) else None
            return estimate(m.count + self.head, self.scale)
        return over.estimate(view, head=self.head, scale=self.scale, decide=False)

    def sizes(self, view: Sequence[Message]) -> dict[str, float]:
        """Each message's part of the estimate; the head's goes to the first system message."""
        out: dict[str, float] = {}
        for part in self.measurement(view).parts:
            if part.message is not None:
                out[part.message.id] = out.get(part.message.id, 0) + part.tokens * self.scale
        return out

    def alone(self, message: Message) -> float:
        """A message's estimate on its own, for a note or summary not yet in any view."""
        n = self._alone.get(message.id)
        if n is None:
            n = self._alone[message.id] = (count_text(message.text) + MESSAGE_OVERHEAD) * self.scale
        return n

    def layout(self, view: Sequence[Message], marks: tuple[Mark, ...], at: float | None, over: Measure | None = None) -> Layout:
        """The request's blocks, hidden head first, with the token end of each; keys and ends of the parts
        the counter kept from the previous layout's measurement are taken from it. `over`: the measure the view
        compiles under when not this one's (adr's fold measures its own working session, with the first round
        its requests decided): the view is counted as the fold counted it, so the layout reads the fold's."""
        keys, ends = self.laid(view, over)
        return Layout(keys, ends, marks, at)

    def laid(self, view: Sequence[Message], over: Measure | None = None) -> tuple[Shared[Any], Shared[int]]:
        """layout()'s keys and ends, for a caller that places the marks on them before it makes the one Layout."""
        if over is not None:
            m = over.measurement(view, decide=False)
        elif self._estimated is not None and self._estimated[0] is view:
            # The view just estimated: its measurement, the Measure not asked again. Nothing decides the first round
            # on this Measure's session during a run (adr's fold decides on its own working session, which `over`
            # measures), so the options the Measure would check are the estimate's.
            m = self._estimated[1]
        else:
            m = self.measurement(view)
        self._estimated = None  # read once: the next layout is of another view
        scale, protected = self.scale, self.protected
        hidden = estimate(self.head, scale) if self.head else 0
        shift = 1 if hidden >= 1 else 0  # the hidden head's block leads the keys and ends (with_hidden_head)
        prev = self._laid
        keep = 0
        if prev is not None and prev.shift == shift:
            # kept_parts, its commonest answer first: the counter laid `m` out from the measurement laid just before
            keep = m.kept if m.since == prev.serial and m.since >= 0 else kept_parts(prev.serial, prev.parts, prev.head_key, m, self._key)
        if prev is not None and keep:
            # The kept parts' notes and members (sorted part indices) and running totals, cut where the kept parts
            # end: the last layout's own lists, cut and grown in place (only the next layout reads them).
            notes, members, totals = prev.notes, prev.members, prev.totals
            if notes and notes[-1] >= keep:
                del notes[bisect_left(notes, keep) :]
            if members and members[-1] >= keep:
                del members[bisect_left(members, keep) :]
            del totals[keep:]
            total = totals[-1]  # counted tokens to the end of the last kept block, the head's included
            head_key = prev.head_key
        else:
            notes, members, totals = [], [], []
            total = self.head
            head_key = None
        keys: list[Any] = []
        ends: list[int] = []
        parts = since(m.parts, keep)  # the parts are shared: read from `keep`, no copy
        if not keep:
            head = next(parts, None)
            if head is not None:
                total += head.tokens
                totals.append(total)
                ends.append(estimate(total, scale))
                head_key = self._key(m, 0, head)
                keys.append(head_key)
        for i, part in enumerate(parts, keep or 1):
            total += part.tokens
            totals.append(total)
            ends.append(estimate(total, scale))
            message = part.message
            assert message is not None  # only the head (part 0) may have no message
            key = message.id  # _key's, without the call: a message's block is keyed by its id
            keys.append(key)
            if part.kind == "note":
                notes.append(i)
            if key in protected:
                members.append(i)
        if prev is not None and keep:  # the kept blocks' keys and ends are shared with the layout before, not copied
            at = keep + shift
            laid_keys, laid_ends = prev.keys.grown(at, keys), prev.ends.grown(at, ends)
        else:
            laid_keys = Shared([HIDDEN_HEAD, *keys] if shift else keys)
            laid_ends = Shared([hidden, *ends] if shift else ends)
        self._laid = _Laid(m.serial, laid_keys, laid_ends, notes, members, totals, m.parts, shift, head_key)
        return laid_keys, laid_ends

    def marks(self, previous_tail: Any) -> tuple[Mark, ...]:
        """place_marks' marks on the layout laid just before, for the session's protected ids: its notes, members and
        `previous_tail`'s place read from what the layout keeps (never searched), each Mark made once (_MARKS)."""
        laid = self._laid
        assert laid is not None, "marks() reads the layout laid just before"
        shift, notes, members = laid.shift, laid.notes, laid.members
        n = len(laid.keys)
        if not n:
            return ()
        first = HIDDEN_HEAD if shift else laid.head_key  # the first block's key, as laid.keys[0], without the Python index
        places = replay_places(
            n,
            isinstance(first, tuple),
            None if previous_tail is None else self.position(previous_tail),
            notes[-1] + shift if notes else None,
            members[-1] + shift if members else None,
            LOOKBACK,
        )
        return tuple([_MARKS.get((b, lifetime)) or _mark(b, lifetime) for b, lifetime, _ in places])

    def position(self, key: Any) -> int | None:
        """Where block `key` is in the last layout (hidden head counted), None when it is not there. Searched from the
        end a chunk at a time, in C (a view holds a message once, so keys are unique): the key marks() asks for, the
        last request's tail, is among the last few blocks, where keeping every key's place in a dict cost a request
        the re-laid blocks' removals and additions."""
        laid = self._laid
        if laid is None:
            return None
        keys = laid.keys
        end = len(keys)  # where the chunk searched ends
        for chunk in chain((keys.last,), reversed(keys.chunks)):  # the last, partial chunk, then the whole ones, newest first
            try:
                return end - 1 - chunk[::-1].index(key)  # each chunk read from its end
            except ValueError:
                end -= len(chunk)
        return None


def place_marks(
    keys: Sequence[Any],
    kinds: Mapping[str, str],
    previous_tail: Any,
    protected: frozenset[str],
    *,
    notes: Sequence[int] | None = None,
    members: Sequence[int] | None = None,
    tail_at: int | None | object = SEARCH,
) -> tuple[Mark, ...]:
    """ADR-0127's marks on a request's blocks, as core.request.marks decides them for every request (one place)."""
    found = replay_marks(keys, kinds, previous_tail, protected, LOOKBACK, notes=notes, members=members, tail_at=tail_at)
    return tuple(_MARKS.get((m.block, m.lifetime)) or _mark(m.block, m.lifetime) for m in found)


# Each mark made once: a Mark is frozen, so one (block, lifetime) is one object for every request that places it, where
# a request a strategy made its two to four afresh (a few thousand blocks, two lifetimes: the table stays small).
_MARKS: dict[tuple[int, str], Mark] = {}


def _mark(block: int, lifetime: str) -> Mark:
    made = _MARKS[block, lifetime] = Mark(block, lifetime)
    return made


def model_name(measure: Measure) -> str | None:
    """The model the replay prices and caches as (the Measure's, without a provider prefix)."""
    name = measure.model
    return name.rsplit("/", 1)[-1] if name else None
