"""The Measure: one place a session's requests are compiled and sized under one policy.

Built from a session and a policy, it owns what every size depends on: the counter (memoised over the
session's messages), the tools the file holds, the protected first round, the scale and the unseen head
(the system prompt and tools a Claude Code, Codex or pi file does not hold). It answers for any view
(the active view, a fold's candidate) and for any recorded request: the compiled payload, its count, its
parts (adding up exactly to the count), the estimate under the policy, whether it fits, its marks, and
where it diverges from the request before. The fold, the trace, replay, the CLI and every panel take it,
so the same request shows the same size everywhere.

`headline(k)` is the size a recorded request is shown with: its predicted input (core.request.predict), the
best forecast of what the provider reported; `estimate` stays the ADR's, for the ceiling and the fold.
`scale_for(model)` is the scale a model's requests run at (each model's own).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from foldscope.core.model.policy import Policy, Resolution, resolve_ceiling
from foldscope.core.model.running_sum import common_start
from foldscope.core.model.session import Message, Request, Session
from foldscope.core.model.shared_start import Shared, since
from foldscope.core.request import tokens
from foldscope.core.request.compile import IncludedRound, compile_request, make_plan, session_tools
from foldscope.core.request.count import Counter, Measurement, estimate
from foldscope.core.request.first_round import decide_first_round, included_round, read_decision
from foldscope.core.request.marks import MarkPosition, mark_text
from foldscope.core.request.prefix import Compiled, Divergence, compile_for_prefix, divergence
from foldscope.core.request.scale import stored_scale
from foldscope.core.request.trace import Refusal, RequestRow, TraceReport, build_trace, refusal_for, trace_views, use_unseen_rate
from foldscope.core.request.trace_measure import measure_trace
from foldscope.core.request.trace_resume import TraceResume

_message_of = attrgetter("message")


def by_message(owners: Sequence[Message], bodies: Sequence[int]) -> tuple[tuple[Message, int], ...]:
    """Each message's body tokens summed over its blocks, in the order the messages first appear."""
    by_message: dict[int, int] = {}
    order: list[Message] = []
    for message, body in zip(owners, bodies):
        assert message is not None  # only the head (part 0) has no message
        if id(message) not in by_message:
            by_message[id(message)] = 0
            order.append(message)
        by_message[id(message)] += body
    return tuple((message, by_message[id(message)]) for message in order)


_MARK_TOKENS: dict[str, int] = {}


def _mark_tokens(lifetime: str) -> int:
    """A mark's own tokens (core.request.marks.mark_text), counted once per lifetime."""
    n = _MARK_TOKENS.get(lifetime)
    if n is None:
        n = _MARK_TOKENS[lifetime] = tokens.count_text(mark_text(lifetime))
    return n


def refused(size: int, ceiling: int | None) -> bool:
    """The one ceiling rule (ADR-0130 D4): a request at or past the ceiling is refused; no ceiling refuses nothing.
    The trace's refusal, the fold's prepare and resume loop and restore's admission check all ask this."""
    return ceiling is not None and size >= ceiling


@dataclass(frozen=True)
class Composition:
    """A request's count in parts that add up to it exactly: the stable segment (system, tools), the unseen
    head, each message's blocks, and the framing (the JSON punctuation between blocks and around the turns, and
    the cache marks: parameters of the request, not a message's content, so a message's part is the same with
    caching on or off)."""

    system: int
    tools: int
    unseen_head: int
    messages: tuple[tuple[Message, int], ...]  # each view message with the tokens of its blocks, in view order
    framing: int

    @property
    def total(self) -> int:
        return self.system + self.tools + self.unseen_head + self.framing + sum(n for _, n in self.messages)


def compiles_alike(a: Policy, b: Policy) -> bool:
    """Whether two policies compile every recorded request to the same payload and scale it alike: the same
    result bound, caching and model (the ceiling, line and target decide on the count; they do not change it)."""
    return (a.tool_result_max_chars, a.caching, a.model) == (b.tool_result_max_chars, b.caching, b.model)


class Measure:
    """A session's requests under one policy: compiled, counted, scaled and checked against one ceiling."""

    def __init__(
        self,
        session: Session,
        policy: Policy | None = None,
        *,
        per_call: int | str | None = None,
        counter: Counter | None = None,
        threads: int | None = None,
        resolution: Resolution | None = None,
    ) -> None:
        self.session = session
        self.policy = policy or Policy()
        self.model = self.policy.model or session.model or next((r.model for r in session.trace if r.model), None)
        self.per_call = per_call
        self.resolution = resolution or resolve_ceiling(self.policy, self.model, per_call)
        self.counter = counter or Counter(threads)
        use_unseen_rate(session, self.counter)  # a sanitised file's unseen text counts at its own rate (core.request.unseen_text)
        self.tools = session_tools(session)
        self._trace: TraceReport | None = None
        self._requests: list[Request] | None = None
        self._last: tuple[Sequence[Message], tuple, Measurement] | None = None
        self._heads: dict[str, tuple[int, int]] = {}  # head text -> (tools tokens, system tokens)
        # (scale, per-model scales) another Measure's trace calibrated, held until this one measures its own
        self._adopted: tuple[float, dict[str | None, float]] | None = None

    def over(self, session: Session) -> Measure:
        """The same policy, ceiling and counter over another session (a working copy, a branch): the fold's
        preview and what-if measure their copies so, and the counter's memo is shared."""
        return Measure(session, self.policy, per_call=self.per_call, counter=self.counter, resolution=self.resolution)

    def under(self, policy: Policy) -> Measure:
        """The same session and counter under another policy. When that policy compiles the recorded requests as
        this one does (only the ceiling, line or target moved), the scales this one's trace calibrated hold
        there too, without measuring the trace again; otherwise, when this one is calibrated, the new one
        measures its own trace (its counts, and so its scale, are another policy's)."""
        measure = Measure(self.session, policy, per_call=self.per_call, counter=self.counter)
        scales = (self._trace.scale, dict(self._trace.scales)) if self._trace is not None else self._adopted
        if scales is not None:
            if compiles_alike(self.policy, measure.policy):
                measure._adopted = scales
            else:
                measure.calibrate(prefix=False)
        return measure

    # -- the policy's rules, in tokens --------------------------------------------------------------
    @property
    def ceiling(self) -> int | None:
        return self.resolution.ceiling

    @property
    def line_tokens(self) -> float | None:
        return None if self.ceiling is None else self.policy.fold_at * self.ceiling

    @property
    def target_tokens(self) -> float | None:
        return None if self.ceiling is None else self.policy.fold_target * self.ceiling

    def fits_size(self, size: int) -> bool:
        """Whether a request of this estimate would be sent (not refused): under the ceiling, or no ceiling."""
        return not refused(size, self.ceiling)

    # -- scale and unseen head ----------------------------------------------------------------------
    @property
    def scale(self) -> float:
        """The scale in force for the next request: the session's kept scale, raised by its trace once measured
        (calibrate); the session's own scale is left as it is (a fold's summariser may raise it)."""
        kept = stored_scale(self.session)
        if self._trace is None:
            return kept if self._adopted is None else max(kept, self._adopted[0])
        return max(kept, self._trace.scale)

    def scale_for(self, model: str | None = None) -> float:
        """The scale a model's requests run at: each model's own, raised only by its own requests (the session's
        model, or no model named: the scale in force)."""
        if model is None or model == self.model:
            return self.scale
        if self._trace is None and self._adopted is not None:
            return max(1.0, self._adopted[1].get(model, 1.0))
        return max(1.0, self.trace.scales.get(model, 1.0))

    @property
    def unseen_head(self) -> int:
        """The unseen head the next request carries: its latest stretch's (set on the session by calibrate)."""
        return self.session.unseen_head

    def impossible_ceiling(self) -> str | None:
        """Why no request can fit under the ceiling, when none can: at or below the unseen head (the system prompt
        and tools every request carries that the file does not hold), times the scale. None when one can."""
        ceiling, head = self.ceiling, self.unseen_head
        if ceiling is None or not head or estimate(head, self.scale) < ceiling:
            return None
        return (
            f"the ceiling {ceiling:,} is at or below the unseen head ({head:,} tokens every request carries that "
            f"the file does not hold, x scale {self.scale:.3f}): no request can fit under it"
        )

    # -- any view -----------------------------------------------------------------------------------
    def messages(self, view: Sequence[str]) -> list[Message]:
        """A view of ids as the record's messages (ids the record lacks left out)."""
        return self.session.record.found(view)

    def first_round(self, messages: Sequence[Message], *, decide: bool = True) -> IncludedRound | None:
        """The included first round this view compiles with: the stored decision, else (with `decide`) the one
        the request's own compile would make, without writing the session. The fold's estimates read the
        stored decision only (`decide=False`): Amendment 4 lets only a request's compile make it."""
        if not self.policy.caching:
            return None
        stored = read_decision(self.session)
        if stored is not None or not decide:
            return included_round(stored)
        if self._trace is not None and self._trace.decision is not None:
            return included_round(self._trace.decision)  # as the recorded requests decided it, at their scale
        return included_round(decide_first_round(self.session, self.policy, self.counter, view=messages, store=False))

    def options(
        self, messages: Sequence[Message], *, decide: bool = True, first_round: IncludedRound | None | str = "view"
    ) -> dict[str, Any]:
        """The keyword arguments compile_request, make_plan and Counter take for this view under the policy."""
        if first_round == "view":
            first_round = self.first_round(messages, decide=decide)
        return {"record": self.session.record, "policy": self.policy, "tools": self.tools, "first_round": first_round}

    def payload(self, messages: Sequence[Message], **how: Any) -> dict[str, Any]:
        """The compiled request: deterministic bytes in the Anthropic Messages shape."""
        return compile_request(messages, **self.options(messages, **how))

    def measurement(self, messages: Sequence[Message], **how: Any) -> Measurement:
        """The counter's measurement of the compiled view (the last one is kept: a caller asking twice pays once)."""
        options = self.options(messages, **how)
        key = (options["first_round"],)
        last = self._last
        if (
            last is not None
            and last[1] == key
            and (last[0] is messages or len(last[0]) == len(messages) == common_start(last[0], messages))
        ):
            return last[2]
        m = self.counter.measure(messages, **options)
        self._last = (messages if isinstance(messages, Shared) else list(messages), key, m)  # a Shared never changes
        return m

    def count(self, messages: Sequence[Message], **how: Any) -> int:
        """The exact o200k_base count of the compiled view, without the unseen head."""
        return self.measurement(messages, **how).count

    def count_with_head(self, messages: Sequence[Message], *, head: int | None = None, **how: Any) -> int:
        """The count with the unseen head (default: the next request's)."""
        return self.count(messages, **how) + (self.unseen_head if head is None else head)

    def estimate(self, messages: Sequence[Message], *, scale: float | None = None, head: int | None = None, **how: Any) -> int:
        """The estimate: the count with the unseen head, times the scale (default: the one in force)."""
        return estimate(self.count_with_head(messages, head=head, **how), self.scale if scale is None else scale)

    def fits(self, messages: Sequence[Message], **how: Any) -> bool:
        """The ceiling's admission check for a view: its request would not be refused."""
        return self.fits_size(self.estimate(messages, **how))

    def refusal(self, messages: Sequence[Message], **how: Any) -> Refusal | None:
        """A Refusal with the three largest parts when the view's request is at or past the ceiling."""
        m = self.measurement(messages, **how)
        return refusal_for(m, self.ceiling, self.scale, self.session.record, None, self.unseen_head)

    def parts(self, messages: Sequence[Message], *, head: int | None = None, **how: Any) -> Composition:
        """The view's count cut into parts that add up to `count_with_head(messages)` exactly."""
        return self.parts_of(self.measurement(messages, **how), head=head)

    def parts_of(self, m: Measurement, *, head: int | None = None) -> Composition:
        """A measurement's parts, as `parts`: this Measure's counter's latest, or the trace's counting pass's as its
        `on_measured` hears it (the report's bars, core.readout.report_bars), read before the counter measures on."""
        system_n, tools_n = self.head_of(m)
        owners, bodies = self.blocks_of(m)
        if len(set(map(id, owners))) == len(owners):
            listed: tuple[tuple[Message, int], ...] = tuple(zip(owners, bodies))  # one block a message: no sums
        else:
            listed = by_message(owners, bodies)
        framing = m.count - tools_n - system_n - sum(bodies)
        return Composition(system_n, tools_n, self.unseen_head if head is None else head, listed, framing)

    def head_of(self, m: Measurement) -> tuple[int, int]:
        """A measurement's (system, tools) tokens, as parts_of splits them (the stable mark's own tokens are framing)."""
        laid = m.laid
        tools_n, system_n = self._head_split(laid.head[1])
        system_n += self.counter.system_extra(laid.system)  # the system messages' unseen parts (core.request.unseen_text)
        if laid.stable is not None:
            if system_n:
                system_n -= _mark_tokens(laid.stable)
            else:
                tools_n -= _mark_tokens(laid.stable)
        return system_n, tools_n

    def blocks_of(self, m: Measurement, start: int = 0) -> tuple[list[Message], list[int]]:
        """Each block's message and own tokens, as parts_of reads them (a mark's own tokens are framing), from block
        `start` on: a caller that kept the blocks before (the report's bars) reads only what is new."""
        bodies = self.counter.body_tokens(m, start)
        for i, (lifetime, _) in m.laid.marked.items():  # each mark's own tokens go to the framing (Composition)
            if i >= start:
                bodies[i - start] -= _mark_tokens(lifetime)
        return list(map(_message_of, since(m.parts, start + 1))), bodies

    def _head_split(self, head: str) -> tuple[int, int]:
        """(tools, system) tokens of the head `{"tools":[...],"system":[...],"`: each piece ends in `,"`, a boundary
        of o200k's pre-tokenizer (core.request.count), so the two add up to the head's own count; `{"` alone
        (no tools, no system) is framing."""
        found = self._heads.get(head)
        if found is None:
            cut = head.rfind(',"system":[') + 2 if head.startswith('{"tools":') else 0
            if cut < 2:  # no system blocks after the tools: the head is the tools alone, or the system alone
                cut = len(head) if head.startswith('{"tools":') else 0
            tools_text, system_text = head[:cut], head[cut:]
            count = tokens.count_text
            found = (count(tools_text) if tools_text else 0, count(system_text) if system_text.startswith(('{"system"', 'system"')) else 0)
            self._heads[head] = found
        return found

    def marks(self, messages: Sequence[Message], **how: Any) -> tuple[MarkPosition, ...]:
        """Where the compiled request carries its cache marks (none while caching is off)."""
        if not self.policy.caching:
            return ()
        return make_plan(messages, **self.options(messages, **how)).marks

    def compiled(self, messages: Sequence[Message], **how: Any) -> Compiled:
        """The view compiled as core.request.prefix compares requests (marks set aside)."""
        return compile_for_prefix(messages, **self.options(messages, **how))

    def divergence(self, before: Sequence[Message], after: Sequence[Message]) -> tuple[Divergence, int]:
        """(where `after` departs from `before`, and why; the bytes of `before` compared)."""
        a = self.compiled(before)
        return divergence(a, self.compiled(after), self.session.record), len(a.data)

    # -- recorded requests --------------------------------------------------------------------------
    def calibrate(
        self,
        *,
        prefix: bool = True,
        predict: bool = True,
        on_count: Callable[[int, int, int], None] | None = None,
        on_measured: Callable[..., None] | None = None,
        resume: TraceResume | None = None,
    ) -> TraceReport:
        """Measure every recorded request once (core.request.trace_measure.measure_trace): the scale it calibrates joins
        the next request's, and the latest stretch's unseen head is kept with the session; later calls reuse it.
        `on_count(k, requests, count)` hears each request's count as the pass reaches it (progress only);
        `on_measured` each request's measurement (core.request.trace_measure.measure_trace), when the pass runs. Without
        `predict` the rows may lack their predicted input (a trace measured with it serves a call without it). `resume`:
        the counting pass goes on from the last measure of the same growing session (core.request.trace_resume)."""
        trace = self._trace
        if trace is None or (prefix and not trace.prefix) or (predict and not trace.predicted):
            report = measure_trace(
                self.session,
                self.policy,
                per_call=self.per_call,
                counter=self.counter,
                prefix=prefix,
                predict=predict or (trace is not None and trace.predicted),
                on_count=on_count,
                on_measured=on_measured,
                resume=resume,
            )
            self.session.unseen_head = report.unseen_head
            self._trace = trace = report
        return trace

    @property
    def trace(self) -> TraceReport:
        return self.calibrate()

    def partial_warning(self) -> str | None:
        """The trace's one line when the file accounts for under half of what was sent (None until it is measured)."""
        return self._trace.partial if self._trace is not None else None

    def request(self, k: int) -> RequestRow:
        """Recorded request k as measured: count, scale it ran at, estimate, reported input, refusal."""
        return self.trace.rows[k]

    @property
    def requests(self) -> list[Request]:
        """The session's recorded requests (core.request.trace.build_trace)."""
        if self._requests is None:
            self._requests = build_trace(self.session)
        return self._requests

    def request_messages(self, k: int) -> list[Message]:
        """Recorded request k's view as messages."""
        return self.messages(self.requests[k].view)

    def _request_how(self, k: int) -> dict[str, Any]:
        return {"first_round": self.request(k).first_round}

    def headline(self, k: int) -> int:
        """The size recorded request k is shown with everywhere: its predicted input (core.request.predict), the
        best forecast of what the provider reported, made from what was known before the send."""
        return self.request(k).predicted

    @property
    def next_predicted(self) -> int:
        """The next request's (the active view's) predicted input."""
        found = self.trace.next_predicted
        return found.predicted if found is not None else 0

    def request_payload(self, k: int) -> dict[str, Any]:
        return self.payload(self.request_messages(k), **self._request_how(k))

    def request_parts(self, k: int) -> Composition:
        """Request k's count in parts, its own stretch's unseen head among them; they add up to its `counted`."""
        return self.parts(self.request_messages(k), head=self.request(k).unseen_head, **self._request_how(k))

    def request_marks(self, k: int) -> tuple[MarkPosition, ...]:
        return self.marks(self.request_messages(k), **self._request_how(k))

    def request_divergence(self, k: int) -> tuple[Divergence, int] | None:
        """Where request k departs from request k-1 (None for the first request)."""
        if k < 1:
            return None
        a = self.compiled(self.request_messages(k - 1), **self._request_how(k - 1))
        b = self.compiled(self.request_messages(k), **self._request_how(k))
        return divergence(a, b, self.session.record), len(a.data)

    def recorded_views(self) -> list[Shared[Message]]:
        """Every recorded request's view as messages, in order."""
        return list(trace_views(self.session.record, self.requests))
