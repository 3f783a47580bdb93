"""A trace's counting pass kept to go on from: a session read further measures only the requests it gained.

The status line (core.readout.status) measures one growing file after each new line. measure_trace's counting
pass walks every request (its layout, prefix meter, prediction count and cache pass): about 0.15 ms a request,
all of it spent again on what was measured a line ago. With a TraceResume, measure_trace keeps the pass's state
when it ends (before anything after it changes that state: the next request's prediction count is made on a copy
kept aside) and, next time, goes on from the first request it did not measure, provided every request it measured
is the same request (index, view, model) under the same policy, tools and options, and the last one's messages are
the very objects the record holds now. Anything else measures from the start. What follows the pass (unseen heads,
predictions, scales, rows) is made afresh each time from the pass's figures, so every figure is the one a full
measure gives (tests/core/cli/test_statusline.py compares them at each line of a growing session). The predictions
go on too: the predictor after the last request measured, its rows and stretches, kept when every request's
reported input is the one it was fed (else they are made again from the first request)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass
class Kept:
    """The counting pass after its last request: what measure_trace goes on from."""

    key: tuple  # the session's format, the policy, the tools and the options measured under
    requests: list[tuple]  # each request measured: (index, view length, last id, model)
    last_view: Sequence[str]  # the last request's view (its ids)
    messages: Any  # the last request's messages (core.request.trace.trace_views' last)
    counts: list
    parted: list
    rounds: list
    frontiers: list
    decision: Any
    counting: Any  # the prediction counts (a copy taken when the pass ended), or None
    meter: Any  # the prefix meter, or None
    predicted: Any = None  # the predictions after the last request (core.request.trace_measure.Carried), set once made

    @property
    def start(self) -> int:
        return len(self.requests)


class TraceResume:
    """Held by whoever measures one growing session again and again; measure_trace fills and reads it.

    `cache_pass(make)`: the cache causes' pass riding on the counting pass (core.forensics.trace_pass.MeasuredPass)
    is kept with it, so it goes on too; `resumed` says how many requests the last measure did not measure again."""

    def __init__(self) -> None:
        self.kept: Kept | None = None
        self.steps: Any = None  # the cache pass kept with the counting pass
        self._make_steps: Callable[[], Any] | None = None
        self.resumed = 0
        self.causes: Any = None  # the cache causes' attribution kept by its reader (core.forensics.causes.CausesCarry)

    def cache_pass(self, session: Any, make: Callable[[], Any]) -> Any:
        """The cache pass to ride on the next measure: the kept one (its session the one read now) while a kept
        counting pass may go on, else a new one (`make()`); measure_trace makes it afresh if it cannot go on."""
        self._make_steps = make
        if self.kept is None or self.steps is None:
            self.steps = make()
        else:
            self.steps.session = session
        return self.steps

    def take(self, key: tuple, trace: Sequence[Any], models: Sequence[Any], record: Any) -> Kept | None:
        """The kept pass when it may go on over `trace` (else None, the cache pass made afresh in place)."""
        kept, self.kept, self.resumed = self.kept, None, 0
        if kept is not None and kept.key == key and _same_requests(kept, trace, models) and _same_messages(kept, record):
            self.resumed = kept.start
            return kept
        if self.steps is not None and self._make_steps is not None:
            fresh = self._make_steps()
            self.steps.__dict__.clear()
            self.steps.__dict__.update(fresh.__dict__)  # the object the caller holds, started again
        return None

    def keep(self, kept: Kept) -> None:
        self.kept = kept


def request_key(request: Any, model: Any) -> tuple:
    view = request.view
    return (request.index, len(view), view[-1] if len(view) else None, model)


def _same_requests(kept: Kept, trace: Sequence[Any], models: Sequence[Any]) -> bool:
    n = kept.start
    if len(trace) < n or n == 0:
        return False
    if any(request_key(trace[k], models[k]) != kept.requests[k] for k in range(n)):
        return False
    return tuple(trace[n - 1].view) == tuple(kept.last_view)


def _same_messages(kept: Kept, record: Any) -> bool:
    """Whether the last request's messages are the record's own objects (a reader makes a message that was still
    being written afresh: one such in a kept view would be measured as it was)."""
    found = record.found(kept.last_view)
    return len(found) == len(kept.messages) and all(a is b for a, b in zip(found, kept.messages))
