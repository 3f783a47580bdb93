"""A rewind is the user's act, not context management: every replay strategy drops what the rewind dropped, at the
request where the recording dropped it, so `none` sends the recorded views and costs what the recording is modelled
to cost."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import FullRecord, Message, ReadError, Request, Session
from foldscope.core.replay.lab import run_strategy
from foldscope.core.replay.layouts import Layouts
from foldscope.core.replay.strategies import STRATEGIES, abandoned_ids, arrivals, none, recorded_views
from foldscope.core.request.measure import Measure
from tests.core.replay.test_strategies import HAIKU
from tests.core.replay_sessions import under, words
from tests.paths import CORPUS_DEV, corpus_glob

REWINDING = CORPUS_DEV / "claude_code" / "extracted-dd381a75.jsonl"


def ids(view) -> list[str]:
    return [m.id for m in view]


def only_appends_and_rewinds(session: Session) -> bool:
    """The recording manages nothing: no view holds a note or a clipped copy, and every message leaving a view is
    one a rewind abandoned."""
    abandoned, before = abandoned_ids(session), set()
    for view in recorded_views(session):
        if any(m.kind == "note" or m.is_clipped_copy for m in view):
            return False
        now = set(ids(view))
        if not before - now <= abandoned:
            return False
        before = now
    return True


def corpus_sessions() -> list[Session]:
    out = []
    for path in corpus_glob("**/*"):
        if not path.is_file():
            continue
        try:
            out.append(load_session(str(path)))
        except (ReadError, ValueError):
            continue  # not a session file (a provenance note, a sidecar)
    return out


def test_none_sends_the_recorded_views_on_every_corpus_file_that_only_appends_and_rewinds(corpus_dev):
    compared = rewinding = 0
    for session in corpus_sessions():
        if not only_appends_and_rewinds(session):
            continue
        recorded = [ids(v) for v in recorded_views(session)]
        assert [ids(step.view) for step in none(session, None)] == recorded, session.source
        compared += 1
        rewinding += bool(abandoned_ids(session))
    assert compared >= 20 and rewinding >= 1


def test_none_holds_every_message_the_recording_sent_on_every_corpus_file(corpus_dev):
    # where the recording managed its view (compactions, clipped results), none holds at least what it sent
    for session in corpus_sessions():
        for view, step in zip(recorded_views(session), none(session, None), strict=True):
            held = set(ids(step.view))
            sent = [m.clipped_from if m.is_clipped_copy else m.id for m in view if m.kind != "note"]
            assert all(mid in held for mid in sent), (session.source, step.request)


@pytest.fixture(scope="module")
def rewinding():
    if not REWINDING.is_file():
        pytest.skip(f"corpus file not present at {REWINDING}")
    return load_session(str(REWINDING))


def test_none_costs_what_the_recording_is_modelled_to_cost_on_a_claude_code_session_with_rewinds(rewinding):
    measure = Layouts(Measure(rewinding, Policy()))
    recorded = run_strategy(rewinding, "recorded", measure).totals()
    nothing = run_strategy(rewinding, "none", measure).totals()
    assert nothing["modelled_cost_usd"] == recorded["modelled_cost_usd"]
    assert nothing["peak"] == recorded["peak"] == 122_031  # none's was 127,112: the abandoned branch stayed


def carried_after_the_rewind(session: Session, strategy: str, measure) -> list[tuple[int, str]]:
    """(request, id) for every abandoned message a strategy's view holds (itself or clipped) where the recording's
    view no longer did."""
    abandoned = abandoned_ids(session)
    recorded = [set(ids(v)) for v in recorded_views(session)]
    late = []
    for step in STRATEGIES[strategy](session, measure):
        for m in step.view:
            mid = m.clipped_from if m.is_clipped_copy else m.id
            if mid in abandoned and mid not in recorded[step.request]:
                late.append((step.request, mid))
    return late


@pytest.mark.parametrize("strategy", ["none", "band", "compaction", "adr"])
def test_no_strategy_carries_an_abandoned_message_after_the_recording_dropped_it(rewinding, strategy):
    measure = Layouts(Measure(rewinding, Policy(max_input_tokens=60_000, prompt_caching=True)))
    assert carried_after_the_rewind(rewinding, strategy, measure) == []


def test_adr_that_never_folds_sends_the_recorded_views_with_a_rewind(rewinding):
    # the fold's working session is fed as the strategies are: not with every record message up to each answer,
    # which held the abandoned branch and messages no request carried
    measure = Layouts(Measure(rewinding, Policy(max_input_tokens=10_000_000)))
    run = run_strategy(rewinding, "adr", measure, keep_views=True)
    assert sum(r.folds for r in run.rows) == 0
    assert [ids(v) for v in run.views] == [ids(v) for v in recorded_views(rewinding)]


@hs.composite
def rewinding_sessions(draw) -> Session:
    """A system, a task, then rounds of an answer, a call and its result; before some requests the user rewinds the
    view to an earlier message (and may write a new prompt), as Claude Code's reader records it: a `branch` event
    naming the abandoned messages. No notes, no clips, no compaction."""
    record = [
        Message("sys", "system", 0.0, {"system_message": "You are a careful agent. " + words(1, 300)}),
        Message("task", "instruction", 0.0, {"instruction": "Do the task. " + words(2, 40)}),
    ]
    view = [m.id for m in record]
    trace, events = [], []
    for r in range(draw(hs.integers(2, 12))):
        if r and draw(hs.booleans()):
            cut = draw(hs.integers(2, len(view)))
            if cut < len(view):
                events.append({"kind": "branch", "action": "rewind", "at_request": r, "abandoned": view[cut:], "kept": view[:cut]})
                view = view[:cut]
            if draw(hs.booleans()):
                record.append(Message(f"p{r}", "instruction", r * 10.0, {"instruction": f"Instead: {words(r + 50, 20)}"}))
                view.append(record[-1].id)
        answer = Message(f"a{r}", "assistant", r * 10.0, {"assistant_response": f"Step {r}."})
        trace.append(Request(r, tuple(view), answer.id, None, r * 10.0))
        record += [
            answer,
            Message(f"c{r}", "action_request", r * 10.0, {"function": "read", "arguments": {"n": r}}),
            Message(f"o{r}", "action_response", r * 10.0, {"function": "read", "arguments": {"n": r}, "output": words(r + 3, 150)}),
        ]
        view += [m.id for m in record[-3:]]
    return Session(record=FullRecord(record), view=view, format="test", trace=trace, model="claude-haiku-5-5", events=events)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rewinding_sessions())
def test_none_sends_and_costs_the_recorded_views_on_any_session_with_rewinds(session):
    assert [ids(step.view) for step in none(session, None)] == [ids(v) for v in recorded_views(session)]
    measure = Layouts(under(session, caching=True))
    recorded = run_strategy(session, "recorded", measure, prices=HAIKU).totals()
    assert run_strategy(session, "none", measure, prices=HAIKU).totals()["modelled_cost_usd"] == recorded["modelled_cost_usd"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rewinding_sessions(), hs.sampled_from(["band", "compaction", "adr"]))
def test_a_folding_strategy_drops_what_a_rewind_dropped_on_any_session(session, strategy):
    full = Layouts(under(session)).estimate([m for m in session.record])
    measure = Layouts(under(session, ceiling=max(2_000, full // 3)))
    assert carried_after_the_rewind(session, strategy, measure) == []


def test_a_message_a_rewind_dropped_leaves_at_the_request_the_recording_dropped_it(rewinding):
    dropped = {mid: k for k, (_, gone) in enumerate(arrivals(rewinding)) for mid in gone}
    recorded = [set(ids(v)) for v in recorded_views(rewinding)]
    assert dropped  # the rewind at line 20 took the messages of lines 5 to 19 out of request 4's view
    for mid, k in dropped.items():
        assert mid in recorded[k - 1] and mid not in recorded[k]


def test_the_modelled_recording_shows_its_one_hour_writes_as_every_strategy_is_modelled_to_make_them(rewinding):
    # One rule places the marks for every strategy (ADR-0127 D5: one hour on the stable head), the recorded views'
    # model included; the bill's one-hour writes are the provider's (Claude Code wrote five-minute marks only).
    from foldscope.core.readout.replay_facts import BILL_LABEL, MODELLED_LABEL, beside_bill

    runs = [run_strategy(rewinding, name, Layouts(Measure(rewinding, Policy()))) for name in ("recorded", "none")]
    columns = dict(beside_bill([r.totals() for r in runs]))
    one_hour = sum(r.modelled_cache_write_1h for r in runs[0].rows)
    assert one_hour > 0 and columns[BILL_LABEL]["cache_write_1h"] == 0
    assert columns[MODELLED_LABEL]["cache_write_1h"] == one_hour == columns["none"]["cache_write_1h"]
