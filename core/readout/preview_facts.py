"""The fold preview's facts: the fold run on a copy (now, or before a recorded request), and what its estimate decides."""

from __future__ import annotations

from collections.abc import Callable

from foldscope.core.fold.history import session_for_request
from foldscope.core.fold.preview import ApplyPreview, FoldPreview, PassPreview, preview_fold
from foldscope.core.readout.document import Document
from foldscope.core.request.estimators import ADR, ESTIMATORS
from foldscope.core.request.measure import Measure, refused

__all__ = ["DECIDER", "DECIDER_MEANS", "ApplyPreview", "FoldPreview", "PassPreview", "over_ceiling", "preview_of"]

# Hears each measured candidate view: (done, total, label); it may raise to cancel the preview.
OnCandidate = Callable[[int, int, str], None]

DECIDER = ADR  # the estimator the fold decides on
DECIDER_MEANS = ESTIMATORS[ADR]  # what it estimates, in a sentence


def preview_of(document: Document, measure: Measure, request: int | None, report: OnCandidate) -> FoldPreview:
    """The fold on a copy, reporting each measured candidate (and so cancellable). With `request`, the fold of the
    view as it stood before that request, as `fold --at-request` runs it."""
    session = document.session
    measured = [0]

    def count_for(copy):
        over = measure.over(copy)

        def count(messages):
            measured[0] += 1
            report(measured[0], 0, f"Previewing the fold: {measured[0]} candidate views measured")
            # As the next request compiles: bound, tools, marks, the first round's frozen bound.
            return over.count(list(messages), decide=False)

        return count

    if request is None:
        return preview_fold(session, measure, count_for, scale=max(document.scale, session.scale, 1.0))
    past = session_for_request(session, measure, request)
    return preview_fold(past, measure, count_for, scale=past.scale)


def over_ceiling(preview: FoldPreview) -> bool:
    """Whether the estimate before the fold is at or past the ceiling (the one ceiling rule, core.request.measure)."""
    return refused(preview.run.estimate_before, preview.measure.ceiling)
