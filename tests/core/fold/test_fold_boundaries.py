"""ADR-0130 D4's boundaries, exactly: refusal at or past the ceiling, the stop at the target, the resumes, the notice."""

from __future__ import annotations

from foldscope.core.fold.fold import Fold
from foldscope.core.model.policy import Policy
from foldscope.core.request.trace import action_for
from foldscope.core.request.trace_measure import measure_trace
from tests.core.fold_sessions import Build, fold_measure, text_of


def sized(sizes: dict[str, int], note: int = 10):
    """A count that is the sum of fixed sizes per message id (a note or copy costs `note`): exact arithmetic."""
    return lambda ms: sum(sizes.get(m.id, note) for m in ms)


def bare(size: int):
    """A session with nothing the fold may take (system and task), counted at `size`."""
    b = Build()
    b.system(), b.task()
    session = b.session(delivered=[m.id for m in b.messages])
    return session, (lambda ms: size)


def test_d4_a_request_exactly_at_the_ceiling_is_refused_before_the_send():
    session, count = bare(1_000)
    runs, refusal = Fold(session, fold_measure(session, 1_000), count=count).prepare_request()
    assert refusal is not None and refusal.estimate == 1_000 and refusal.ceiling == 1_000


def test_d4_a_request_one_under_the_ceiling_is_sent():
    session, count = bare(999)
    runs, refusal = Fold(session, fold_measure(session, 1_000), count=count).prepare_request()
    assert refusal is None


def test_d4_a_request_one_over_the_ceiling_is_refused():
    session, count = bare(1_001)
    assert Fold(session, fold_measure(session, 1_000), count=count).prepare_request()[1] is not None


def test_d4_restore_admission_refuses_a_view_exactly_at_the_ceiling_and_admits_one_under():
    session, _ = bare(0)
    ids = list(session.view)
    assert not Fold(session, fold_measure(session, 1_000), count=lambda ms: 1_000).fits(ids)
    assert Fold(session, fold_measure(session, 1_000), count=lambda ms: 999).fits(ids)


def rounds(n: int = 6, size: int = 100):
    """System, task, then n delivered rounds of answer, call, result; every message weighs `size`."""
    b = Build()
    b.system(), b.task()
    for k in range(n):
        b.answer(f"round {k}")
        b.round([text_of(200, k)])
    session = b.session(delivered=[m.id for m in b.messages])
    return session, {m.id: size for m in b.messages}


def test_d4_the_fold_stops_at_a_pass_landing_exactly_on_the_target():
    # 20 messages of 100 = 2,000; ceiling 2,000 at 0.8 / 0.6: target 1,200. tool_io with tail six folds the calls
    # and results of rounds 0 to 3 (8 messages, 800) into one note of 0: exactly 1,200, which is "at or under".
    session, sizes = rounds()
    fold = Fold(session, fold_measure(session, 2_000), count=sized(sizes, note=0))
    run = fold.run()
    assert [r["stage"] for r in run.records] == ["tool_io"] and run.records[0]["kept_tail"] == 6
    assert run.estimate_after == 1_200 and run.target_reached


def test_d4_the_fold_goes_on_when_a_pass_lands_one_over_the_target():
    session, sizes = rounds()
    fold = Fold(session, fold_measure(session, 2_000), count=sized(sizes, note=1))  # 1,201 after the first pass
    run = fold.run()
    assert len(run.records) > 1 and run.records[0]["estimate_after"] == 1_201


def test_amendment_2_a_pass_that_leaves_the_estimate_equal_is_rolled_back():
    session, sizes = rounds()
    # the note costs exactly what it replaces (8 messages of 100): the estimate does not strictly fall
    fold = Fold(session, fold_measure(session, 2_000), count=sized(sizes, note=800))
    run = fold.run()
    first = run.records[0]
    assert first["stage"] == "tool_io" and first["estimate_after"] == first["estimate_before"]
    assert first["outcome"] == "rolled_back"


class Scripted(Fold):
    """A fold whose passes are scripted: each run lands (or not) at a given estimate, so prepare_request's
    resume rule (Amendment 1: fold at the line, then at most two refused-and-folded resumes) is tested alone."""

    def __init__(self, start: int, runs: list[int | None], ceiling: int = 1_000) -> None:
        session, _ = bare(0)
        super().__init__(session, fold_measure(session, ceiling), count=lambda ms: 0)
        self.now, self.script, self.reasons = start, list(runs), []

    def estimate(self, messages=None) -> int:
        return self.now

    def run(self, reason="threshold", observed=None, estimate=None):
        from foldscope.core.fold.fold import FoldRun

        self.reasons.append(reason)
        after = self.script.pop(0)
        run = FoldRun(reason, estimate_before=self.now)
        if after is not None:  # None: nothing landed
            self.now = after
            run.records.append({"outcome": "landed", "estimate_after": after})
        return run


def test_amendment_1_a_refused_request_resumed_once_lands_and_is_sent():
    fold = Scripted(1_500, [1_200, 900])  # the threshold fold leaves it past the ceiling; the resume lands under
    runs, refusal = fold.prepare_request()
    assert fold.reasons == ["threshold", "refused"] and refusal is None


def test_amendment_1_the_second_refusal_resume_can_land_and_send():
    fold = Scripted(1_500, [1_300, 1_100, 999])
    runs, refusal = fold.prepare_request()
    assert fold.reasons == ["threshold", "refused", "refused"] and refusal is None


def test_amendment_1_after_two_refusal_resumes_the_request_is_refused():
    fold = Scripted(1_500, [1_400, 1_300, 1_200, 100])
    runs, refusal = fold.prepare_request()
    assert fold.reasons == ["threshold", "refused", "refused"] and refusal is not None and refusal.estimate == 1_200


def test_amendment_1_a_resume_that_lands_nothing_ends_the_resumes():
    fold = Scripted(1_500, [1_400, None, 100])
    runs, refusal = fold.prepare_request()
    assert fold.reasons == ["threshold", "refused"] and refusal is not None


def test_d4_a_resume_landing_exactly_at_the_ceiling_is_still_refused():
    fold = Scripted(1_500, [1_200, 1_000, 1_000])
    assert fold.prepare_request()[1] is not None


def test_d4_the_notice_is_at_80_percent_of_the_ceiling_whatever_the_fold_line():
    assert action_for(800, 1_000) == "notice"
    assert action_for(799, 1_000) == "none"
    assert action_for(1_000, 1_000) == "refuse"
    assert action_for(999, 1_000) == "notice"


def test_d7_the_decision_of_a_request_past_80_percent_under_a_line_of_0_9_is_a_notice():
    b = Build()
    b.system(), b.task(text_of(3_000, 1))
    b.answer("done")
    session = b.session()
    size = measure_trace(session, Policy(max_input_tokens="none")).rows[0].estimate
    ceiling = int(size / 0.85)  # the request is at 85% of the ceiling: past the notice, under a line of 0.9
    report = measure_trace(session, Policy(max_input_tokens=ceiling, context_fold_at=0.9, context_fold_target=0.5))
    assert report.decisions[1]["action"] == "notice"
