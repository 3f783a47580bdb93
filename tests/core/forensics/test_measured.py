"""The cache causes' pass fed by the trace's own count and prefix meter equals the pass that compiles each request."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.forensics.trace_pass import MeasuredPass, measure_requests
from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Request, Session
from foldscope.core.request.count import Counter
from foldscope.core.request.trace_measure import measure_trace
from tests.core.session_strategies import records, views

POLICIES = (Policy(), Policy(prompt_caching=True, tool_result_max_chars=1_024))


def test_on_every_dev_session_the_pass_riding_on_the_trace_parts_where_compiling_both_requests_does(corpus_dev):
    # The GUI's pass reads where a request parts from the one before off the trace's prefix meter
    # (PrefixMeter.parted); the standalone pass compiles both requests whole. Same rows, same tokens, every file.
    files = sorted(p for folder in ("claude_code", "pi", "codex") for p in (corpus_dev / folder).rglob("*.jsonl"))
    parted = 0
    for path in files:
        session = load_session(path)
        if not session.trace:
            continue
        for policy in POLICIES:
            steps = MeasuredPass(session, policy, {})
            measure_trace(session, policy, counter=Counter(), on_measured=steps.step)
            tokens: dict[str, int] = {}
            compiled = measure_requests(session, policy, Counter(), tokens)
            assert steps.measured() == compiled, path.name
            assert steps.tokens == tokens, path.name
            parted += sum(1 for m in compiled if m.place is not None)
    assert parted >= 5  # requests that do not only add to the one before: the place was read from the meter


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_over_random_traces_the_pass_riding_on_the_trace_parts_where_compiling_both_requests_does(data):
    # Requests that grow the one before, fold, restore or rewrite it, a new system message, prompt caching on
    # (its first round decided by a request, then a frontier): the meter's place against both compiles.
    record = data.draw(records())
    policy = data.draw(st.sampled_from(POLICIES))
    trace: list[Request] = []
    view: list = []
    for k in range(data.draw(st.integers(2, 6))):
        if view and data.draw(st.booleans()):
            extra = [m for m in record if m not in view]
            view = view + extra[: data.draw(st.integers(0, len(extra)))]
        else:
            view = [m for m in data.draw(views(record)) if m.id in record]  # a drawn copy may be the view's alone
        trace.append(Request(k, tuple(m.id for m in view), None, None, float(k), None))
    session = Session(record=record, view=list(trace[-1].view), format="lionagi", trace=trace)
    steps = MeasuredPass(session, policy, {})
    try:
        measure_trace(session, policy, counter=Counter(), on_measured=steps.step)
        compiled = measure_requests(session, policy, Counter(), {})
    except Exception:  # a view that cannot compile is not a request (session_strategies draws any view)
        return
    assert steps.measured() == compiled
