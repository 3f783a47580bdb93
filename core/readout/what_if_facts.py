"""What-if at a request: the branch built from the session as it stood at request k, its replays, and the estimates
the timeline draws beside the original's."""

from __future__ import annotations

from collections.abc import Sequence

from foldscope.core.fold.history import session_at_request
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Session
from foldscope.core.readout.cost_facts import document_cache
from foldscope.core.readout.document import Document, Report
from foldscope.core.readout.opening import build_document
from foldscope.core.replay.what_if import BranchStep, branch_copy, replay_from
from foldscope.core.request.count import estimate
from foldscope.core.request.measure import Measure

__all__ = ["BranchStep", "branch_at", "branch_copy", "branch_estimates", "replay_branch"]


def branch_at(
    document: Document, request: int, policy: Policy | None, measure: Measure, report: Report
) -> tuple[Document, list[BranchStep]]:
    """The branch at `request` (the session as it stood, counted under `policy`) and the original's requests from
    there replayed from it under `measure`; `report(done, total, label)` as it goes (the GUI's worker cancels there)."""
    report(0, 0, f"What-if from request {request}: the session as it stood")
    branch = build_document(session_at_request(document.session, request), document.path, report, policy=policy)
    document_cache(branch)  # the cache lane and Cost panel read it: nothing counted twice
    return branch, replay_from(document.session, branch.session, request, measure, report=report)


def replay_branch(original: Document, branch: Session, request: int, measure: Measure, report: Report) -> list[BranchStep]:
    """The original's requests `request`.. replayed from `branch` (a copy, branch_copy) under `measure`."""
    return replay_from(original.session, branch, request, measure, report=report)


def branch_estimates(original: Document, steps: Sequence[BranchStep]) -> tuple[int, ...]:
    """Each replayed request's estimate: its count times the original request's scale."""
    return tuple(estimate(s.count_with_head, original.requests[s.request].scale) for s in steps)


def branch_changes(original: Document, steps: Sequence[BranchStep], estimates: Sequence[int]) -> tuple[int, ...]:
    """Each replayed request's estimate less the original request's (branch_estimates' `estimates`)."""
    return tuple(e - original.requests[s.request].estimate for s, e in zip(steps, estimates))
