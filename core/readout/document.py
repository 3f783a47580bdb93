"""The opened session as the GUI reads it: the core Session plus per-message facts, built off the GUI thread."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Message, Session
from foldscope.core.readout.fold_facts import FoldRow, is_note, note_first_index
from foldscope.core.readout.free_window import free_window
from foldscope.core.readout.record_index import record_index
from foldscope.core.readout.trace_facts import RequestFacts, Rules
from foldscope.core.request.count import Counter
from foldscope.core.request.measure import Composition, Measure

if TYPE_CHECKING:
    from foldscope.core.forensics.cache_report import CacheReport
    from foldscope.core.forensics.trace_pass import MeasuredPass
    from foldscope.core.request.provider_text import PredictionCounter
    from foldscope.core.request.trace import NextRule

# A progress callback: (done, total, label); the worker's Progress.report fits.
Report = Callable[[int, int, str], None]


def _no_report(done: int, total: int, label: str = "") -> None:
    return None


_REVISIONS = itertools.count(1)


def next_revision() -> int:
    """A number no state of any document had before: a panel keyed on it never mistakes one state for another."""
    return next(_REVISIONS)


@dataclass
class Document:
    """One opened session and the facts every panel shares, indexed by full-record index.

    Nothing here decides anything about folds: it reads what the core and the file say.
    """

    session: Session
    path: str
    tokens: list[int]  # each message's size (core.readout.message_sizes): its part of the full record's count
    chars: list[int]
    view: list[str] = field(default_factory=list)  # the active view shown: now, or as it stood at a request
    view_position: dict[int, int] = field(default_factory=dict)  # record index -> position in the shown view
    out_reason: Mapping[int, str] = field(default_factory=dict)  # record index -> why it is out (OutReasons)
    library_id: int | None = None
    library_problem: str | None = None  # why the library could not take this session (LibraryError), shown in a bar
    requests: tuple[RequestFacts, ...] = ()  # per request of the trace (trace_facts.TraceFacts.requests)
    now_size: int = 0  # the estimate of the request the active view compiles to now (the ADR's, for the ceiling)
    now_predicted: int = 0  # the next request's predicted input: the size shown for it
    next_basis: NextRule | None = None  # how the next request is predicted, to predict an edited view
    context_window: int | None = None  # the model's context window (core.readout.agent_limits.context_window)
    window_source: str = ""  # where that window came from, in words: every screen that shows the window names it
    scale: float = 1.0  # the scale calibrated over the trace
    policy: Policy | None = None  # core.model.policy.Policy in force: the launch policy, one given at start, or the editor's
    unseen_head: int = 0  # the system prompt and tools a Claude Code, Codex or pi file does not hold, in tokens
    record_count: int | None = None  # the full record compiled as one request, once measured (inspect's record size)
    counter: Counter | None = None  # memoised over this session's messages
    rules: Rules | None = None  # the ceiling, line and target (trace_facts.rules_for)
    folds: tuple[FoldRow, ...] = ()  # per context_folds record and event (fold_facts.fold_rows)
    measure: Measure | None = None  # the Measure the trace was measured with: every request's size comes from it
    shown: int | None = None  # the request whose view is shown (None: now, the next request)
    # False while only the reader's output is here (first_document): no token counts, no measured trace yet;
    # the lists and the window map show the record, its blocks sized by characters and saying so.
    is_counted: bool = True
    # The first look at a large line-format file (first_part): the share of its bytes read so far; None once whole.
    read_part: float | None = None
    # The cache report (core.readout.cost_facts.document_cache) from the trace's own count, and the trace's revision it
    # was made at (the session, its trace and the policy): the cache lane and the Cost panel read it, neither counts again.
    cache: CacheReport | None = None
    cache_for: int | None = None
    cache_pass: MeasuredPass | None = field(default=None, repr=False)  # the cache causes' pass that rode on the trace's count
    # This document's state, as its Workspace (core.readout.workspace) moves it: each a number no other state of any
    # document had, so a panel keys its cache on the one its drawing depends on. `revision` moves at every change;
    # `facts_revision` at every change but a step to another request; `trace_revision` when the trace's facts change
    # (another policy in force, a followed file's growth).
    revision: int = field(default_factory=next_revision)
    facts_revision: int = field(default_factory=next_revision)
    trace_revision: int = field(default_factory=next_revision)
    _measure: Measure | None = field(default=None, repr=False)
    _predicting: PredictionCounter | None = field(default=None, repr=False)  # memoised
    _copies: tuple[int, dict[str, list[int]]] | None = field(default=None, repr=False)  # _copies_of, by record length

    def predict_view(self, compiled: int) -> int:
        """The next request's predicted input for the active view after an edit, by the rule the trace predicts the
        next request with (core.request.trace.NextRule): the figure `inspect` gives for the edited session."""
        from foldscope.core.request.provider_text import PredictionCounter, prompt_renderer

        rule = self.next_basis
        if rule is None:
            return self.now_predicted
        if self._predicting is None:
            self._predicting = PredictionCounter(self.session.format, render=prompt_renderer(self.session))
        count = self._predicting.count(self.session.view_messages(), compiled, rule.model).total
        return rule.predict(self.session, self.session.view, count).predicted

    def cache_report(self) -> CacheReport | None:
        """The cache report made from the trace's count, when it is for the session and policy shown now."""
        if self.cache is not None and self.cache_for == self.trace_revision:
            return self.cache
        return None

    def measure_for(self, policy: Policy | None = None) -> Measure:
        """The session's Measure under `policy` (default: the one in force), sharing this document's counter."""
        policy = policy if policy is not None else self.policy
        kept = self._measure
        if kept is not None and kept.policy == policy:
            return kept
        # From the calibrated Measure when there is one: a ceiling typed in the policy editor moves no scale.
        base = kept if kept is not None else self.measure
        measure = base.under(policy or Policy()) if base is not None else Measure(self.session, policy, counter=self.counter)
        if policy is self.policy:
            self._measure = measure
        return measure

    def request_size(self, slot: int | None) -> int:
        """The estimate request `slot` is shown with everywhere (None or past the last: the next request, now),
        from the one Measure: a recorded request's as the trace measured it, the next one's under the policy in
        force. Predicted input (Measure.headline) is a separate figure, shown with its own name."""
        if slot is None or slot >= len(self.requests):
            return self.now_size
        return self.requests[slot].estimate

    @property
    def now_free(self) -> int | None:
        """The free context window for the next request: the window less its predicted input (core.readout.free_window,
        the figure the Composition, the report and `inspect` call free)."""
        return free_window(self.context_window, self.now_predicted)

    @property
    def shown_size(self) -> int:
        """The size of the request whose view is shown."""
        return self.request_size(self.shown)

    def shown_composition(self) -> tuple[Composition, float]:
        """The shown request's count in parts (adding up to it) and the scale its estimate applies."""
        if self.shown is None or self.shown >= len(self.requests):
            measure = self.measure_for()
            return measure.parts(measure.messages(self.session.view)), measure.scale
        assert self.measure is not None
        return self.measure.request_parts(self.shown), self.requests[self.shown].scale

    @property
    def record_size(self) -> int:
        return len(self.session.record)

    @property
    def view_size(self) -> int:
        return len(self.view)

    def show_view(self, view: list[str], at_request: bool = False, request: int | None = None) -> None:
        """Show another active view (the view as it stood at a request, `request` naming it); the record is untouched."""
        self.shown = request if at_request else None
        record = self.session.record
        self.view = list(view)
        places = record.indexes_of(self.view)
        self.view_position = dict(zip(places, range(len(places))))  # a view naming a message twice: its last place
        self.out_reason = out_reasons(self.session, set(self.view_position), at_request)

    def not_yet_recorded(self) -> int:
        """How many record messages were written after the shown request (out of its view, counted apart)."""
        reasons = self.out_reason
        if isinstance(reasons, OutReasons):
            return reasons.not_yet
        return sum(1 for reason in reasons.values() if reason == NOT_YET)

    def message(self, index: int) -> Message:
        return self.session.record[index]

    def index_of(self, message_id: str) -> int:
        return self.session.record.index_of(message_id)

    def view_index(self, position: int) -> int:
        """The record index of the message at a position in the active view."""
        return self.index_of(self.view[position])

    def in_view(self, index: int) -> bool:
        return index in self.view_position

    @property
    def sizes(self) -> list[int]:
        """What the window map sizes each message by: its tokens once counted, its characters before."""
        return self.tokens if self.is_counted else self.chars

    def file_warnings(self) -> list[str]:
        """What reading the file gave: the reader's warnings, and once the requests are measured, the line saying the
        file accounts for under half of what was sent (core.request.trace.partial_file_warning)."""
        from foldscope.core.readout.usage_precision import lines, marks

        partial = self.measure.partial_warning() if self.measure is not None else None
        # A format of approximate usage, or without its requests, says so here too (the CLI's lines, word for word).
        return list(self.session.warnings) + ([partial] if partial else []) + lines(marks(self.session, "composition"))

    def reading_note(self) -> str:
        """What a panel adds while only the first part of the file is shown ("" once it is read whole)."""
        if self.read_part is None:
            return ""
        return f"the first {self.read_part:.0%} of the file, the rest still being read"

    def size_label(self, index: int) -> str:
        """A message's size as a panel names it: its tokens, or its characters while they are not counted."""
        if self.is_counted:
            return f"{self.tokens[index]:,} tokens"
        return f"{self.chars[index]:,} characters (tokens not counted yet)"

    def view_tokens(self) -> int:
        return sum(self.tokens[i] for i in self.view_position)

    def record_tokens(self) -> int:
        """The full record compiled as one request (inspect's record size); before it is measured, its messages' sum."""
        return self.record_count if self.record_count is not None else sum(self.tokens)

    def kind_counts(self) -> dict[str, int]:
        """Messages by kind in the full record (the record's index's, kept per record: a load's first step and its
        counted document read one record once, and the status line asks at every step)."""
        return dict(record_index(self.session.record).kinds)

    def links(self, index: int) -> list[tuple[str, int]]:
        """The messages this one points at, as (label, index): call and result, copy and original, note."""
        m = self.message(index)
        out: list[tuple[str, int]] = []
        record = self.session.record
        for key, label in (
            ("action_response_id", "its result"),
            ("action_request_id", "its call"),
        ):
            target = m.content.get(key)
            if isinstance(target, str) and target in record:
                out.append((label, record.index_of(target)))
        original = m.clipped_from
        if isinstance(original, str) and original in record:
            out.append(("the original it was clipped from", record.index_of(original)))
        first = note_first_index(m)
        if first is not None and 0 <= first < len(record):
            out.append(("the first message it replaced", first))
        out.extend(("a clipped copy of it", other_index) for other_index in self._copies_of().get(m.id, ()))
        return out

    def _copies_of(self) -> dict[str, list[int]]:
        """Each original's clipped copies (record indexes), kept until the record grows."""
        record = self.session.record
        kept = self._copies
        if kept is None or kept[0] != len(record):
            copies: dict[str, list[int]] = {}
            for index, message in enumerate(record):
                if message.clipped_from is not None:
                    copies.setdefault(message.clipped_from, []).append(index)
            kept = self._copies = (len(record), copies)
        return kept[1]


NOT_YET = "not yet in the record at this request"  # stepped back: written after the shown request


def out_reasons(session: Session, in_view: set[int], at_request: bool = False) -> OutReasons:
    """Why each message out of the active view is out, as far as the record says (each reason made when asked)."""
    return OutReasons(session, in_view, at_request)


class OutReasons(Mapping[int, str]):
    """Record index -> why that message is out of the active view, for every message not in it.

    A reason is worked out when a panel asks for it (a visible row, a tooltip, the inspector), not for the whole
    record at every step: stepping costs the view, not the record. Read whole (items(), ==) it is the mapping
    out_reasons always gave."""

    def __init__(self, session: Session, in_view: set[int], at_request: bool = False) -> None:
        self._session = session
        self._in_view = in_view
        self._size = len(session.record)
        # Stepping back to a request: what the record holds after its view was not written yet.
        self._last_in_view = max(in_view, default=-1) if at_request else self._size
        self._standing: tuple[dict[str, int], list[tuple[int, int]], dict[str, dict]] | None = None

    @property
    def not_yet(self) -> int:
        """How many messages are out because they were written after the shown request."""
        return max(0, self._size - 1 - self._last_in_view)

    def _stand_ins(self) -> tuple[dict[str, int], list[tuple[int, int]], dict[str, dict]]:
        """The view's copies (original id -> copy index), its notes (first replaced index, note index) and the
        abandoned branches' messages (id -> branch event): made once, on the first reason asked."""
        if self._standing is None:
            # Only the view's own messages can stand in for others: of the record's copies and notes (few, kept
            # per record), those in the view, not every view message asked (a 13,000-message view's step).
            index, in_view = record_index(self._session.record), self._in_view
            copies = {original: i for i, original in index.copies if i in in_view}  # two copies: the later
            notes = sorted((first, i) for first, i in index.notes if i in in_view)
            rewound = {
                mid: event
                for event in self._session.events
                if event.get("kind") == "branch"
                for mid in event.get("abandoned") or ()
                if isinstance(mid, str)
            }
            self._standing = (copies, notes, rewound)
        return self._standing

    def _reason(self, index: int) -> str:
        if index > self._last_in_view:
            return NOT_YET
        message = self._session.record[index]
        copies, notes, rewound = self._stand_ins()
        if message.id in rewound:
            event = rewound[message.id]
            return (
                f"on an abandoned branch: line {event.get('line')} went back to line "
                f"{event.get('parent_line')} (a rewind or an edited prompt)"
            )
        if message.id in copies:
            return f"clipped: copy #{copies[message.id]} stands in the active view"
        # The note that replaced it: the in-view note with the nearest first replaced index at or before it.
        covering = [n for first, n in notes if first <= index < n]
        if covering:
            return f"folded into note #{covering[0]}"
        if is_note(message):
            return "a note since folded or replaced"
        return "out of the active view"

    def __getitem__(self, index: int) -> str:
        if not isinstance(index, int) or not 0 <= index < self._size or index in self._in_view:
            raise KeyError(index)
        return self._reason(index)

    def __contains__(self, index: object) -> bool:
        return isinstance(index, int) and 0 <= index < self._size and index not in self._in_view

    def __iter__(self) -> Iterator[int]:
        return (index for index in range(self._size) if index not in self._in_view)

    def __len__(self) -> int:
        return self._size - sum(1 for index in self._in_view if 0 <= index < self._size)


KIND_LABELS = {
    "system": "system",
    "instruction": "instruction",
    "assistant": "assistant",
    "action_request": "call",
    "action_response": "result",
    "note": "note",
}


def kind_label(document: Document, index: int) -> str:
    """A row's kind as the lists and map name it: a call or result with its function, a clipped copy."""
    message = document.message(index)
    if message.is_clipped_copy:
        return "clipped copy"
    if message.kind == "action_request":
        label = f"call {message.content.get('function', '')}".rstrip()
        # A call that started a subagent says so: Enter or a double-click on its row opens that session.
        started = any(c.extras.get("parent_call") == message.id for c in document.session.children)
        return f"{label} → subagent" if started else label
    if message.kind == "action_response":
        return f"result {message.content.get('function', '')}".rstrip()
    return KIND_LABELS.get(message.kind, message.kind)
