"""What-if at a request: the later requests of a session replayed from a branch of it (its view at request k, changed).

The branch is the session as it stood before request k (core.fold.history.session_at_request),
after whatever actions a person ran on it. Request k is sent from the branch's view as it stands;
before each later request j the branch follows what the original did between its requests j-1 and
j: what entered the original's view enters the branch's (new messages, and the source's own notes
and copies, at their chronological place), and what left it (the source's own compaction or
eviction) leaves the branch's; then the fold runs under the policy, and the request completes,
delivering its view. Neither the original nor the branch is changed: the replay works on its own copy.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from foldscope.core.fold.delivery import mark_delivered
from foldscope.core.fold.fold import Fold, default_count
from foldscope.core.fold.history import response_index
from foldscope.core.fold.stages import chronology_key
from foldscope.core.model.session import FullRecord, Session
from foldscope.core.request.measure import Measure
from foldscope.core.request.trace import build_trace


@dataclass(frozen=True)
class BranchStep:
    """One request of the branch: its view, its count (with the unseen head), the folds before it, refused or not."""

    request: int
    view: tuple[str, ...]
    count_with_head: int
    folds: int  # fold passes that landed before this request
    refused: bool


def branch_copy(branch: Session) -> Session:
    """A working copy of the branch: the same messages, its own view, metadata and manifest."""
    return Session(
        record=FullRecord(branch.record),
        view=list(branch.view),
        format=branch.format,
        source=branch.source,
        branch=copy.deepcopy(branch.branch),
        manifest=copy.deepcopy(branch.manifest),
        trace=list(branch.trace),
        model=branch.model,
        scale=branch.scale,
        unseen_head=branch.unseen_head,
    )


def replay_from(
    original: Session, branch: Session, request: int, measure: Measure, report: Callable[[int, int, str], None] | None = None
) -> list[BranchStep]:
    """Requests `request`.. of the original's trace as the branch would have sent them, under the measure's
    policy (no ceiling: nothing folds); `report(done, total, label)` before each (the GUI's worker cancels there)."""
    trace = build_trace(original)
    if not 0 <= request < len(trace):
        raise IndexError(f"request {request} is not in the trace (it has {len(trace)} requests)")
    work = branch_copy(branch)
    measure = measure.over(work)
    count = default_count(measure)
    fold = Fold(work, measure, count=count) if measure.ceiling is not None else None
    taken = response_index(original, trace, request)
    steps: list[BranchStep] = []
    for j in range(request, len(trace)):
        if report is not None:
            report(j - request, len(trace) - request, f"Replaying request {j} of the what-if")
        landed, refused = 0, False
        if j > request:
            end = response_index(original, trace, j)
            _arrive(work, [original.record[i] for i in range(taken, end)])
            taken = max(taken, end)
            _follow(work, original, trace[j - 1].view, trace[j].view)
            if fold is not None:
                runs, refusal = fold.prepare_request()
                landed = sum(1 for run in runs for r in run.records if r["outcome"] == "landed")
                refused = refusal is not None
        counted = count(work.view_messages()) + work.unseen_head
        steps.append(BranchStep(j, tuple(work.view), counted, landed, refused))
        if not refused:
            mark_delivered(work, work.view)
    return steps


def _arrive(work: Session, messages: Sequence) -> None:
    """Messages the original recorded since the last request join the branch's record (the view follows below)."""
    for m in messages:
        if m.id not in work.record:
            work.record.append(m)


def _follow(work: Session, original: Session, before: Sequence[str], now: Sequence[str]) -> None:
    """The original's own change of view between two requests, made on the branch's view."""
    was, present = set(before), set(work.view)
    gone = was.difference(now)
    entering = [original.record.get(mid) for mid in now if mid not in was and mid not in present and mid in work.record]
    view = [m for m in work.view_messages() if m.id not in gone]
    for m in entering:  # before the first message of the view that comes later in time
        key = chronology_key(m, work.record)
        at = next((p for p, x in enumerate(view) if chronology_key(x, work.record) > key), len(view))
        view.insert(at, m)
    work.set_view(m.id for m in view)
