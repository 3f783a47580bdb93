"""The fold: past the line, shrink the active view toward the target in passes that land only when they help.

ADR-0130 D4 as amended by Amendments 1 and 2: `tool_io` with tails six then two, `clip` by the
deficit, the floor view, then `all` with tails six then two (or once with two). Every pass is
measured on the compiled request at the current scale; one that does not strictly lower the
estimate is rolled back. Every pass appends a context_folds record to the session's manifest.
Nothing is removed from the full record: notes and clipped copies are appended to it.
"""

from __future__ import annotations

import math
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from core import fold_stages as st
from core.delivery import delivered_ids, no_clip_ids, note_calls, set_note_calls
from core.fold_clip import CLIP_FLOOR, bodies_of, build_copy, kept_of, original_of, span_digest
from core.count import Counter, estimate as scaled
from core.model import Message, Session
from core.policy import Policy, resolve_ceiling
from core.summarise import BriefSummariser, Summariser

FOLD_AT = 0.8
FOLD_TARGET = 0.6
KEEP_TAILS = (6, 2)
MAX_RESUMES = 2  # refusal resumes per turn (Amendment 1)
MAX_RECORDED = 50
CUT_STEPS = 3  # measured candidates per body at most, besides the one at the floor
CUT_MARGIN = 8  # characters cut beyond the proposal, so rounding in the tokenizer rarely leaves a token over

Count = Callable[[Sequence[Message]], int]


@dataclass(frozen=True)
class FoldSettings:
    """The ceiling and the fold's line and target, as fractions of it."""

    ceiling: int
    fold_at: float = FOLD_AT
    target: float = FOLD_TARGET

    def __post_init__(self) -> None:
        if isinstance(self.ceiling, bool) or not isinstance(self.ceiling, int) or self.ceiling < 1:
            raise ValueError(f"the ceiling must be a positive integer, not {self.ceiling!r}")
        if not 0 < self.target < self.fold_at <= 1:
            raise ValueError(f"need 0 < target < line <= 1, not target {self.target} and line {self.fold_at}")

    @property
    def line_tokens(self) -> float:
        return self.fold_at * self.ceiling

    @property
    def target_tokens(self) -> float:
        return self.target * self.ceiling

    @classmethod
    def from_policy(cls, policy: Policy, model: str | None = None) -> "FoldSettings | None":
        """The settings a policy resolves to; None when it resolves to no ceiling (nothing folds)."""
        ceiling = resolve_ceiling(policy, model).ceiling
        return None if ceiling is None else cls(ceiling, policy.fold_at, policy.fold_target)


@dataclass
class FoldRun:
    """One fold: its records in order, the estimates around it and the view after it."""

    reason: str
    records: list[dict[str, Any]] = field(default_factory=list)
    estimate_before: int = 0
    estimate_after: int = 0
    target_reached: bool = False
    floor_estimate: int | None = None
    views: list[tuple[str, ...]] = field(default_factory=list)  # the view after each record's pass

    @property
    def landed(self) -> bool:
        return any(r["outcome"] == "landed" for r in self.records)


@dataclass(frozen=True)
class Refusal:
    """A request still over the ceiling after the fold: refused before the send, with the count."""

    estimate: int
    ceiling: int
    counted: int
    scale: float


def default_count(session: Session, policy: Any = None) -> Count:
    """The exact incremental o200k count of the compiled request (core.count.Counter)."""
    counter = Counter()
    return lambda messages: counter.count(list(messages), record=session.record, policy=policy)


class Fold:
    """The fold over one session's active view, under one ceiling, line and target."""

    def __init__(self, session: Session, settings: FoldSettings, *, count: Count | None = None,
                 summariser: Summariser | None = None, policy: Any = None, clock: Callable[[], float] = time.time,
                 new_id: Callable[[], str] | None = None) -> None:
        self.session = session
        self.settings = settings
        self.count = count or default_count(session, policy)
        self.summariser = summariser or BriefSummariser()
        self.clock = clock
        self.new_id = new_id or (lambda: str(uuid.uuid4()))
        self.calibration = 1.0  # raised by a refused estimate (Amendment 1); the fold's own, never lowered

    # -- measuring -------------------------------------------------------------------------
    @property
    def scale(self) -> float:
        return max(self.session.scale, 1.0) * self.calibration

    def estimate(self, messages: Sequence[Message] | None = None) -> int:
        """The scaled count of the request compiled from `messages` (default: the active view)."""
        counted = self.counted(self.session.view_messages() if messages is None else messages)
        return scaled(counted, self.scale)

    def counted(self, messages: Sequence[Message]) -> int:
        """The count of the request compiled from `messages`, with the head the file does not hold."""
        return self.count(messages) + self.session.unseen_head

    def fits(self, view_ids: Sequence[str]) -> bool:
        """The ceiling's admission check: a request from this view would not be refused."""
        return self.estimate([self.session.record.get(i) for i in view_ids]) <= self.settings.ceiling

    def protected(self) -> set[str]:
        """Messages no stage may take beyond the fixed rules (the protected first round lands here later)."""
        return set()

    # -- the fold ----------------------------------------------------------------------------
    def maybe_fold(self) -> FoldRun | None:
        """Fold when the next request is at or past the line; None when it is under."""
        if self.estimate() < self.settings.line_tokens:
            return None
        return self.run("threshold")

    def prepare_request(self) -> tuple[list[FoldRun], Refusal | None]:
        """Before a request: the fold at the line, then at most two refused-and-folded resumes, then refusal."""
        runs = [r for r in [self.maybe_fold()] if r is not None]
        for _ in range(MAX_RESUMES):
            estimate = self.estimate()
            if estimate <= self.settings.ceiling:
                return runs, None
            run = self.run("refused", observed=estimate)
            runs.append(run)
            if not run.landed:
                break
        estimate = self.estimate()
        if estimate <= self.settings.ceiling:
            return runs, None
        counted = self.counted(self.session.view_messages())
        return runs, Refusal(estimate, self.settings.ceiling, counted, round(self.scale, 4))

    def run(self, reason: str = "threshold", observed: int | None = None) -> FoldRun:
        """One fold toward the target; `observed` is a refused request's estimate, which calibrates it first."""
        view = self.session.view_messages()
        if observed:
            counted = self.counted(view)
            if counted > 0:
                self.calibration = max(self.calibration, observed / (counted * max(self.session.scale, 1.0)))
        run = FoldRun(reason)
        run.estimate_before = self.estimate(view)
        state = _State(view, run.estimate_before)
        must_land = observed is not None

        def more() -> bool:
            return (must_land and not run.landed) or state.estimate > self.settings.target_tokens

        for tail in KEEP_TAILS:
            if more():
                self._fold_pass(state, run, "tool_io", tail, reason)
        if more():
            self._clip_pass(state, run, reason)
        tails: tuple[int, ...] = ()
        if more():
            facts = self._facts(state.view)
            floor = [m for i, m in enumerate(state.view) if m.id in facts.keep or i >= len(state.view) - 2]
            run.floor_estimate = self.estimate(floor)
            if run.floor_estimate > self.settings.ceiling:
                tails = ()  # no fold can make the request sendable: no summary is asked for
            elif run.floor_estimate > self.settings.target_tokens:
                tails = (2,)
            else:
                tails = KEEP_TAILS
        for tail in tails:
            if more():
                self._fold_pass(state, run, "all", tail, reason)
        run.estimate_after = state.estimate
        run.target_reached = state.estimate <= self.settings.target_tokens
        return run

    # -- passes ------------------------------------------------------------------------------
    def _facts(self, view: Sequence[Message]) -> st.ViewFacts:
        return st.view_facts(view, self.session.record, delivered_ids(self.session), self.protected())

    def _fold_pass(self, state: "_State", run: FoldRun, stage: str, tail: int, reason: str) -> None:
        record = self.session.record
        facts = self._facts(state.view)
        chosen = (st.tool_io_span if stage == "tool_io" else st.all_span)(state.view, facts, tail)
        if not chosen:
            return
        taken = set(chosen)
        folded = [m for m in state.view if m.id in taken]
        own_calls = st.folded_calls(folded, record)
        summary = None
        if stage == "all":
            carried = st.carried_calls(folded, record, note_calls(self.session))
            summary = self.summariser.summarise(folded, carried)
            if summary.scale and summary.scale > self.session.scale:
                self.session.scale = summary.scale  # the before is measured at the scale now in force
            listed = carried
            text = st.note_text(len(folded), self.settings.ceiling, listed, summary.text, summary.lists_calls)
        else:
            listed = own_calls
            text = st.note_text(len(folded), self.settings.ceiling, listed)
        note = st.make_note(text, folded, record, stage, self.new_id, self.clock(), span_digest(folded))
        record.append(note)  # a rejected note stays in the record, outside the view (Amendment 2)
        before = self.estimate(state.view)
        candidate = st.replace_with_note(state.view, chosen, note)
        after = self.estimate(candidate)
        landed = after < before
        if landed:
            set_note_calls(self.session, note.id, listed)
            state.view, state.estimate = candidate, after
            self.session.set_view(m.id for m in candidate)
        else:
            state.estimate = before
        entry = self._record(reason, stage, tail, len(folded), own_calls, before, after, landed, state.estimate)
        entry["summary_source"] = summary.source if summary else "host"
        entry["summary_usage"] = dict(summary.usage) if summary and summary.usage else None
        entry["note_index"] = record.index_of(note.id)
        self._append(run, entry)

    def _clip_pass(self, state: "_State", run: FoldRun, reason: str) -> None:
        record = self.session.record
        target = self.settings.target_tokens
        skip = no_clip_ids(self.session) | self.protected()
        # Each result in view: its position, its original and the kept length of every body.
        slots: dict[str, tuple[Message, dict[str | None, int]]] = {}
        bodies = []
        for position, m in enumerate(state.view):
            if m.kind != "action_response":
                continue
            original = original_of(m, record)
            if original.id in skip or original.id in slots:
                continue
            kept = {b.key: b.text.__len__() for b in bodies_of(original)}
            kept.update(kept_of(m))
            slots[original.id] = (original, kept)
            index = record.index_of(original.id)
            for body in bodies_of(original):
                if kept[body.key] > CLIP_FLOOR:
                    bodies.append((-kept[body.key], index, position, original.id, body))
        bodies.sort(key=lambda b: b[:3])
        before = state.estimate
        view = list(state.view)
        estimate = before
        copies: dict[str, Message] = {}
        clipped: dict[tuple[str, str | None], dict[str, Any]] = {}
        for _, index, position, original_id, body in bodies:
            if estimate <= target:
                break
            original, kept = slots[original_id]
            current = kept[body.key]
            cut = self._cut(view, position, original, index, kept, body.key, estimate, target)
            if cut is None:
                continue
            candidate, measured, keep = cut
            if measured < estimate:  # only a cut that lowers the measured request is kept
                view, estimate = candidate, measured
                kept[body.key] = keep
                copies[original_id] = candidate[position]
                clipped[(original_id, body.key)] = {"index": index, "chars": len(body.text), "kept": keep}
                if body.key is not None:
                    clipped[(original_id, body.key)]["key"] = body.key
        if not copies:
            return
        for copy in copies.values():
            record.append(copy)  # only the copies in the kept view enter the record
        state.view, state.estimate = view, estimate
        self.session.set_view(m.id for m in view)
        entry = self._record(reason, "clip", None, 0, [], before, estimate, True, estimate)
        entry["summary_source"] = None
        entry["summary_usage"] = None
        items = sorted(clipped.values(), key=lambda c: (c["index"], c.get("key") or ""))
        entry["clipped"] = items[:MAX_RECORDED]
        entry["clipped_total"] = len(items)
        self._append(run, entry)

    def _cut(self, view: list[Message], position: int, original: Message, index: int,
             kept: dict[str | None, int], key: str | None, estimate: int, target: float
             ) -> tuple[list[Message], int, int] | None:
        """One body cut just enough to cover the deficit, by its own measured tokens per character.

        The body is first measured at the floor (head, marker and tail as the request carries
        them): what that saves per character removed proposes how much to keep; the proposal is
        then built and measured. Returns the candidate view, its estimate and the kept length.
        """
        current = kept[key]

        def candidate(keep: int) -> tuple[list[Message], int]:
            trial = dict(kept)
            trial[key] = keep
            made = build_copy(original, index, trial, new_id=self.new_id, created_at=self.clock())
            view_ = view[:position] + [made] + view[position + 1:]
            return view_, self.estimate(view_)

        at_floor, floor_estimate = candidate(CLIP_FLOOR)
        saved = estimate - floor_estimate
        if saved <= 0:
            return None
        per_char = saved / (current - CLIP_FLOOR)
        deficit = estimate - target
        if deficit >= saved:
            return at_floor, floor_estimate, CLIP_FLOOR
        keep, best = current, None
        over = deficit
        for _ in range(CUT_STEPS):  # a proposal, then corrections by what the last one measured
            keep = keep - math.ceil(over / per_char) - CUT_MARGIN
            if keep <= CLIP_FLOOR:
                return at_floor, floor_estimate, CLIP_FLOOR
            view_, measured = candidate(keep)
            best = (view_, measured, keep)
            if measured <= target:
                break
            over = measured - target
            if measured < estimate:
                per_char = (estimate - measured) / (current - keep)
        return best

    def _record(self, reason: str, stage: str, tail: int | None, folded: int, calls: list[dict[str, Any]],
                before: int, after: int, landed: bool, standing: int) -> dict[str, Any]:
        return {
            "at": self.clock(),
            "reason": reason,
            "stage": stage,
            "kept_tail": tail,
            "messages_folded": folded,
            "tool_calls": calls[:MAX_RECORDED],
            "tool_calls_total": len(calls),
            "estimate_before": before,
            "estimate_after": after,
            "cap": self.settings.ceiling,
            "input_scale": round(self.scale, 4),
            "outcome": "landed" if landed else "rolled_back",
            "target_reached": standing <= self.settings.target_tokens,
        }

    def _append(self, run: FoldRun, entry: dict[str, Any]) -> None:
        run.records.append(entry)
        run.views.append(tuple(self.session.view))
        if self.session.manifest is None:
            self.session.manifest = {}
        self.session.manifest.setdefault("context_folds", []).append(entry)


@dataclass
class _State:
    view: list[Message]
    estimate: int
